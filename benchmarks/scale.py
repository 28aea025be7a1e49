"""10,000-case suites: wall time and peak memory of `gate run`, `gate merge`, `gate compare`.

Targets: peak RSS < 250 MB for each; `gate compare` of two 10,000-case reports < 2 s.
Usage: python benchmarks/scale.py [N]   (also runs N/10 to show memory stays flat)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

APP = (
    "def answer(inputs):\n"
    "    n = inputs['n']\n"
    "    return {'text': f'answer {n}: ' + ('CAC registration' if n % 10 else 'unknown')}\n"
)


def write_cases(path: Path, n: int, **expect: object) -> None:
    """N text-checked cases in 12 tasks (shared with shards_flow.py)."""
    with path.open("w") as handle:
        for i in range(n):
            case = {
                "id": f"case-{i:05}",
                "task": f"task{i % 12}",
                "input": {"n": i},
                "expect": {"must_include": ["CAC"], "regex": [r"answer \d+"], **expect},
            }
            handle.write(json.dumps(case) + "\n")


def make_project(root: Path, n: int, variant: str) -> None:
    (root / "app.py").write_text(APP if variant == "base" else APP.replace("% 10", "% 9"))
    write_cases(root / "cases.jsonl", n, max_chars=300)
    (root / "gate.yml").write_text(
        "cases: cases.jsonl\nsystem: {kind: python, target: 'app:answer'}\n"
    )


def measure(args: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MB, exit code) of one `gate` process."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def row(name: str, n: int, result: tuple[float, float, int]) -> None:
    wall, rss, code = result
    speed = f"{n / wall:8,.0f} cases/s"
    print(f"{name:<28} {n:>6} cases {wall:7.2f} s {speed}  peak RSS {rss:6.1f} MB  exit {code}")


def run_scale(n: int, shards: int = 4) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base, head = Path(tmp, "base"), Path(tmp, "head")
        for side in (base, head):
            side.mkdir()
            make_project(side, n, side.name)
        out = Path(tmp, "out")
        row(
            "gate run (base)", n, measure(["run", "-q", "--out", str(out), "--label", "base"], base)
        )
        row(
            "gate run (head)", n, measure(["run", "-q", "--out", str(out), "--label", "head"], head)
        )
        for i in range(1, shards + 1):
            measure(
                ["run", "-q", "--shard", f"{i}/{shards}", "--out", str(out), "--label", f"s{i}"],
                head,
            )
        parts = [str(out / f"s{i}.jsonl") for i in range(1, shards + 1)]
        row(
            f"gate merge ({shards} shards)",
            n,
            measure(["merge", *parts, "--out", str(out), "--label", "merged"], head),
        )
        row(
            "gate compare",
            n,
            measure(["compare", str(out / "base.jsonl"), str(out / "head.jsonl")], head),
        )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    for size in (n // 10, n):
        run_scale(size)
    print(
        "targets: peak RSS < 250 MB for each command; gate compare of two 10,000-case reports < 2 s"
    )


if __name__ == "__main__":
    main()
