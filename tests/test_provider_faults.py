"""Fault injection through `gate run`: 429s, 500s and hangs never lose or mislabel a case."""

from __future__ import annotations

import re
from collections import Counter

from helpers.cli import Project, run_gate
from helpers.servers.model_server import Faults, ModelServer

N = 150
KEY = "sk-fault-test-7a6b5c4d3e"
FAULTS = Faults(rate_429=0.20, rate_500=0.10, rate_hang=0.02, retry_after="0.02", hang_s=30)
WHY = re.compile(
    r"^system error: openai-compatible: (HTTP 429 Too Many Requests|HTTP 500 Internal Server Error"
    r"|no response within 0\.3s).*, after 3 attempts$"
)


MODEL_SERVER = {"faults": FAULTS, "seed": 11}  # `server`'s options (conftest.py)


def expected_status(i: int) -> str:
    return "pass" if i % 2 == 0 else "fail"


def fault_project(project: Project, server: ModelServer) -> Project:
    project.write("config/model.yaml", "model: m\ntemperature: 0\n")
    project.write("prompts/ask.j2", "Tell me about item {{ n }}")
    rows = [
        {
            "id": f"case-{i:03d}",
            "input": {"n": i},
            # even cases ask for what the model says, odd ones for what it never says
            "expect": {"must_include": [f"item {i}" if i % 2 == 0 else f"missing {i}"]},
        }
        for i in range(N)
    ]
    project.cases("cases/faults.jsonl", rows)
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/ask.j2",
        "base_url": server.openai_base_url,
        "api_key_env": "FAULT_KEY",
        "timeout_s": 0.3,
        "max_retries": 2,
        "backoff_s": 0.02,
        "max_backoff_s": 0.2,
    }
    project.config(
        {
            "concurrency": 8,
            "suites": [{"name": "f", "cases": "cases/faults.jsonl", "system": system}],
        }
    )
    return project


def test_every_case_ends_exactly_once_with_the_right_status(
    project: Project, server: ModelServer
) -> None:
    fault_project(project, server)
    env = {"GATE_CACHE_DIR": str(project.root / "cache"), "FAULT_KEY": KEY}
    done = run_gate("run", "-q", cwd=project.root, env=env)
    assert done.code == 0, done.err
    _, lines, summary = project.read_report()

    ids = [x["id"] for x in lines]
    assert sorted(ids) == [f"case-{i:03d}" for i in range(N)]  # each case once, none lost
    statuses = Counter(x["status"] for x in lines)
    assert set(statuses) <= {"pass", "fail", "error"}
    assert summary["n"] == N
    assert summary["passed"] + summary["failed"] + summary["errors"] == N
    assert (summary["passed"], summary["failed"], summary["errors"]) == (
        statuses["pass"],
        statuses["fail"],
        statuses["error"],
    )

    # a fault is never a failure: every case that got an answer has its deterministic status
    for line in lines:
        i = int(line["id"].split("-")[1])
        if line["status"] != "error":
            assert line["status"] == expected_status(i), line
            assert line["error"] is None
        else:
            assert WHY.match(line["error"]), line["error"]
            assert line["output"] is None

    # the server saw every kind of fault, and answered every case that did not error (a
    # machine stall past the 0.3 s timeout can make it answer one more that came too late)
    assert server.counts["429"] > 0 and server.counts["500"] > 0 and server.counts["hang"] > 0
    assert server.counts["200"] >= N - statuses["error"]
    assert statuses["error"] > 0  # with three attempts some cases do run out of luck
    assert statuses["pass"] > 0 and statuses["fail"] > 0
    assert KEY not in done.out + done.err

    # the summary (and the last line printed) count the traffic the server saw
    http = summary["http"]["system"]
    assert http["requests"] == server.requests
    assert http["retries"] == server.requests - N  # every request past a case's first
    assert http["rate_limited"] == server.counts["429"]
    assert http["failures"] == statuses["error"]
    assert f"system retried {http['retries']} times ({http['rate_limited']} x 429)" in done.err

    # a rerun asks again only for the cases that errored; everything else comes from the cache
    errored = {line["id"] for line in lines if line["status"] == "error"}
    server.reset_counts()
    again = run_gate("run", "-q", "--label", "again", cwd=project.root, env=env)
    assert again.code == 0, again.err
    asked = {
        f"case-{int(entry.body['messages'][0]['content'].split()[-1]):03d}" for entry in server.log
    }
    assert asked <= errored
    rerun = project.read_report(label="again")[2]
    assert rerun["cache"]["hits"] == N - len(errored)
