"""`gate run`: real files and real systems; the executable for the end-to-end run, the
progress lines and the usage errors, in-process (`gate_here`) for what the run records."""

from __future__ import annotations

import io
import json
import subprocess

import pytest
from helpers.cli import Project, gate_here, run_gate

from gate.providers.traffic import Traffic
from gate.report.models import CaseResult
from gate.run.progress import Progress

ROWS = [
    {
        "id": "a1",
        "task": "alpha",
        "severity": "blocker",
        "input": {"say": "Hello CAC"},
        "expect": {"must_include": ["cac"]},
    },
    {"id": "a2", "task": "alpha", "input": {"say": "nope"}, "expect": {"must_include": ["cac"]}},
    {"id": "b1", "task": "beta", "input": {"raise": "kaput"}, "expect": {"must_include": ["x"]}},
    {"id": "b2", "input": {"say": '{"ok": true}'}, "expect": {"json": True, "max_chars": 50}},
]


def test_run_writes_report_and_summary_with_spec_fields(echo_project) -> None:
    project: Project = echo_project(ROWS)
    done = run_gate("run", "--label", "head", cwd=project.root)
    assert done.code == 0, done.err
    meta, lines, summary = project.read_report(label="head")
    assert meta["type"] == "meta" and meta["schema_version"] == 3 and meta["gate_version"]
    assert meta["system"] == {"kind": "python", "target": "app:answer"}
    assert set(meta["files"]) == {"gate.yml", "app.py"}
    assert [x["id"] for x in lines] == ["a1", "a2", "b1", "b2"]
    for line in lines:
        assert {
            "id",
            "task",
            "severity",
            "status",
            "passed",
            "checks",
            "latency_ms",
            "output",
        } <= set(line)
    by_id = {x["id"]: x for x in lines}
    assert by_id["a1"]["status"] == "pass" and by_id["a1"]["severity"] == "blocker"
    assert by_id["a2"]["status"] == "fail" and by_id["a2"]["checks"][0]["name"] == "include:cac"
    assert by_id["b2"]["task"] == "suite" and by_id["b2"]["passed"] is True
    assert summary["n"] == 4 and summary["passed"] == 2 and summary["pass_rate"] == 50.0
    assert summary["by_task"]["alpha"] == {"n": 2, "passed": 1, "pass_rate": 50.0}
    assert summary["tokens"] == {"prompt": 9, "completion": 6, "total": 15}
    assert (
        summary["latency_p50_ms"] is not None
        and summary["latency_p95_ms"] >= summary["latency_p50_ms"]
    )
    assert summary["meta"]["label"] == "head"
    assert "main: 2/4 passed (50.00%), 1 failed, 1 errors" in done.err


def test_a_system_that_raises_is_an_error_not_a_failure(echo_project) -> None:
    project = echo_project(ROWS)
    assert gate_here("run", "-q", cwd=project.root).code == 0
    _, lines, summary = project.read_report()
    b1 = next(x for x in lines if x["id"] == "b1")
    assert b1["status"] == "error" and b1["passed"] is False and b1["checks"] == []
    assert "RuntimeError: boom: kaput" in b1["error"] and "app.py" in b1["error"]
    assert summary["errors"] == 1 and summary["failed"] == 1


def test_timeout_is_an_error_with_a_reason(echo_project) -> None:
    project = echo_project(
        [{"id": "slow", "input": {"sleep": 5}}, {"id": "fast", "input": {"say": "x"}}],
        timeout_s=0.3,
    )
    assert gate_here("run", "-q", cwd=project.root).code == 0
    _, lines, _ = project.read_report()
    slow = next(x for x in lines if x["id"] == "slow")
    assert slow["status"] == "error" and "timed out after 0.3s" in slow["error"]
    assert next(x for x in lines if x["id"] == "fast")["status"] == "pass"


FLAKY_APP = """
import itertools
_n = itertools.count()

def answer(inputs):
    if inputs["id"] == "flaky":
        return "yes" if next(_n) % 2 == 0 else "no"
    return "yes"
"""


def test_repeats_measure_flakiness(project: Project) -> None:
    project.write("app.py", FLAKY_APP)
    project.cases(
        "c.jsonl",
        [
            {"id": "flaky", "expect": {"equals": "yes"}},
            {"id": "steady", "expect": {"equals": "yes"}},
        ],
    )
    project.config(
        {
            "cases": "c.jsonl",
            "system": {"kind": "python", "target": "app:answer"},
            "repeats": 3,
            "concurrency": 1,
        }
    )
    assert gate_here("run", "-q", cwd=project.root).code == 0
    meta, lines, summary = project.read_report()
    flaky, steady = lines
    assert meta["repeats"] == 3
    assert [a["status"] for a in flaky["attempts"]] == ["pass", "fail", "pass"]
    assert flaky["flaky"] is True and flaky["pass_fraction"] == pytest.approx(2 / 3, abs=1e-3)
    assert flaky["status"] == "pass"  # the majority of repeats decides
    assert (
        steady["flaky"] is False and steady["pass_fraction"] == 1.0 and len(steady["attempts"]) == 3
    )
    assert summary["flaky"] == 1 and summary["cache"]["misses"] == 6


def comparable(lines: list[dict]) -> list[tuple]:
    return [(x["id"], x["status"], json.dumps(x["checks"]), x["output"], x["index"]) for x in lines]


def test_concurrent_run_equals_serial_run(project: Project) -> None:
    project.write(
        "app.py",
        "import time, random\n\ndef answer(i):\n    time.sleep(random.random() / 200)\n    return str(i['n'] * i['n'])\n",
    )
    rows = [
        {"id": f"c{n:03}", "input": {"n": n}, "expect": {"regex": [r"^\d*[02468]$"]}}
        for n in range(120)
    ]
    project.cases("c.jsonl", rows)
    project.config({"cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}})
    assert (
        gate_here("run", "-q", "--concurrency", "1", "--label", "serial", cwd=project.root).code
        == 0
    )
    assert (
        gate_here("run", "-q", "--concurrency", "16", "--label", "parallel", cwd=project.root).code
        == 0
    )
    _, serial, s1 = project.read_report(label="serial")
    _, parallel, s2 = project.read_report(label="parallel")
    assert comparable(serial) == comparable(parallel)
    assert [x["id"] for x in parallel] == [
        r["id"] for r in rows
    ]  # suite order, whatever finished first
    assert (s1["passed"], s1["by_task"]) == (s2["passed"], s2["by_task"]) == (60, s1["by_task"])


def test_progress_lines_when_not_a_tty(project: Project) -> None:
    project.write("app.py", "def answer(i):\n    return 'x'\n")
    project.cases("c.jsonl", [{"id": f"c{n}"} for n in range(5)])
    project.config({"cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}})
    done = run_gate("run", "--label", "p", cwd=project.root)
    assert "[p] 5/5 (100%) · pass 5" in done.err


def test_the_progress_line_shows_retries_as_they_happen() -> None:
    traffic = {"system": Traffic(), "judge": Traffic()}
    stream = io.StringIO()
    progress = Progress(2, label="p", stream=stream, interval_s=0, traffic=traffic)
    progress.advance(CaseResult(id="a", task="t", status="pass", passed=True))
    assert "retries" not in stream.getvalue()
    for name in ("retries", "retries", "retries", "rate_limited", "rate_limited"):
        traffic["system"].bump(name)
    traffic["judge"].bump("retries")
    progress.advance(CaseResult(id="b", task="t", status="fail", passed=False))
    last = stream.getvalue().splitlines()[-1]
    assert "system retries 3 (429 x 2) · judge retries 1 · " in last, last


def test_git_sha_of_the_root_lands_in_the_metadata(echo_project) -> None:
    project = echo_project(ROWS[:1])
    git = ["git", "-c", "user.email=t@e.st", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=project.root, check=True)
    subprocess.run([*git, "add", "."], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=project.root, check=True)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=project.root, capture_output=True, text=True
    ).stdout.strip()
    assert gate_here("run", "-q", cwd=project.root).code == 0
    meta, lines, _ = project.read_report()
    assert meta["git_sha"] == sha and meta["git_dirty"] is False
    assert lines[0]["file"] == "cases/suite.jsonl" and lines[0]["line"] == 1


def test_multiple_suites_each_get_a_report(project: Project) -> None:
    project.write("app.py", "def answer(i):\n    return 'ok'\n")
    project.cases("a.jsonl", [{"id": "a"}])
    project.cases("b.jsonl", [{"id": "b"}])
    system = {"kind": "python", "target": "app:answer"}
    project.config(
        {
            "suites": [
                {"name": "one", "cases": "a.jsonl", "system": system},
                {"name": "two", "cases": "b.jsonl", "system": system},
            ]
        }
    )
    assert gate_here("run", "-q", "--label", "x", cwd=project.root).code == 0
    assert (project.root / "reports/x.one.jsonl").is_file() and (
        project.root / "reports/x.two.summary.json"
    ).is_file()
    done = gate_here("run", "-q", "--suite", "three", cwd=project.root)
    assert done.code == 2 and "no suite named 'three'; suites: one, two" in done.err


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (
            lambda p: p.write(
                "gate.yml",
                "cases: c.jsonl\nsystem: {kind: python, target: 'app:answer'}\nrepeat: 2\n",
            ),
            "gate.yml:3: key `repeat`: unknown key (did you mean `repeats`?)",
        ),
        (
            lambda p: p.write("cases/suite.jsonl", '{"id": "a"}\n{"id": "a"}\n'),
            "cases/suite.jsonl:2: key `id`: duplicate case id 'a' (first defined at cases/suite.jsonl:1)",
        ),
        (
            lambda p: p.write("cases/suite.jsonl", '{"id": "a", "expect": {"max_char": 3}}\n'),
            "cases/suite.jsonl:1: key `expect.max_char`: unknown key (did you mean `max_chars`?)",
        ),
        (
            lambda p: p.write("app.py", "import nonexistent_dependency\n"),
            "importing 'app' failed: No module named 'nonexistent_dependency'",
        ),
        (
            lambda p: p.write("app.py", "def other(i):\n    return ''\n"),
            "'app' has no attribute 'answer'",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(echo_project, setup, message) -> None:
    project = echo_project(ROWS)
    setup(project)
    done = gate_here("run", cwd=project.root)
    assert done.code == 2, done.err
    assert message in done.err
    assert "Traceback" not in done.err and len(done.err.strip().splitlines()) == 1
    assert not (project.root / "reports").exists()


def test_usage_errors_exit_2(echo_project) -> None:
    project = echo_project(ROWS)
    done = run_gate("run", "--shard", "5/4", cwd=project.root)
    assert done.code == 2 and "--shard 5/4" in done.err
    done = run_gate("run", "--bogus", cwd=project.root)
    assert done.code == 2 and "unrecognized arguments: --bogus" in done.err
