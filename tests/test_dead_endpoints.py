"""A dead endpoint is said at once, once, with the fix: real servers and closed ports on
127.0.0.1, real `gate run` and `gate check` processes.

A refused connection, an unknown host, 401, 403 and 404 are not retried, and once one of them
is seen the endpoint's other calls fail at once (a circuit breaker per endpoint): every case
is still reported, as an error (never a failure), and the terminal and the comment say the
message once for all the cases it ended."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest
from helpers.cli import Project, gate_here
from helpers.github_html import Structure, github_html
from helpers.servers.git_http import commit_main, git
from helpers.servers.model_server import ModelServer, Scripted

CASES = 20
PROMPT = "Question: {{ question }}\n"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chat_project(project: Project, base_url: str, *, concurrency: int = 4) -> Project:
    """An openai-kind suite of CASES cases over three tasks."""
    project.write("config/model.yaml", "model: gpt-4o-mini\ntemperature: 0\n")
    project.write("prompts/support.md.j2", PROMPT)
    tasks = ("billing", "shipping", "returns")
    project.cases(
        "cases/faq.jsonl",
        [
            {
                "id": f"faq-{i:03}",
                "task": tasks[i % 3],
                "input": {"question": f"question {i}"},
                "expect": {"must_include": ["question"]},
            }
            for i in range(CASES)
        ],
    )
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/support.md.j2",
        "base_url": base_url,
    }
    project.config(
        {
            "concurrency": concurrency,
            "suites": [{"name": "support", "cases": "cases/faq.jsonl", "system": system}],
        }
    )
    return project


def run(project: Project, key: str = "sk-test-key") -> tuple[float, int, str]:
    started = time.monotonic()
    done = gate_here("run", "--no-cache", cwd=project.root, env={"OPENAI_API_KEY": key})
    return time.monotonic() - started, done.code, done.err


def assert_every_case_errs_with(project: Project, words: str) -> str:
    """Every case is in the report, an error (not a failure), with the same message."""
    _, lines, summary = project.read_report()
    assert len(lines) == CASES and summary["errors"] == CASES and summary["failed"] == 0
    assert {line["status"] for line in lines} == {"error"}
    messages = {line["error"] for line in lines}
    assert len(messages) == 1, messages
    message = messages.pop()
    assert words in message
    return str(message)


def test_a_refused_connection_stops_at_once_and_is_said_once(project: Project) -> None:
    port = closed_port()
    chat_project(project, f"http://127.0.0.1:{port}/v1")
    took, code, err = run(project)
    assert code == 3, err  # every case an error: nothing was measured
    assert took < 15, f"{took:.1f}s: a dead endpoint was retried"
    message = assert_every_case_errs_with(project, f"connection refused at 127.0.0.1:{port}")
    assert "start the server, or fix `base_url`" in message
    # The terminal says it, once, for the 20 cases, not only the report.
    assert err.count(f"connection refused at 127.0.0.1:{port}") == 1, err
    assert f"[run]   {CASES} cases (faq-000, faq-001, faq-002, …): system error:" in err
    assert f"{CASES} cases ended in an error (not a test failure)" in err
    assert "retried" not in err and "retries" not in err


def test_a_refused_key_is_said_with_the_variable_to_fix(project: Project) -> None:
    with ModelServer(api_key="sk-the-right-key") as server:
        chat_project(project, server.openai_base_url, concurrency=1)
        took, code, err = run(project, key="sk-a-wrong-key")
        assert server.requests == 1  # the circuit breaker: the other 19 cases call nothing
    assert code == 3 and took < 15
    message = assert_every_case_errs_with(project, "HTTP 401 from")
    assert "the endpoint refused the API key in $OPENAI_API_KEY" in message
    assert "sk-a-wrong-key" not in message and "sk-a-wrong-key" not in err  # scrubbed
    assert err.count("HTTP 401") == 1


@pytest.mark.parametrize(
    ("status", "said", "fix"),
    [
        (404, "The model `gpt-4o-mini` does not exist", "fix `model` in the model config"),
        (404, "Not Found", "nothing is served at this path: fix `base_url`"),
        (403, "Project does not have access", "may not use this endpoint or model"),
    ],
)
def test_no_such_model_or_path_and_no_access_stop_at_once(
    project: Project, server: ModelServer, status: int, said: str, fix: str
) -> None:
    server.script(Scripted(status, {"error": {"message": said}}))
    chat_project(project, server.openai_base_url, concurrency=1)
    _, code, err = run(project)
    assert code == 3 and server.requests == 1
    message = assert_every_case_errs_with(project, f"HTTP {status} from")
    assert said in message and fix in message
    assert err.count(f"HTTP {status}") == 1


def test_an_unknown_host_is_not_retried(project: Project) -> None:
    host = "no-such-host.invalid"
    try:
        socket.getaddrinfo(host, 80)
    except socket.gaierror as exc:
        if exc.errno != socket.EAI_NONAME:
            pytest.skip(f"this machine's resolver answers {exc.strerror!r}, not 'no such name'")
    else:
        pytest.skip(f"{host} resolves here")
    chat_project(project, f"http://{host}/v1")
    took, code, _ = run(project)
    assert code == 3 and took < 15
    message = assert_every_case_errs_with(project, f"the host name in http://{host}/v1")
    assert "does not resolve" in message and "fix `base_url`" in message


def test_a_dead_endpoint_fails_fast_but_cached_answers_still_count(
    project: Project, server: ModelServer
) -> None:
    """The breaker stops calls, not answers: cases answered from the cache still pass."""
    chat_project(project, server.openai_base_url)
    first = gate_here("run", cwd=project.root, env={"OPENAI_API_KEY": "k"})
    assert first.code == 0, first.err
    lines = (project.root / "cases" / "faq.jsonl").read_text().splitlines()
    extra = json.loads(lines[0]) | {"id": "faq-new", "input": {"question": "new one"}}
    (project.root / "cases" / "faq.jsonl").write_text("\n".join([*lines, json.dumps(extra)]))
    server.stop()
    done = gate_here("run", cwd=project.root, env={"OPENAI_API_KEY": "k"})
    _, report, summary = project.read_report()
    assert summary["passed"] == CASES and summary["errors"] == 1, done.err
    assert [r["id"] for r in report if r["status"] == "error"] == ["faq-new"]
    assert "[run]   faq-new: system error: openai-compatible: connection refused" in done.err


# --- `gate check`: both sides, the comment and the terminal ----------------------------------


def dead_repo(project: Project) -> Path:
    """A repository whose PR edits the prompt, its system at a port nothing listens on."""
    chat_project(project, f"http://127.0.0.1:{closed_port()}/v1")
    root = project.root
    commit_main(root, branch="pr")
    (root / "prompts" / "support.md.j2").write_text("Please answer. " + PROMPT)
    git(root, "commit", "-qam", "prompt")
    return root


def test_check_groups_the_same_error_in_the_comment_and_the_terminal(project: Project) -> None:
    root = dead_repo(project)
    env = {"OPENAI_API_KEY": "sk-x", "GATE_CACHE_DIR": str(root.parent / "cache")}
    started = time.monotonic()
    done = gate_here("check", "--base", "main", "--format", "markdown", cwd=root, env=env)
    assert done.code == 3, done.err
    assert time.monotonic() - started < 60
    # The sides' terminal lines: once per side, grouped.
    for side in ("base", "head"):
        assert f"[{side}]   {CASES} cases (faq-000, faq-001, faq-002, …): system error" in done.err
    assert done.err.count("connection refused at") == 2
    # The comment: one row per side says it for the 20 cases, as GitHub renders it.
    html = github_html(done.out)
    assert html.count("connection refused at") == 2, done.out
    assert html.count("<strong>20 cases:</strong>") == 2
    cells = Structure()
    cells.feed(html)
    rows = [cell for cell in cells.cells if "connection refused" in cell]
    assert len(rows) == 2 and all("start the server, or fix `base_url`" in r for r in rows)
    assert "this suite cannot enforce" not in done.out.split("Statistics")[0]
    text = gate_here("check", "--base", "main", "--format", "text", cwd=root, env=env)
    assert text.out.count("connection refused at") == 2, text.out
    assert f"  - {CASES} cases (faq-000, faq-001, faq-002, faq-003, faq-004, …) · 3 tasks" in (
        text.out
    )
