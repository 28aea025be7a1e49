"""The action's sharded mode against its unsharded run, on one large suite.

A repository with N cases (a `python` system taking L ms per call) gets a head commit that
makes 1 case in 9 regress. Then, each `gate action` a separate process in its own clone (as
on separate runners), with a `push` event:

- `mode: full` once;
- `mode: shard` for shards 1/S … S/S (one after the other here; a matrix runs them at once);
- the shard folders joined the way download-artifact's `merge-multiple` joins them, then
  `mode: finish`.

Printed: wall time and peak RSS (largest process of the job) of each job, the sharded run's
critical path (slowest shard job + finish job) against the unsharded run, and whether the
verdict and the headline outputs agree.

    python benchmarks/shards_flow.py [--cases N] [--shards S] [--latency-ms L]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from scale import write_cases  # the same 10,000-case suite (benchmarks/ is on sys.path)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
    "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
}  # fmt: skip
APP = (
    "import time\n\n"
    "def answer(inputs):\n"
    "    time.sleep({latency})\n"
    "    n = inputs['n']\n"
    "    return {{'text': f'answer {{n}}: ' + ('CAC registration' if n % {every} else 'no')}}\n"
)
OUTPUTS = ("verdict", "base-pass-rate", "head-pass-rate", "delta", "regressions")


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, check=True,
        capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.strip()


def make_repo(root: Path, n: int, latency_ms: float) -> str:
    """A repository whose head commit changes the system; returns the head sha."""
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write_cases(root / "cases.jsonl", n)
    (root / "gate.yml").write_text(
        "concurrency: 8\n"
        "suites:\n  - name: big\n    cases: cases.jsonl\n"
        "    system: {kind: python, target: 'app:answer'}\n"
    )
    latency = latency_ms / 1000
    for message, every in (("base", 10**9), ("head", 9)):
        (root / "app.py").write_text(APP.format(latency=latency, every=every))
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def job(
    origin: Path, tmp: Path, name: str, head: str, downloads: Sequence[Path] = (), **inputs: str
) -> tuple[Path, dict]:
    """One job: a clone of its own, the artifacts it downloads, `gate action`;
    (workspace, measures and outputs)."""
    workspace = tmp / name
    git(tmp, "clone", "-q", str(origin), name)
    for folder in downloads:  # download-artifact with merge-multiple: true
        shutil.copytree(folder, workspace / "eval-gate-shards", dirs_exist_ok=True)
    event = tmp / f"{name}.event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main", "after": head}))
    output = tmp / f"{name}.output"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(
        {
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "bench/app",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(tmp / f"{name}.summary"),
            "GATE_CACHE_DIR": str(tmp / f"{name}.cache"),
            **{f"INPUT_{k.upper()}": v for k, v in inputs.items()},
        }
    )
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", "action"], cwd=workspace, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    outputs = read_outputs(output.read_text())
    return workspace, {
        "wall": wall,
        "rss": usage.ru_maxrss / 1024,
        "code": os.waitstatus_to_exitcode(status),
        "outputs": outputs,
    }


def read_outputs(text: str) -> dict[str, str]:
    values, lines = {}, iter(text.splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        values[name] = "\n".join(iter(lambda: next(lines), delimiter))
    return values


def row(name: str, m: dict) -> None:
    verdict = m["outputs"].get("verdict", "?")
    print(
        f"{name:<26} {m['wall']:7.2f} s  peak RSS {m['rss']:6.1f} MB  "
        f"exit {m['code']}  verdict {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        head = make_repo(tmp / "origin", args.cases, args.latency_ms)
        print(f"{args.cases} cases, {args.shards} shards, system latency {args.latency_ms} ms")
        _, full = job(tmp / "origin", tmp, "full", head)
        row("mode: full", full)
        folders, shard_walls = [], []
        for i in range(1, args.shards + 1):
            workspace, measured = job(
                tmp / "origin", tmp, f"shard{i}", head, mode="shard", shard=f"{i}/{args.shards}"
            )
            row(f"mode: shard {i}/{args.shards}", measured)
            folders.append(workspace / "eval-gate-reports")
            shard_walls.append(measured["wall"])
        _, finish = job(tmp / "origin", tmp, "finish", head, folders, mode="finish")
        row("mode: finish", finish)
        path = max(shard_walls) + finish["wall"]
        print(
            f"critical path sharded: {path:.2f} s (slowest shard {max(shard_walls):.2f} s + finish "
            f"{finish['wall']:.2f} s) vs unsharded {full['wall']:.2f} s"
        )
        same = all(full["outputs"].get(k) == finish["outputs"].get(k) for k in OUTPUTS)
        print(f"finish outputs equal the unsharded run's: {same}")


if __name__ == "__main__":
    main()
