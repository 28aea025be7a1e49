"""Benchmark `gate compare` on two 10,000-case reports: wall time and peak memory.

Targets: under 2 s and under 250 MB per run. Each run is a fresh `gate compare` process (what
CI pays, interpreter start-up and imports included); peak RSS comes from `wait4` on that child.

    python benchmarks/compare.py [--cases N] [--runs K]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gate.report.checks import CheckResult, PhraseResult, PlainResult
from gate.report.io import ReportWriter
from gate.report.models import Attempt, CaseResult, RunMeta, Tokens

TASKS = ["faq", "billing", "coding", "legal", "onboarding", "cards", "transfers", "kyc"]


def _answer(rng: random.Random) -> str:
    words = ["account", "CAC", "transfer", "fee", "@support", "|", "`code`", "<b>", "card"]
    return " ".join(rng.choice(words) for _ in range(rng.randint(40, 160)))


def _result(rng: random.Random, i: int, status: str, repeats: int) -> CaseResult:
    checks: list[CheckResult] = [
        PhraseResult(
            kind="include",
            name="include:CAC",
            passed=status != "fail",
            detail="" if status != "fail" else 'missing "CAC"',
            phrase="CAC",
        ),
        PlainResult(kind="max_chars", name="max_chars:800", passed=True),
    ]
    attempts = []
    if repeats > 1:
        attempts = [
            Attempt(
                repeat=r,
                status=status if r else rng.choice(["pass", status]),  # type: ignore[arg-type]
                latency_ms=rng.uniform(200, 2500),
                tokens=Tokens(prompt=rng.randint(200, 900), completion=rng.randint(20, 400)),
                cost_usd=0.0004,
            )
            for r in range(repeats)
        ]
    passes = sum(a.status == "pass" for a in attempts) if attempts else int(status == "pass")
    return CaseResult(
        id=f"{TASKS[i % len(TASKS)]}-{i:05d}",
        task=TASKS[i % len(TASKS)],
        severity="blocker" if i % 500 == 0 else "major",
        status=status,  # type: ignore[arg-type]
        passed=status == "pass",
        checks=checks if status != "error" else [],
        latency_ms=rng.uniform(200, 2500),
        tokens=Tokens(prompt=rng.randint(200, 900), completion=rng.randint(20, 400)),
        cost_usd=0.0004 * repeats,
        output=_answer(rng) if status != "error" else None,
        error="system error: HTTP 503 after 5 retries" if status == "error" else None,
        repeats=repeats,
        pass_fraction=passes / max(len(attempts), 1),
        flaky=bool(attempts) and len({a.status for a in attempts}) > 1,
        attempts=attempts,
        file="cases/suite.jsonl",
        line=i + 1,
        index=i,
    )


def build(folder: Path, label: str, n: int, seed: int, drop: float, repeats: int) -> Path:
    """A report where a fraction `drop` of the base's passes fail on this side."""
    rng = random.Random(seed)
    meta = RunMeta(label=label, suite="bench", git_sha=f"{seed:040x}", repeats=repeats, n_cases=n)
    writer = ReportWriter(folder, label)
    writer.open(meta)
    base_rng = random.Random(1)
    for i in range(n):
        status = "pass" if base_rng.random() > 0.08 else "fail"
        if drop and status == "pass" and rng.random() < drop:
            status = "fail"
        if rng.random() < 0.01:
            status = "error"
        writer.write(_result(rng, i, status, repeats))
    writer.close(meta)
    return writer.jsonl


def measure(args: list[str]) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of one fresh `gate` process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - started
    return elapsed, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scenarios = []
        for repeats in (1, 3):
            started = time.perf_counter()
            base = build(folder, f"base{repeats}", options.cases, 1, 0.0, repeats)
            head = build(folder, f"head{repeats}", options.cases, 2, 0.05, repeats)
            took = time.perf_counter() - started
            size = (base.stat().st_size + head.stat().st_size) / 2**20
            print(
                f"built 2 x {options.cases:,} cases, repeats={repeats}: "
                f"{size:.1f} MB in {took:.1f} s"
            )
            scenarios.append((repeats, base, head))
        print(f"{'scenario':<28}{'median s':>10}{'max s':>8}{'peak MB':>9}{'exit':>6}")
        for repeats, base, head in scenarios:
            for fmt in ("markdown", "json", "junit"):
                runs = [
                    measure(["compare", str(base), str(head), "--format", fmt])
                    for _ in range(options.runs)
                ]
                times = [r[0] for r in runs]
                name = f"repeats={repeats} {fmt}"
                print(
                    f"{name:<28}{statistics.median(times):>10.2f}{max(times):>8.2f}"
                    f"{max(r[1] for r in runs):>9.0f}{runs[0][2]:>6}"
                )
        startup = [measure(["--version"])[0] for _ in range(options.runs)]
        print(f"{'gate --version (start-up)':<28}{statistics.median(startup):>10.2f}")


if __name__ == "__main__":
    main()
