"""Engine overhead: N text-checked cases against a `python` system that answers instantly.

Prints cases/s for the whole `gate run` (process start included) and for the engine alone.
Target: >= 1,000 cases/s on a 2-core machine.  Usage: python benchmarks/engine.py [N]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

APP = "def answer(inputs):\n    return {'text': 'Register with the CAC first. ' + inputs['q']}\n"


def make_project(root: Path, n: int) -> None:
    (root / "app.py").write_text(APP)
    with (root / "cases.jsonl").open("w") as handle:
        for i in range(n):
            case = {
                "id": f"case-{i:05}",
                "task": f"task{i % 7}",
                "input": {"q": f"question {i}"},
                "expect": {
                    "must_include": ["CAC"],
                    "must_not_include": ["lawyer"],
                    "regex": [r"question \d+"],
                    "max_chars": 200,
                },
            }
            handle.write(json.dumps(case) + "\n")
    (root / "gate.yml").write_text(
        "cases: cases.jsonl\nsystem: {kind: python, target: 'app:answer'}\nconcurrency: 8\n"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        make_project(root, n)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "gate", "run", "-q", "--out", "out", "--label", "bench"],
            cwd=root,
            check=True,
        )
        wall = time.perf_counter() - started
        summary = json.loads((root / "out/bench.summary.json").read_text())
        startup_started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "gate", "--version"], check=True, capture_output=True)
        startup = time.perf_counter() - startup_started
    assert summary["n"] == n and summary["passed"] == n, summary
    engine = summary["duration_s"]
    print(f"cases: {n}")
    print(f"gate run wall time: {wall:.2f} s  -> {n / wall:,.0f} cases/s end to end")
    print(f"engine time (run loop, checks, report): {engine:.2f} s -> {n / engine:,.0f} cases/s")
    print(f"interpreter + gate start-up: {startup:.2f} s")
    print(f"target >= 1,000 cases/s: {'met' if n / wall >= 1000 else 'NOT met'}")


if __name__ == "__main__":
    main()
