"""Noise against a real drop: false blocks, detection and calls, for repeats 1, 3 and auto.

A noisy model (a `python` system whose case passes with its own probability, drawn from a
generator seeded by the side, the case id and the repeat) is run through the real commands on
a temp checkout: the flow's own runner process for each side (`gate.flow.sides`: a batch of
trials at once, a trial's cases have their own ids), and for `repeats: auto` the flow's own
round logic (`gate.flow.adaptive`: which cases get more runs, the drop test's looks, when to
stop) asking both runners for more runs of some cases, round after round. Each trial is one PR: a
no-op PR (same probabilities, fresh noise) or a real drop. Each suite of a trial is compared
by `gate compare`'s comparison (`gate.compare.pairing.compare`, in process) at its share of
the PR's false-block rate, and the suites of a PR by the flow's Holm steps
(`gate.compare.droptest.split_levels`). The policy is the default one with threshold 3.

Models:
- issue: one suite of 200 cases, 140 at p = .97, 40 at .5, 20 at .05; the drop moves 20 easy
  cases to .5 (a true drop of 4.7 points);
- steady: one suite of 300 cases as many real suites look, 200 always pass, 40 never, 45 at
  .85, 15 at .3; the drop moves 30 of the .85 cases to .35 (a true drop of 5.0 points);
- 4x100: four suites of 100 cases, each 70 at .97, 20 at .5, 10 at .05; the drop moves 10
  easy cases of one suite to .5 (a true drop of 4.7 points in that suite).

The oracle rows are the Neyman allocation of a fixed number of calls per case and side with
the base's probabilities known (runs proportional to each case's standard deviation; normal
approximation), blocking on the estimate alone (below −threshold).

    python benchmarks/trust.py [--trials K] [--batch B] [--models issue,steady,4x100]
        [--settings 1,3,auto] [--set key=value ...] [--rows no-op|drop --first N]

`--rows` and `--first` run a part of a row (its trials from N on, their own seeds), so that
parts can run side by side and their counts be added up.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from gate.compare.droptest import split_levels
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.flow.adaptive import Round, record, start
from gate.flow.sides import SideProcess, run_round, start_sides
from gate.inputs.config import load_config
from gate.inputs.policy import Policy
from gate.report.models import Report
from gate.run.protocol import RunMore
from gate.run.side import spec_of_config

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


@dataclass(frozen=True)
class Model:
    """A PR's suites: each suite's base probabilities, and the head's of the real drop."""

    base: list[list[float]]
    drop: list[list[float]]


def _issue(n: int) -> tuple[list[float], list[float]]:
    base = [0.97] * (7 * n // 10) + [0.5] * (2 * n // 10) + [0.05] * (n // 10)
    return base, [0.5] * (n // 10) + base[n // 10 :]


def models() -> dict[str, Model]:
    issue, issue_drop = _issue(200)
    small, small_drop = _issue(100)
    steady = [1.0] * 200 + [0.0] * 40 + [0.85] * 45 + [0.3] * 15
    steady_drop = steady[:240] + [0.35] * 30 + [0.85] * 15 + [0.3] * 15
    return {
        "issue": Model([issue], [issue_drop]),
        "steady": Model([steady], [steady_drop]),
        "4x100": Model([small] * 4, [small_drop] + [small] * 3),
    }


OVERRIDES: dict[str, object] = {}  # policy keys from the command line (--set)


def _case_key(suite: int, case: int) -> str:
    return f"s{suite}-c{case:03d}"


def checkout(root: Path, suites: list[list[float]], seed: int, trials: range, repeats: str) -> Path:
    root.mkdir(parents=True)
    (root / "app.py").write_text(APP)
    p = {_case_key(s, i): q for s, probs in enumerate(suites) for i, q in enumerate(probs)}
    (root / "model.json").write_text(json.dumps({"seed": seed, "p": p}))
    rows = [
        {
            "id": f"t{t:03d}-{_case_key(s, i)}",
            "task": "noisy",
            "input": {},
            "expect": {"must_include": ["yes"]},
        }
        for t in trials
        for s, probs in enumerate(suites)
        for i in range(len(probs))
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "threshold": THRESHOLD,
        **OVERRIDES,
        "repeats": repeats if repeats == "auto" else int(repeats),
        "concurrency": 16,
        "cache": {"enabled": False},
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


def runners(base: Path, head: Path) -> list[SideProcess]:
    """The flow's runner process of each side, alive for the whole batch."""
    specs = []
    for side, root in (("base", base), ("head", head)):
        loaded = load_config(root / "gate.yml")
        spec = spec_of_config(
            loaded, loaded.config.suites[0], root, label=side, cache_dir=None, show_progress=False
        )
        specs.append(spec.model_copy(update={"side": side}))
    return start_sides(specs, dict(os.environ), io.StringIO())


def reports_of(sides: list[SideProcess], out: Path) -> tuple[Report, Report]:
    base, head = (side.report() for side in sides)
    return (
        Report(meta=base.meta, results=base.results, path=out / "base.jsonl"),
        Report(meta=head.meta, results=head.results, path=out / "head.jsonl"),
    )


def split(report: Report, folder: Path) -> dict[tuple[int, int], Report]:
    """One report per (trial, suite), as the round logic and the comparison read them."""
    parts: dict[tuple[int, int], list] = {}
    for result in report.results:
        trial, suite = int(result.id[1:4]), int(result.id.split("-")[1][1:])
        parts.setdefault((trial, suite), []).append(result)
    return {
        key: Report(
            meta=report.meta,
            results=results,
            path=folder / f"{report.meta.label}.t{key[0]:03d}.s{key[1]}.jsonl",
        )
        for key, results in parts.items()
    }


def adaptive(
    sides: list[SideProcess], out: Path, policy: Policy, level: float
) -> dict[tuple[int, int], tuple[Report, Report]]:
    """The flow's rounds for every (trial, suite) at once: each decides for itself, the runs
    of all that go on are one request to each side's runner."""
    base, head = reports_of(sides, out)
    bases, heads = split(base, out), split(head, out)
    states: dict[tuple[int, int], Round] = {
        key: start(policy, level, bases[key], heads[key]) for key in bases
    }
    live = set(states)
    while live:
        chosen: list[str] = []
        sizes = set()
        for key in sorted(live):
            ids, size = states[key].next(bases[key], heads[key])
            if ids:
                chosen += ids
                sizes.add(size)
            else:
                live.discard(key)
        if not chosen:
            break
        assert len(sizes) == 1, sizes  # the rounds run in step
        run_round(sides, RunMore(ids=chosen, repeats=sizes.pop()))
        for key in live:
            states[key].rounds += 1
        base, head = reports_of(sides, out)
        bases, heads = split(base, out), split(head, out)
    for key, state in states.items():
        record(state, bases[key], heads[key])
    return {key: (bases[key], heads[key]) for key in bases}


def fixed(sides: list[SideProcess], out: Path) -> dict[tuple[int, int], tuple[Report, Report]]:
    base, head = reports_of(sides, out)
    bases, heads = split(base, out), split(head, out)
    return {key: (bases[key], heads[key]) for key in bases}


def judge_pr(pairs: list[tuple[Report, Report]], policy: Policy, level: float) -> list[Comparison]:
    """The suites of one PR, each at its share, then Holm's steps over them (as the flow)."""
    judged = [compare(b, h, policy, level) for b, h in pairs]
    tests = [(c.drop_test, c.delta_points) for c in judged]
    for index, raised in split_levels(tests, policy.false_block_rate, policy.threshold).items():
        if raised > level and judged[index].verdict != "fail":
            b, h = pairs[index]
            judged[index] = compare(b, h, policy, raised)
    return judged


@dataclass
class Tally:
    blocked: int = 0
    inconclusive: int = 0
    prs: int = 0
    calls: float = 0.0
    delta: float = 0.0

    def add(self, judged: list[Comparison], policy: Policy) -> None:
        verdicts = [c.verdict for c in judged]
        blocks = "fail" in verdicts or (
            "inconclusive" in verdicts and policy.inconclusive == "block"
        )
        self.blocked += blocks
        self.inconclusive += "inconclusive" in verdicts
        self.prs += 1
        cases = sum(c.paired for c in judged)
        self.calls += sum(c.base_usage.calls + c.head_usage.calls for c in judged) / (2 * cases)
        self.delta += judged[0].delta_points or 0.0


def batches(trials: range, size: int) -> Iterator[range]:
    for first in range(trials.start, trials.stop, size):
        yield range(first, min(trials.stop, first + size))


def measure(work: Path, model: str, row: str, setting: str, trials: range, batch: int) -> Tally:
    spec = models()[model]
    tally = Tally()
    for part in batches(trials, batch):
        folder = work / f"{model}-{row}-{setting}-{part.start}"
        heads = spec.base if row == "no-op" else spec.drop
        base_root = checkout(folder / "base", spec.base, 1 + part.start, part, setting)
        head_root = checkout(folder / "head", heads, 2 + part.start, part, setting)
        out = folder / "reports"
        sides = runners(base_root, head_root)
        try:
            run_round(sides, RunMore(repeats=sides[0].spec.measure.repeats), first=True)
            policy = Policy.from_config(load_config(head_root / "gate.yml").config)
            level = policy.false_block_rate / len(spec.base)
            reports = (
                adaptive(sides, out, policy, level) if setting == "auto" else fixed(sides, out)
            )
        finally:
            for side in sides:
                side.close()
        for trial in part:
            pairs = [reports[(trial, s)] for s in range(len(spec.base))]
            tally.add(judge_pr(pairs, policy, level), policy)
    return tally


def oracle(model: str, calls: float) -> tuple[float, float]:
    """False blocks and detection of the Neyman allocation of `calls` per case and side for
    the base's known probabilities (normal approximation; the estimate alone blocks)."""
    spec = models()[model]

    def blocked(heads: list[list[float]]) -> float:
        clear = 1.0
        for base, head in zip(spec.base, heads, strict=True):
            n, spreads = len(base), [math.sqrt(p * (1 - p)) for p in base]
            runs = [calls * n * s / sum(spreads) for s in spreads]
            pairs = zip(base, head, runs, strict=True)
            terms = [(p * (1 - p) + q * (1 - q), r) for p, q, r in pairs]
            variance = sum(v / r for v, r in terms if v > 0) / n**2  # steady cases: no noise
            mean = (sum(head) - sum(base)) / n
            clear *= 1 - NormalDist().cdf((-THRESHOLD / 100 - mean) / math.sqrt(variance))
        return 1 - clear

    return blocked(spec.base), blocked(spec.drop)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="PRs per row (default 200)")
    parser.add_argument("--batch", type=int, default=50, help="PRs run together (default 50)")
    parser.add_argument("--models", default="issue,steady,4x100")
    parser.add_argument("--settings", default="1,3,auto")
    parser.add_argument("--set", action="append", default=[], help="a policy key, key=value")
    parser.add_argument("--rows", default="no-op,drop", help="which PRs (default both)")
    parser.add_argument(
        "--first", type=int, default=0, help="the first trial (its seeds): a part of a run"
    )
    args = parser.parse_args()
    OVERRIDES.update((k, json.loads(v)) for k, v in (item.split("=", 1) for item in args.set))
    print(f"{args.trials} PRs per row, threshold {THRESHOLD:g}, policy overrides {OVERRIDES}\n")
    header = (
        f"{'model':7} {'repeats':8} {'false blocks':>12} {'drop caught':>12} "
        f"{'calls/case/side (no-op, drop)':>30} {'inconclusive (no-op, drop)':>27} "
        f"{'mean Δ no-op':>13} {'mean Δ drop':>12}"
    )
    print(header)
    print("-" * len(header))
    trials = range(args.first, args.first + args.trials)
    with tempfile.TemporaryDirectory(prefix="gate-trust-") as tmp:
        for model in args.models.split(","):
            for setting in args.settings.split(","):
                started = time.perf_counter()
                rows = {
                    row: measure(Path(tmp), model, row, setting, trials, args.batch)
                    for row in args.rows.split(",")
                }
                print(_row(model, setting, rows, time.perf_counter() - started), flush=True)
            for calls in (3.0, 8.6):
                false_block, caught = oracle(model, calls)
                print(
                    f"{model:7} {'oracle':8} {false_block:>12.1%} {caught:>12.1%} "
                    f"{calls:>14.2f}, {calls:<14.2f}   (Neyman allocation, p known; the floor "
                    "of a fixed budget)"
                )


def _row(model: str, setting: str, rows: dict[str, Tally], seconds: float) -> str:
    """One line of the table; with one kind of PR (`--rows`) its counts, to add up parts."""
    if set(rows) != {"no-op", "drop"}:
        return "".join(
            f"{model} {setting} {row}: blocked {t.blocked}/{t.prs}, inconclusive "
            f"{t.inconclusive}, calls {t.calls / t.prs:.3f}, mean Δ {t.delta / t.prs:+.3f}   "
            f"[{seconds:.0f} s]"
            for row, t in rows.items()
        )
    noop, drop = rows["no-op"], rows["drop"]
    return (
        f"{model:7} {setting:8} {noop.blocked / noop.prs:>12.1%} "
        f"{drop.blocked / drop.prs:>12.1%} {noop.calls / noop.prs:>14.2f}, "
        f"{drop.calls / drop.prs:<14.2f} {noop.inconclusive / noop.prs:>13.1%}, "
        f"{drop.inconclusive / drop.prs:<12.1%} {noop.delta / noop.prs:>+13.2f} "
        f"{drop.delta / drop.prs:>+12.2f}   [{seconds:.0f} s]"
    )


if __name__ == "__main__":
    main()
