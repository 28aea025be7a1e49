"""Noise against a real drop: false blocks, detection and calls, for repeats 1, 3 and auto.

A noisy model (a `python` system whose case passes with its own probability, drawn from a
generator seeded by the side, the case id and the repeat) is run through the real commands on
a temp checkout: `gate run` for each side (all trials at once, a trial's cases have their own
ids), `gate compare` for each trial, and for `repeats: auto` the flow's own round logic
(`gate.flow.adaptive.Round`: which cases get more runs, when to stop) driving
`gate run --append --cases-from` on both sides, round after round. Each trial is one PR: a
no-op PR (same probabilities, fresh noise) or a real drop. Threshold 3, alpha 0.05.

Models:
- issue: 200 cases, 140 at p = .97, 40 at .5, 20 at .05; the drop moves 20 easy cases to .5
  (a true drop of 4.7 points);
- steady: 300 cases as many real suites look, 200 always pass, 40 never, 45 at .85, 15 at .3;
  the drop moves 30 of the .85 cases to .35 (a true drop of 5.0 points).

The oracle floor is the Neyman allocation of 3 calls per case and side with the probabilities
known (runs proportional to each case's standard deviation; normal approximation).

    python benchmarks/trust.py [--trials K] [--models issue,steady] [--settings 1,3,auto]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from statistics import NormalDist

from gate.cli import main as gate_main
from gate.flow.adaptive import Round, record, start
from gate.inputs.config import load_config
from gate.inputs.policy import Policy
from gate.report.io import dump_line, read_report, write_report
from gate.report.models import Report

THRESHOLD = 3.0
APP = """
import json
import random
from pathlib import Path

MODEL = json.loads((Path(__file__).parent / "model.json").read_text())


def answer(inputs, repeat=0):
    case = inputs["id"].split("-", 1)[1]
    p = MODEL["p"][case]
    draw = random.Random(f"{MODEL['seed']}:{inputs['id']}:{repeat}").random()
    return "yes" if draw < p else "no"
"""


def models() -> dict[str, tuple[list[float], list[float]]]:
    issue = [0.97] * 140 + [0.5] * 40 + [0.05] * 20
    issue_drop = [0.5] * 20 + issue[20:]
    steady = [1.0] * 200 + [0.0] * 40 + [0.85] * 45 + [0.3] * 15
    steady_drop = steady[:200] + [0.0] * 40 + [0.35] * 30 + [0.85] * 15 + [0.3] * 15
    return {"issue": (issue, issue_drop), "steady": (steady, steady_drop)}


BUDGET: dict[str, float] = {}  # max_repeats, max_calls per case (from the command line)


def checkout(root: Path, probs: list[float], seed: int, trials: int, repeats: str) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    (root / "model.json").write_text(
        json.dumps({"seed": seed, "p": {f"c{i:03d}": p for i, p in enumerate(probs)}})
    )
    rows = [
        {
            "id": f"t{t:03d}-c{i:03d}",
            "task": "noisy",
            "input": {},
            "expect": {"must_include": ["yes"]},
        }
        for t in range(trials)
        for i in range(len(probs))
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "threshold": THRESHOLD,
        "repeats": repeats if repeats == "auto" else int(repeats),
        "concurrency": 16,
        "cache": {"enabled": False},
        **({"max_repeats": BUDGET["max_repeats"]} if "max_repeats" in BUDGET else {}),
        **({"max_calls": int(BUDGET["max_calls"] * len(probs))} if "max_calls" in BUDGET else {}),
        "suites": [
            {
                "name": "noisy",
                "cases": "cases.jsonl",
                "system": {"kind": "python", "target": "app:answer"},
            }
        ],
    }
    (root / "gate.yml").write_text(json.dumps(config))
    return root


def gate_run(root: Path, out: Path, label: str, *more: str) -> None:
    argv = [
        sys.executable,
        "-P",
        "-m",
        "gate",
        "run",
        "-c",
        str(root / "gate.yml"),
        "--root",
        str(root),
    ]
    argv += ["--out", str(out), "--label", label, "-q", *more]
    subprocess.run(argv, cwd=root, check=True, capture_output=True, text=True)


def both(base: Path, head: Path, out: Path, *more: str) -> None:
    with ThreadPoolExecutor(2) as pool:
        list(
            pool.map(
                lambda side: gate_run(*side, *more), [(base, out, "base"), (head, out, "head")]
            )
        )


def split(report: Report, folder: Path, trials: int) -> list[Report]:
    """One report per trial (its cases), as `gate compare` and the round logic read them."""
    parts: list[list] = [[] for _ in range(trials)]
    for result in report.results:
        parts[int(result.id[1:4])].append(result)
    out = []
    for t, results in enumerate(parts):
        path = folder / f"{report.meta.label}.t{t:03d}.jsonl"
        out.append(Report(meta=report.meta, results=results, path=path))
    return out


def write(report: Report) -> None:
    write_report(report.path, report.meta, (dump_line(r) for r in report.results))


def compare_json(base: Path, head: Path) -> dict:
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink):
        gate_main(
            ["compare", str(base), str(head), "--format", "json", "--threshold", str(THRESHOLD)]
        )
    return json.loads(sink.getvalue())


def adaptive(base_root: Path, head_root: Path, out: Path, trials: int) -> None:
    """The flow's rounds for every trial at once: each trial decides for itself, the runs of
    all trials that go on are one `gate run --append` per side."""
    config = load_config(head_root / "gate.yml").config
    policy = Policy.from_config(config)
    bases = split(read_report(out / "base.jsonl"), out, trials)
    heads = split(read_report(out / "head.jsonl"), out, trials)
    states: list[Round] = [start(config, b, h) for b, h in zip(bases, heads, strict=True)]
    round_index = 0
    while True:
        chosen: list[str] = []
        sizes = set()
        for t, state in enumerate(states):
            if state.stop is not None:
                continue
            ids, size = state.next(bases[t], heads[t], policy)
            if state.stop is None:
                chosen += ids
                sizes.add(size)
        if not chosen:
            break
        assert len(sizes) == 1, sizes  # the trials' rounds run in step
        listing = out / f"round-{round_index + 1}.txt"
        listing.write_text("".join(f"{i}\n" for i in chosen))
        both(
            base_root,
            head_root,
            out,
            "--cases-from",
            str(listing),
            "--append",
            "--repeats",
            str(sizes.pop()),
        )
        round_index += 1
        for state in states:
            if state.stop is None:
                state.rounds += 1
        bases = split(read_report(out / "base.jsonl"), out, trials)
        heads = split(read_report(out / "head.jsonl"), out, trials)
    for state, b, h in zip(states, bases, heads, strict=True):
        record(state, b, h)


def trial_reports(out: Path, trials: int) -> Iterator[tuple[Path, Path]]:
    bases = split(read_report(out / "base.jsonl"), out, trials)
    heads = split(read_report(out / "head.jsonl"), out, trials)
    for b, h in zip(bases, heads, strict=True):
        if not b.path.exists():
            write(b)
            write(h)
        yield b.path, h.path


def measure(work: Path, model: str, row: str, setting: str, trials: int) -> dict:
    base_p, head_p = models()[model]
    head_probs = base_p if row == "no-op" else head_p
    folder = work / f"{model}-{row}-{setting}"
    base_root = checkout(folder / "base", base_p, 1, trials, setting)
    head_root = checkout(folder / "head", head_probs, 2, trials, setting)
    out = folder / "reports"
    both(base_root, head_root, out)
    if setting == "auto":
        adaptive(base_root, head_root, out, trials)
    verdicts, deltas, calls = [], [], []
    for base, head in trial_reports(out, trials):
        c = compare_json(base, head)
        verdicts.append(c["verdict"])
        deltas.append(c["delta_points"])
        calls.append((c["base_usage"]["calls"] + c["head_usage"]["calls"]) / (2 * c["paired"]))
    n = len(base_p)
    truth = 100 * (sum(head_probs) - sum(base_p)) / n
    return {
        "fail": sum(v == "fail" for v in verdicts) / trials,
        "calls": sum(calls) / trials,
        "mean_delta": sum(deltas) / trials,
        "truth": truth,
    }


def oracle(model: str, calls: float = 3.0) -> tuple[float, float]:
    """False blocks and detection of the Neyman allocation of `calls` per case and side."""
    base_p, head_p = models()[model]
    n = len(base_p)

    def side_var(probs: list[float]) -> float:
        sds = sum(math.sqrt(p * (1 - p)) for p in probs)
        return sds**2 / (calls * n) / n**2

    def p_block(probs: list[float]) -> float:
        mean = (sum(probs) - sum(base_p)) / n
        sd = math.sqrt(side_var(base_p) + side_var(probs))
        return NormalDist().cdf((-THRESHOLD / 100 - mean) / sd)

    return p_block(base_p), p_block(head_p)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=100, help="PRs per row (default 100)")
    parser.add_argument("--models", default="issue,steady")
    parser.add_argument("--settings", default="1,3,auto")
    parser.add_argument("--max-repeats", type=int, help="repeats: auto: override max_repeats")
    parser.add_argument("--max-calls", type=float, help="repeats: auto: calls per case and side")
    args = parser.parse_args()
    if args.max_repeats:
        BUDGET["max_repeats"] = args.max_repeats
    if args.max_calls:
        BUDGET["max_calls"] = args.max_calls
    print(f"{args.trials} trials per row, threshold {THRESHOLD:g}, alpha 0.05\n")
    header = (
        f"{'model':8} {'repeats':8} {'false blocks':>12} {'drop caught':>12} "
        f"{'calls/case/side (no-op, drop)':>30} {'mean Δ no-op':>13} {'mean Δ drop (truth)':>21}"
    )
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="gate-trust-") as tmp:
        for model in args.models.split(","):
            for setting in args.settings.split(","):
                started = time.perf_counter()
                noop = measure(Path(tmp), model, "no-op", setting, args.trials)
                drop = measure(Path(tmp), model, "drop", setting, args.trials)
                print(
                    f"{model:8} {setting:8} {noop['fail']:>12.1%} {drop['fail']:>12.1%} "
                    f"{noop['calls']:>14.2f}, {drop['calls']:<14.2f} {noop['mean_delta']:>+13.2f} "
                    f"{drop['mean_delta']:>+13.2f} ({drop['truth']:+.2f})"
                    f"   [{time.perf_counter() - started:.0f} s]",
                    flush=True,
                )
            false_block, caught = oracle(model)
            print(
                f"{model:8} {'oracle':8} {false_block:>12.1%} {caught:>12.1%} "
                f"{3.0:>14.2f}, {3.0:<14.2f}   (Neyman allocation, p known; the floor)"
            )


if __name__ == "__main__":
    main()
