"""The PR flow's own cost, and what running the two sides at once buys.

1. `gate check` end to end on a throwaway repository (a suite of N cases, a `python` system
   that takes L ms per call, concurrency 8): wall time, against the two sides' `gate run`
   times, with the sides run at once and one after the other.
2. Finding the merge base from a one-commit-deep clone: the base sits D commits behind the
   head on a history of H commits (git over file://, so the fetches are real).

    python benchmarks/pr_flow.py [--cases N] [--latency-ms L] [--history H] [--depth D]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gate.flow.git import GitRepo
from gate.flow.pr import run_check
from gate.flow.sides import run_round, start_sides
from gate.inputs.config import load_config
from gate.run.protocol import RunMore
from gate.run.side import spec_of_config

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
}  # fmt: skip
APP = """
import time
from pathlib import Path
RULES = (Path(__file__).parent / "prompt.md").read_text()

def answer(inputs):
    time.sleep({latency})
    return {{"text": RULES + inputs["q"]}}
"""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], env=ENV, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(done.stderr)
    return done.stdout.strip()


def make_project(root: Path, cases: int, latency_ms: float) -> None:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "bot.py").write_text(APP.format(latency=latency_ms / 1000))
    (root / "app" / "prompt.md").write_text("CAC fees ")
    rows = [
        {
            "id": f"c{i}",
            "input": {"q": str(i)},
            "expect": {"must_include": ["CAC" if i % 2 else "fees"]},
        }
        for i in range(cases)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "gate.yml").write_text(
        "concurrency: 8\nwatch: ['app/**']\nsuites:\n  - {name: s, cases: cases.jsonl, "
        "system: {kind: python, target: 'app.bot:answer'}}\n"
    )
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "app" / "prompt.md").write_text("CAC ")  # the PR drops a rule: half the cases fail


def sides_time(root: Path, together: bool) -> float:
    """The two sides' runners (the flow's own), round 0 at once or one after the other."""
    repo = GitRepo(root)
    env = {**os.environ, "GATE_CACHE_DIR": str(root.parent / "cache")}
    loaded = load_config(root / "gate.yml")
    suite = loaded.config.suites[0]
    started = time.perf_counter()
    with repo.worktree(git(root, "rev-parse", "HEAD")) as base:
        specs = [
            spec_of_config(
                loaded, suite, where, label=name, cache_dir=None, show_progress=False
            ).model_copy(update={"side": name})
            for name, where in (("base", base), ("head", root))
        ]
        groups = [specs] if together else [[s] for s in specs]
        sides = []
        for group in groups:
            running = start_sides(group, env, io.StringIO())
            run_round(running, RunMore(repeats=1), first=True)
            for side in running:
                side.close()
            sides += running
    assert all(s.complete for s in sides)
    return time.perf_counter() - started


def flow(cases: int, latency_ms: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        make_project(root, cases, latency_ms)
        started = time.perf_counter()
        environ = {**os.environ, "GATE_CACHE_DIR": tmp}
        out = Path(tmp) / "reports"
        outcomes = run_check(
            root, root / "gate.yml", "main", out, stream=io.StringIO(), environ=environ
        )
        check = time.perf_counter() - started
        together = sides_time(root, together=True)
        apart = sides_time(root, together=False)
        verdict = outcomes.verdict
    print(f"flow: {cases} cases x {latency_ms:g} ms, concurrency 8, {os.cpu_count()} cores")
    print(f"  gate check (git, both sides, compare, render): {check:6.2f} s  verdict {verdict}")
    print(f"  the two sides at once:                          {together:6.2f} s")
    print(f"  the two sides one after the other:              {apart:6.2f} s")
    print(f"  running the sides at once saves {100 * (1 - together / apart):.0f}%")


def deepen(history: int, depth: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        origin = Path(tmp) / "origin"
        origin.mkdir()
        git(origin, "init", "-q", "-b", "main")
        git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
        for n in range(history):
            git(origin, "commit", "-q", "--allow-empty", "-m", f"main {n}")
        base = git(origin, "rev-parse", "HEAD")
        git(origin, "checkout", "-q", "-b", "pr")
        for n in range(depth):
            (origin / "f").write_text(str(n))
            git(origin, "add", "f")
            git(origin, "commit", "-qm", f"pr {n}")
        head = git(origin, "rev-parse", "HEAD")
        ws = Path(tmp) / "ws"
        clone = ["git", "clone", "-q", "--depth=1", "--branch", "pr", f"file://{origin}", str(ws)]
        subprocess.run(clone, check=True, env=ENV)
        repo = GitRepo(ws)
        started = time.perf_counter()
        repo.ensure_commit(base)
        found = repo.merge_base(base, head, fetch=True)
        took = time.perf_counter() - started
        commits = int(git(ws, "rev-list", "--count", "HEAD"))
    assert found == base
    print(f"merge base {depth} commits behind a one-deep clone (history {history}):")
    print(f"  found in {took:.2f} s; the clone now holds {commits} of {history + depth} commits")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--history", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=120)
    args = parser.parse_args()
    flow(args.cases, args.latency_ms)
    deepen(args.history, args.depth)


if __name__ == "__main__":
    sys.exit(main())
