"""What each side runs: its own system, measured with the head's cases; the base's policy.

Real repositories, real `gate check` subprocesses, and two real model servers on 127.0.0.1
(an OpenAI-compatible one and an Anthropic-compatible one) that log every request.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from helpers.cli import clean_env, gate_completed
from helpers.servers.git_http import git
from helpers.servers.model_server import ChatRequest, ModelServer, echo_model

CASES = [
    {"id": "refund", "input": {"question": "How do I get a refund?"},
     "expect": {"must_include": ["refund"]}},
    {"id": "hours", "input": {"question": "What are your opening hours?"},
     "expect": {"must_include": ["hours"]}},
]  # fmt: skip


def claude_paraphrases(request: ChatRequest) -> str:
    """The other provider's model: right about hours, but it never says "refund"."""
    return echo_model(request).replace("refund", "reimbursement")


@pytest.fixture
def servers(model_servers: Callable[..., ModelServer]) -> tuple[ModelServer, ModelServer]:
    return model_servers(), model_servers(responder=claude_paraphrases)


def gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    keys = {"OPENAI_API_KEY": "sk-test-openai", "ANTHROPIC_API_KEY": "sk-ant-test"}
    return gate_completed(*args, cwd=cwd, environ=clean_env(cwd, **keys))


def write(root: Path, files: dict[str, str | None]) -> None:
    for name, content in files.items():
        path = root / name
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")


def repo_with(tmp_path: Path, base: dict[str, str | None]) -> Path:
    """A repository whose `main` holds `base`, checked out on a PR branch."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {".gitignore": "reports/\n", **base})
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def chat_config(kind: str, model_config: str, base_url: str | None = None) -> str:
    system: dict[str, str] = {"kind": kind, "model_config": model_config, "prompt": "prompt.j2"}
    if base_url:
        system["base_url"] = base_url
    suite = {"name": "support", "cases": "cases.jsonl", "system": system}
    return yaml.safe_dump({"suites": [suite]}, sort_keys=False)


def cases(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def paths(server: ModelServer) -> list[str]:
    return [entry.path for entry in server.log]


def models(server: ModelServer) -> set[str]:
    return {entry.body["model"] for entry in server.log}


def on_openai(server: ModelServer, rows: list[dict]) -> dict[str, str | None]:
    """A base whose suite asks gpt-4o on the OpenAI-compatible server."""
    return {
        "gate.yml": chat_config("openai", "config/model.yaml", server.openai_base_url),
        "config/model.yaml": "model: gpt-4o\ntemperature: 0\n",
        "prompt.j2": "{{ question }}\n",
        "cases.jsonl": cases(rows),
    }


def test_a_provider_switch_runs_each_side_on_its_own_provider(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    openai, anthropic = servers
    root = repo_with(tmp_path, on_openai(openai, CASES))
    write(
        root,
        {
            "gate.yml": chat_config("anthropic", "config/claude.yaml", anthropic.url),
            "config/claude.yaml": "model: claude-3-5-sonnet-latest\nmax_tokens: 200\n",
        },
    )
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 1, done.stderr
    assert set(paths(openai)) == {"/v1/chat/completions"} and models(openai) == {"gpt-4o"}
    assert set(paths(anthropic)) == {"/v1/messages"}
    assert models(anthropic) == {"claude-3-5-sonnet-latest"}
    assert len(openai.log) == len(anthropic.log) == len(CASES)
    assert "support: fail" in done.stderr and "1 regressions" in done.stderr
    comment = done.stdout.replace("\\", "")
    assert "Regressions: passed on base, fail on head (1)" in comment and "refund" in comment
    # the comment's metadata names each side's system, the change highlighted
    assert "kind: openai" in comment and "kind: anthropic" in comment
    assert "gpt-4o" in comment and "claude-3-5-sonnet-latest" in comment
    assert "System (changed)" in comment and "**kind: anthropic**" in comment
    assert "**model: claude-3-5-sonnet-latest**" in comment and "**model: gpt-4o**" in comment


def test_a_provider_named_in_the_model_config_decides_the_side(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    openai, anthropic = servers
    root = repo_with(
        tmp_path,
        {
            "gate.yml": chat_config("openai", "config/model.yaml"),
            "config/model.yaml": f"model: gpt-4o\nbase_url: {openai.openai_base_url}\n",
            "prompt.j2": "{{ question }}\n",
            "cases.jsonl": cases(CASES),
        },
    )
    write(
        root,
        {
            "config/model.yaml": (
                "provider: anthropic\nmodel: claude-3-5-sonnet-latest\n"
                f"base_url: {anthropic.url}\nmax_tokens: 200\n"
            )
        },
    )
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 1, done.stderr
    assert models(openai) == {"gpt-4o"} and set(paths(openai)) == {"/v1/chat/completions"}
    assert models(anthropic) == {"claude-3-5-sonnet-latest"}
    assert set(paths(anthropic)) == {"/v1/messages"}
    # provider, base_url and api_key_env are where the call goes, never request parameters
    assert all("provider" not in e.body and "base_url" not in e.body for e in anthropic.log)
    assert "1 regressions" in done.stderr


def test_the_heads_new_case_is_asked_of_the_base_too(
    tmp_path: Path, servers: tuple[ModelServer, ModelServer]
) -> None:
    openai, _ = servers
    root = repo_with(tmp_path, on_openai(openai, CASES[:1]))
    write(root, {"cases.jsonl": cases(CASES)})
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "1 cases compared (1 added by this PR, not in the delta)" in done.stdout
    base = (root / ".eval-gate/reports" / "support" / "base.jsonl").read_text().splitlines()[1:]
    assert sorted(json.loads(line)["id"] for line in base) == ["hours", "refund"]
    added = {json.loads(line)["id"]: json.loads(line)["added"] for line in base}
    assert added == {"refund": False, "hours": True}
    asked = [e.body["messages"][-1]["content"] for e in openai.log]
    assert asked.count("What are your opening hours?") >= 1  # the new case, asked of the base


APP = """
def answer(inputs):
    return "the answer is " + inputs["word"]
"""


def python_project(n: int, threshold: float | None = None) -> dict[str, str | None]:
    config: dict = {
        "suites": [
            {"name": "words", "cases": "cases.jsonl",
             "system": {"kind": "python", "target": "app:answer"}},
        ]
    }  # fmt: skip
    if threshold is not None:
        config = {"threshold": threshold, **config}
    rows = [
        {"id": f"w{i}", "input": {"word": f"word{i}"}, "expect": {"must_include": [f"word{i}"]}}
        for i in range(n)
    ]
    return {
        "gate.yml": yaml.safe_dump(config, sort_keys=False),
        "app.py": APP,
        "cases.jsonl": cases(rows),
    }


def test_a_pr_cannot_relax_the_threshold_that_judges_it(tmp_path: Path) -> None:
    root = repo_with(tmp_path, python_project(10))
    write(
        root,
        {
            **python_project(10, threshold=50),
            "app.py": APP + '\n\ndef _drop(text):\n    return text.replace("word3", "w3")\n'
            "\n\n_answer = answer\n\n\ndef answer(inputs):\n    return _drop(_answer(inputs))\n",
        },
    )
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 1, done.stderr
    comment = done.stdout.replace("\\", "")
    assert "the pass rate dropped 10.0 points, more than the threshold of 3" in comment
    assert "threshold: 3 → 50" in comment
    assert "the base's policy judges it, the head's takes effect after merge" in comment
    # nor can a flag: an override only tightens the base's policy
    looser = gate("check", "--base", "main", "--threshold", "20", cwd=root)
    assert looser.returncode == 1 and "the override threshold: 20" in looser.stdout


def test_a_base_that_cannot_run_is_an_error_never_a_pass(tmp_path: Path) -> None:
    base = python_project(3)
    base["gate.yml"] = base["gate.yml"].replace("app:answer", "missing:answer")  # type: ignore[union-attr]
    root = repo_with(tmp_path, base)
    write(root, {"gate.yml": python_project(3)["gate.yml"], "app.py": APP + "\n# edited\n"})
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 3, done.stderr
    assert "support" not in done.stderr and "words: error" in done.stderr
    comment = done.stdout.replace("\\", "")
    assert "the base side could not run (exit 2)" in comment and "missing" in comment
    assert "nothing can be compared, so this is no pass" in comment


def test_a_base_whose_every_case_errors_is_an_error_naming_the_errors(tmp_path: Path) -> None:
    base = python_project(3)
    base["app.py"] = 'def answer(inputs):\n    raise RuntimeError("provider down")\n'
    root = repo_with(tmp_path, base)
    write(root, {"app.py": APP})
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 3, done.stderr
    comment = done.stdout.replace("\\", "")
    assert "3 of 3 base cases ended in an error" in comment
    assert "provider down" in comment  # the base's errors show their reasons


HELDOUT = [
    {"id": "secret-1", "heldout": True, "input": {"word": "zebra"},
     "expect": {"must_include": ["giraffe-expected"]}},
    {"id": "open-1", "input": {"word": "lion"}, "expect": {"must_include": ["lion"]}},
]  # fmt: skip


def test_held_out_detail_reaches_no_file_of_the_uploaded_folder(tmp_path: Path) -> None:
    root = repo_with(tmp_path, {**python_project(1), "cases.jsonl": cases(HELDOUT)})
    write(root, {"app.py": APP + "\n# edited\n"})
    done = gate("check", "--base", "main", cwd=root)
    assert done.returncode == 0, done.stderr
    reports = root / ".eval-gate/reports"
    files = [p for p in reports.rglob("*") if p.is_file()]
    assert len(files) >= 4
    for path in files:
        content = path.read_text(encoding="utf-8")
        assert "zebra" not in content and "giraffe-expected" not in content, path
    line = next(
        json.loads(raw)
        for raw in (reports / "words" / "head.jsonl").read_text().splitlines()[1:]
        if json.loads(raw)["id"] == "secret-1"
    )
    assert line["status"] == "fail" and line["passed"] is False and line["heldout"] is True
    assert line["output"] is None and line["checks"] == []
    assert "zebra" not in done.stdout + done.stderr
    # asked for explicitly, the full detail goes to a folder of its own
    private = tmp_path / "private"
    done = gate("check", "--base", "main", "--heldout-detail", str(private), cwd=root)
    assert done.returncode == 0, done.stderr
    assert "giraffe-expected" in (private / "words" / "head.jsonl").read_text()
    assert "zebra" in (private / "words" / "base.jsonl").read_text()
    assert not any("zebra" in p.read_text() for p in reports.rglob("*") if p.is_file())


def test_gate_run_keeps_held_out_detail_only_where_asked(tmp_path: Path) -> None:
    root = tmp_path / "p"
    write(root, {**python_project(1), "cases.jsonl": cases(HELDOUT)})  # type: ignore[arg-type]
    done = gate("run", "--out", "public", "--heldout-detail", "private", "-q", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "zebra" not in (root / "public" / "run.jsonl").read_text()
    assert "zebra" in (root / "private" / "run.jsonl").read_text()
    assert "giraffe-expected" in (root / "private" / "run.jsonl").read_text()


def test_gate_run_exits_3_when_every_case_errored(tmp_path: Path) -> None:
    root = tmp_path / "p"
    project = python_project(2)
    project["app.py"] = 'def answer(inputs):\n    raise RuntimeError("down")\n'
    write(root, project)
    done = gate("run", "-q", cwd=root)
    assert done.returncode == 3, done.stderr
    assert "0/2 passed" in done.stderr and "2 errors" in done.stderr
    project["app.py"] = 'def answer(inputs):\n    return "word0"\n'
    write(root, project)
    assert gate("run", "-q", cwd=root).returncode == 0  # some errors, or failures: exit 0
