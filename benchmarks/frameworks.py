"""What the gate adds to a suite of another framework: the same pytest suite and the same
inspect_ai task run plainly (`python -m pytest ARGS`, `inspect eval TASK`) and as one side of the
gate (`gate run`: the run folder copied from the checkout with the instrument laid over it, the
framework started in the system's confined worker, its results read back and written as a
report). Prints the median wall time of each over `--rounds` runs at two suite sizes, and the
gate's overhead split into a fixed part (per run) and a part per test or sample. inspect's
model is the tests' model server stand-in (OpenAI-compatible, on 127.0.0.1), so the numbers
are the tools' own, not a provider's latency.

    python benchmarks/frameworks.py [--tests 20,200] [--samples 10,100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.framework_projects import TESTS, files, samples  # noqa: E402
from helpers.servers.model_server import ModelServer  # noqa: E402


def project(root: Path, words: list[str]) -> None:
    for name, text in files().items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (root / "tests/evals/test_support.py").write_text(TESTS.format(words=words))
    (root / "evals/samples.jsonl").write_text(samples(words))
    (root / "prompts/support.md").write_text("".join(f"say: {w}\n" for w in words))


def timed(
    command: list[str], root: Path, env: dict[str, str], ok: tuple[int, ...] = (0, 1)
) -> tuple[float, float]:
    """Wall time, and the CPU time (user + system) of the whole process tree; a run that ends
    with another exit code than `ok` stops the benchmark (its time would be a failure's)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(command[:4])} failed ({done.returncode}):\n{done.stderr[-2000:]}"
        )
    return elapsed, cpu


def median_of(rounds: int, run: Callable[[], tuple[float, float]]) -> tuple[float, float]:
    runs = [run() for _ in range(rounds)]
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def row(name: str, what: str, sizes: list[int], plain: list[float], gated: list[float]) -> str:
    """The overhead at each size, and its split into a fixed part and a part per case (the
    slope between the smallest and the largest size)."""
    extra = [g - p for g, p in zip(gated, plain, strict=True)]
    slope = (extra[-1] - extra[0]) / (sizes[-1] - sizes[0])
    fixed = extra[0] - slope * sizes[0]
    pairs = zip(sizes, plain, gated, strict=True)
    at = ", ".join(f"{n}: {p:.2f} → {g:.2f} s" for n, p, g in pairs)
    return f"| {name} | {what} | {at} | {fixed:+.2f} s | {slope * 1000:+.1f} ms |"


def measure(
    name: str,
    sizes: list[int],
    rounds: int,
    root: Path,
    env: dict[str, str],
    commands: tuple[list[str], list[str]],
) -> str:
    plain: list[tuple[float, float]] = []
    gated: list[tuple[float, float]] = []
    # plain: as a user runs it from the repository root (the root importable, as `python -m
    # pytest` makes it and `pip install -e .` would for inspect); exit 0 or 1 (a test failed)
    # for pytest, 0 for inspect
    plain_env = {**env, "PYTHONPATH": f"{root}{os.pathsep}{env.get('PYTHONPATH', '')}"}
    ok = (0, 1) if name == "pytest" else (0,)
    for n in sizes:
        project(root, [f"w{i}" for i in range(n)])
        plain.append(median_of(rounds, lambda: timed(commands[0], root, plain_env, ok)))
        gated.append(median_of(rounds, lambda: timed(commands[1], root, env)))
    return "\n".join(
        row(name, what, sizes, [p[k] for p in plain], [g[k] for g in gated])
        for k, what in enumerate(("wall", "CPU"))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", default="20,200", help="suite sizes of the pytest runs")
    parser.add_argument("--samples", default="10,100", help="suite sizes of the inspect runs")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="gate-bench-frameworks-"))
    root.chmod(0o755)
    python = sys.executable
    gate = [python, "-m", "gate", "run", "-c", "gate.yml", "-q", "--out", "reports"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    pytest = [python, "-m", "pytest", "tests/evals", "-q", "-p", "no:cacheprovider"]
    sizes = [int(n) for n in args.tests.split(",")]
    rows = []
    try:
        rows.append(
            measure(
                "pytest", sizes, args.rounds, root, env, (pytest, [*gate, "--suite", "unit-evals"])
            )
        )
        if importlib.util.find_spec("inspect_ai") is not None:
            with ModelServer() as model:
                env |= {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_API_KEY": "sk-bench"}
                task = [
                    str(Path(python).with_name("inspect")), "eval", "evals/support.py@support",
                    "--model", "openai/echo", "-M", "responses_api=false", "--display", "none",
                    "--log-dir", str(root / "plain-logs"),
                ]  # fmt: skip
                sizes = [int(n) for n in args.samples.split(",")]
                commands = (task, [*gate, "--suite", "support-inspect"])
                rows.append(measure("inspect_ai", sizes, args.rounds, root, env, commands))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()[0]
    print(f"median of {args.rounds} runs each; one side, one run per case; uid {os.geteuid()}; "
          f"{os.cpu_count()} cores, load average {load:.1f}")  # fmt: skip
    print("| suite | time | cases: plain → gate run | overhead, fixed | overhead per case |")
    print("|---|---|---|--:|--:|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
