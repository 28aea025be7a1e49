"""`gate validate` checks what a run needs, and `gate run` (and `gate check`, and `gate init`
for a python target) refuses the same things with the same words: real projects, real `gate`
processes, the model server on 127.0.0.1.

- the provider key each system reads, named where the system (or its model config) chose it;
- every key of a model config: unknown ones with "did you mean", another provider's
  parameter refused, `extra_body` sent as it is;
- a prompt variable the cases do not define, said once with the case ids;
- a `python` target's signature: one that cannot take the input dict is refused with the fix.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import Done, Project, gate_here, run_gate
from helpers.servers.git_http import commit_main, git
from helpers.servers.model_server import ModelServer

NO_KEYS = {"OPENAI_API_KEY": "", "ANTHROPIC_API_KEY": "", "OPENAI_BASE_URL": ""}


def gate(project: Project, *args: str, **env: str) -> Done:
    """`gate ARGS` without the providers' keys: `validate` in-process, the rest as the
    executable (`run` and `check` start the system)."""
    call = gate_here if args[0] == "validate" else run_gate
    return call(*args, cwd=project.root, env={**NO_KEYS, **env})


def line_of(path: Path, needle: str) -> int:
    lines = path.read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if needle in text)


def chat_project(
    project: Project, model_config: str = "model: gpt-4o-mini\n", n: int = 3, **system: str
) -> Project:
    project.write("config/model.yaml", model_config)
    project.write("prompts/ask.md.j2", "Answer: {{ question }}\n")
    rows = [
        {"id": f"q{i:02}", "input": {"question": f"q{i}"}, "expect": {"must_include": ["q"]}}
        for i in range(n)
    ]
    project.cases("cases/c.jsonl", rows)
    chat = {"kind": "openai", "model_config": "config/model.yaml", "prompt": "prompts/ask.md.j2"}
    project.config(
        {"suites": [{"name": "support", "cases": "cases/c.jsonl", "system": {**chat, **system}}]}
    )
    return project


# --- the provider key ------------------------------------------------------------------------


def test_a_missing_key_is_named_where_the_system_is_defined(project: Project) -> None:
    chat_project(project)
    line = line_of(project.root / "gate.yml", "kind: openai")
    said = (
        f"gate.yml:{line}: key `system`: suite 'support': the API key for api.openai.com is read "
        "from the environment variable OPENAI_API_KEY, which is not set"
    )
    for command in ("validate", "run"):
        done = gate(project, command)
        assert done.code == 2 and said in done.err, done.err
        assert "system.api_key_env" not in done.err and "Traceback" not in done.err
    assert gate(project, "validate", OPENAI_API_KEY="sk-set").code == 0


def test_a_key_variable_of_the_users_is_named_at_its_own_line(project: Project) -> None:
    chat_project(project, api_key_env="SUPPORT_BOT_KEY")
    line = line_of(project.root / "gate.yml", "api_key_env")
    done = gate(project, "validate")
    assert done.code == 2
    assert f"gate.yml:{line}: key `system.api_key_env`: suite 'support':" in done.err
    assert "environment variable SUPPORT_BOT_KEY, which is not set" in done.err


def test_a_provider_switched_in_the_model_config_is_named_there(project: Project) -> None:
    chat_project(project, "model: claude-3-5-haiku-latest\nprovider: anthropic\n")
    done = gate(project, "validate", OPENAI_API_KEY="sk-openai-is-not-it")
    assert done.code == 2
    assert "config/model.yaml:2: key `provider`: suite 'support': the API key for " in done.err
    assert "api.anthropic.com is read from the environment variable ANTHROPIC_API_KEY" in done.err


def test_check_says_the_missing_key_at_its_place_too(project: Project) -> None:
    chat_project(project)
    root = project.root
    commit_main(root)
    (root / "prompts" / "ask.md.j2").write_text("Please answer: {{ question }}\n")
    done = gate(project, "check", "--base", "main", GATE_CACHE_DIR=str(root.parent / "cache"))
    assert done.code == 2, done.err
    assert "key `system`: suite 'support': the API key for api.openai.com" in done.err
    assert "key `system.api_key_env`: environment variable" not in done.err


# --- model config keys -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model_config", "line", "said"),
    [
        ("modle: gpt-4o-mini\n", 1, "key `modle`: unknown key (did you mean `model`?)"),
        (
            "model: gpt-4o-mini\nmax_token: 300\n",
            2,
            "key `max_token`: unknown key (did you mean `max_tokens`?)",
        ),
        (
            "model: gpt-4o-mini\ntop_k: 5\n",
            2,
            "key `top_k`: OpenAI's chat completions has no parameter `top_k`",
        ),
        (
            "model: claude-3-5-haiku-latest\nprovider: anthropic\nfrequency_penalty: 1\n",
            3,
            "key `frequency_penalty`: Anthropic's Messages API has no parameter",
        ),
    ],
)
def test_model_config_keys_are_checked_by_validate_and_run(
    project: Project, server: ModelServer, model_config: str, line: int, said: str
) -> None:
    chat_project(project, model_config, base_url=server.openai_base_url)
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    for command in ("validate", "run"):
        done = gate(project, command, **keys)
        assert done.code == 2, done.err
        assert f"config/model.yaml:{line}: {said}" in done.err
    assert "extra_body:" in done.err  # where a parameter only your server takes goes
    assert server.requests == 0


def test_extra_body_is_sent_as_it_is(project: Project, server: ModelServer) -> None:
    config = "model: gpt-4o-mini\nseed: 7\nextra_body: {top_k: 40, min_p: 0.05}\n"
    chat_project(project, config, base_url=server.openai_base_url)
    assert gate(project, "validate").code == 0
    done = gate(project, "run", "--no-cache")
    assert done.code == 0, done.err
    body = server.log[0].body
    assert (body["seed"], body["top_k"], body["min_p"]) == (7, 40, 0.05)
    assert "extra_body" not in body


# --- prompt variables --------------------------------------------------------------------------


def test_an_undefined_prompt_variable_is_said_once_with_the_case_ids(
    project: Project, server: ModelServer
) -> None:
    chat_project(project, n=20, base_url=server.openai_base_url)
    project.write("prompts/ask.md.j2", "Answer: {{ question }} for {{ customer }}\n")
    done = gate(project, "validate")
    assert done.code == 2
    errors = [line for line in done.err.splitlines() if line.startswith("gate: error:")]
    assert errors == [
        "gate: error: cases/c.jsonl:1: key `input`: the prompt does not render for the input "
        "of 20 cases (q00, q01, q02, q03, q04, q05, q06, q07, q08, q09 and 10 more): prompt "
        "prompts/ask.md.j2:1: 'customer' is undefined"
    ]
    run = gate(project, "run")  # each case is an error; the terminal says it once
    assert run.code == 3 and run.err.count("'customer' is undefined") == 1, run.err
    assert "[run]   20 cases (q00, q01, q02, …): system error: prompt prompts/ask.md.j2:1:" in (
        run.err
    )
    assert server.requests == 0


# --- a python target's signature ---------------------------------------------------------------

REPLY = """
import functools


def reply(question: str) -> str:
    return f"the answer to {question}"


def answer(input: dict) -> str:
    return reply(input["question"])


def traced(func):
    @functools.wraps(func)
    def inner(*args, **kwargs):
        return func(*args, **kwargs)

    return inner


@traced
def wrapped(question: "str | None") -> str:
    return str(question)


def two(question, lang):
    return question
"""


def python_project(project: Project, target: str) -> Project:
    project.write("bot/__init__.py", "")
    project.write("bot/app.py", REPLY)
    project.cases("c.jsonl", [{"id": "a", "input": {"question": "hi"}, "expect": {}}])
    project.config({"cases": "c.jsonl", "system": {"kind": "python", "target": target}})
    return project


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("bot.app:reply", "bot.app:reply takes `question: str`, but the gate calls it"),
        ("bot.app:wrapped", "bot.app:wrapped takes `question: 'str | None'`"),  # through wraps
        ("bot.app:two", "bot.app:two needs 2 arguments (`question`, `lang`)"),
    ],
)
def test_a_target_that_cannot_take_the_input_dict_is_refused_with_the_fix(
    project: Project, target: str, said: str
) -> None:
    python_project(project, target)
    line = line_of(project.root / "gate.yml", "target:")
    for command in ("validate", "run"):
        done = gate(project, command)
        assert done.code == 2, done.err
        assert f"gate.yml:{line}: key `system.target`: " in done.err
        assert said in done.err and "def answer(input: dict) -> str: return " in done.err
    assert not (project.root / "reports").exists()


def test_a_target_that_takes_the_dict_runs(project: Project) -> None:
    python_project(project, "bot.app:answer")
    assert gate(project, "validate").code == 0
    done = gate(project, "run")
    assert done.code == 0, done.err
    _, lines, _ = project.read_report()
    assert lines[0]["output"] == "the answer to hi"


def init(root: Path, *args: str) -> Done:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return run_gate("init", *args, cwd=root, env=env)


def init_repo(tmp_path: Path, app: str) -> Path:
    root = tmp_path / "repo"
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__init__.py").write_text("")
    (root / "bot" / "app.py").write_text(app)
    (root / "openai").mkdir()  # the SDK init looks for, importable from the checkout
    (root / "openai" / "__init__.py").write_text("")
    git(root, "init", "-q", "-b", "main")
    return root


def test_init_refuses_a_function_that_cannot_take_the_dict(tmp_path: Path) -> None:
    root = init_repo(tmp_path, "import openai\n\n\ndef reply(question: str) -> str:\n    ...\n")
    done = init(root)
    assert done.code == 2
    assert "bot/app.py:4: bot.app:reply takes `question: str`, but the gate calls it" in done.err
    assert "then `gate init --target bot.app:answer`" in done.err
    assert not (root / "gate.yml").exists()
    named = init(root, "--target", "bot.app:reply")
    assert named.code == 2 and "bot.app:reply takes `question: str`" in named.err


def test_init_prefers_the_function_that_takes_the_dict(tmp_path: Path) -> None:
    app = "import openai\n" + REPLY.split("def traced")[0]
    root = init_repo(tmp_path, app)
    done = init(root)
    assert done.code == 0, done.err
    assert "target: bot.app:answer" in (root / "gate.yml").read_text()
    checked = gate_here("validate", cwd=root)
    assert checked.code == 0, checked.err
