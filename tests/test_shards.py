"""Shards and `gate merge`: four shards join into the unsharded report, case for case."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from helpers.cli import REPO, Project, gate_here

from gate.inputs.shard import shard_of
from gate.report.merge import shard_traffic

APP = "import time\n\ndef answer(i):\n    time.sleep(i.get('sleep', 0))\n    return 'even' if i['n'] % 2 == 0 else 'odd'\n"


def make(project: Project, n: int, **extra) -> Project:
    project.write("app.py", APP)
    rows = [
        {
            "id": f"case-{k:04}",
            "task": f"t{k % 3}",
            "input": {"n": k, **extra},
            "expect": {"equals": "even"},
        }
        for k in range(n)
    ]
    project.cases("c.jsonl", rows)
    project.config({"cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}})
    return project


def comparable(line: dict) -> tuple:
    return (
        line["id"],
        line["task"],
        line["status"],
        line["passed"],
        json.dumps(line["checks"]),
        line["output"],
        line["index"],
    )


def test_merge_of_four_shards_equals_the_unsharded_run(project: Project) -> None:
    make(project, 203)
    assert gate_here("run", "-q", "--label", "full", cwd=project.root).code == 0
    for i in range(1, 5):
        assert (
            gate_here("run", "-q", "--shard", f"{i}/4", "--label", f"s{i}", cwd=project.root).code
            == 0
        )
    shards = [f"reports/s{i}.jsonl" for i in (3, 1, 4, 2)]  # any order
    done = gate_here("merge", *shards, "--label", "merged", cwd=project.root)
    assert done.code == 0, done.err
    full_meta, full, full_summary = project.read_report(label="full")
    merged_meta, merged, merged_summary = project.read_report(label="merged")
    assert [comparable(x) for x in merged] == [comparable(x) for x in full]
    sizes = [len(project.read_report(label=f"s{i}")[1]) for i in range(1, 5)]
    assert sum(sizes) == 203 and min(sizes) > 30  # balanced enough
    keys = (
        "n",
        "passed",
        "failed",
        "errors",
        "needs_review",
        "pass_rate",
        "by_task",
        "tokens",
        "flaky",
    )
    assert {k: merged_summary[k] for k in keys} == {k: full_summary[k] for k in keys}
    assert merged_meta["shards"] == ["1/4", "2/4", "3/4", "4/4"] and merged_meta["shard"] is None
    assert merged_meta["n_cases"] == full_meta["n_cases"] == 203


def test_merge_adds_up_the_shards_http_counts(tmp_path: Path) -> None:
    counts = [
        {"system": {"requests": 60, "retries": 10, "rate_limited": 7, "failures": 1}},
        {
            "system": {"requests": 50, "retries": 0, "rate_limited": 0, "failures": 0},
            "judge": {"requests": 4, "retries": 1, "rate_limited": 1, "failures": 0},
        },
    ]
    paths = []
    for i, http in enumerate(counts, 1):
        (tmp_path / f"s{i}.summary.json").write_text(json.dumps({"n": 1, "http": http}))
        paths.append(tmp_path / f"s{i}.jsonl")
    (tmp_path / "s3.summary.json").write_text("{not json")  # unreadable: adds nothing
    paths.append(tmp_path / "s3.jsonl")
    paths.append(tmp_path / "s4.jsonl")  # no summary at all
    assert shard_traffic(paths) == {
        "system": {"requests": 110, "retries": 10, "rate_limited": 7, "failures": 1},
        "judge": {"requests": 4, "retries": 1, "rate_limited": 1, "failures": 0},
    }


def test_missing_and_duplicated_shards_are_named(project: Project) -> None:
    make(project, 40)
    for i in range(1, 4):
        gate_here("run", "-q", "--shard", f"{i}/3", "--label", f"s{i}", cwd=project.root)
    done = gate_here(
        "merge", "reports/s1.jsonl", "reports/s3.jsonl", "--label", "m", cwd=project.root
    )
    assert done.code == 2 and "missing shard(s): 2/3" in done.err
    done = gate_here(
        "merge",
        "reports/s1.jsonl",
        "reports/s2.jsonl",
        "reports/s2.jsonl",
        "reports/s3.jsonl",
        "--label",
        "m",
        cwd=project.root,
    )
    assert done.code == 2 and "case " in done.err and "two shards" in done.err
    gate_here("run", "-q", "--label", "whole", cwd=project.root)
    done = gate_here("merge", "reports/whole.jsonl", "--label", "m", cwd=project.root)
    assert done.code == 2 and "not a shard report" in done.err
    assert not (project.root / "reports/m.jsonl").exists()


def test_a_case_stays_in_its_shard_when_others_are_added() -> None:
    ids = [f"case-{k}" for k in range(1000)]
    before = {i: shard_of(i, 4) for i in ids}
    after = {i: shard_of(i, 4) for i in [*ids, *(f"new-{k}" for k in range(500))]}
    assert all(after[i] == before[i] for i in ids)
    counts = Counter(before.values())
    assert set(counts) == {1, 2, 3, 4} and max(counts.values()) - min(counts.values()) < 100


def test_a_killed_run_leaves_every_finished_case_on_disk(project: Project) -> None:
    make(project, 200, sleep=0.05)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", "run", "-q", "--concurrency", "2"],
        cwd=project.root,
        env=env,
        stderr=subprocess.DEVNULL,
    )
    report = project.root / "reports/run.jsonl"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if report.exists() and len(report.read_text().splitlines()) > 11:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    lines = report.read_text().splitlines()
    assert json.loads(lines[0])["type"] == "meta"
    finished = [json.loads(x) for x in lines[1:]]  # every line is a complete case
    assert 10 <= len(finished) < 200
    assert all(x["status"] in ("pass", "fail") for x in finished)
    assert not (project.root / "reports/run.summary.json").exists()
