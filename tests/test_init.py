"""`gate init` in fresh repositories of several shapes, then `gate validate` and `gate check`
on what it wrote, against the OpenAI-compatible stand-in on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.pr_comment import section
from helpers.servers.git_http import git
from helpers.servers.model_server import ModelServer
from helpers.servers.world import REPO_ROOT

WORKFLOW = ".github/workflows/eval-gate.yml"


@pytest.fixture(scope="module")
def server() -> Iterator[ModelServer]:
    with ModelServer(api_key="sk-test") as running:
        yield running


def gate(
    repo: Path, *args: str, server: ModelServer | None = None
) -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "INPUT_", "OPENAI_", "ANTHROPIC_"))
    }
    env.update({"PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(repo.parent / "cache")})
    if args[:1] == ("validate",):  # validate calls nothing, but asks for the keys a run reads
        env.update({"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": "sk-test"})
    if server is not None:
        env.update({
            "OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "sk-test",
            "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "sk-test",
        })  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], cwd=repo, env=env, capture_output=True,
        text=True, timeout=300, check=False,
    )  # fmt: skip


def make_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the app")
    git(root, "checkout", "-q", "-b", "adopt-the-gate")
    return root


def init_validate_check(repo: Path, server: ModelServer) -> tuple[dict, str]:
    """Run the three commands a new user runs; return gate.yml and `gate init`'s output."""
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    for name in ("gate.yml", WORKFLOW):
        assert f"wrote {name}" in done.stdout
    assert "gate validate -c gate.yml\n  gate check -c gate.yml " in done.stdout
    config = yaml.safe_load((repo / "gate.yml").read_text())
    validated = gate(repo, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout.rstrip().endswith("ok")
    server.reset_counts()
    checked = gate(repo, "check", "--base", "main", server=server)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "verdict: pass" in checked.stderr
    assert checked.stdout.startswith("<!-- eval-gate -->\n")  # one comment for the PR
    for suite in config["suites"]:
        assert section(checked.stdout, suite["name"])
        # main has no gate.yml yet: the suite is new, judged on the head alone
        assert f"[gate] suite {suite['name']}: running head (a new suite)" in checked.stderr
        assert f"{suite['name']}: pass: " in checked.stderr
        rows = [json.loads(line) for line in (repo / suite["cases"]).read_text().splitlines()]
        assert [r["id"] for r in rows] == ["example-1", "example-2", "example-3"]
        assert all("replace" in r["metadata"]["example"] for r in rows)
    workflow = yaml.safe_load((repo / WORKFLOW).read_text())
    steps = workflow["jobs"]["gate"]["steps"]
    assert any(step.get("uses", "").startswith("eval-gate/eval-gate@v") for step in steps)
    return config, done.stdout


def test_prompts_folder_and_model_config(tmp_path: Path, server: ModelServer) -> None:
    repo = make_repo(tmp_path / "repo", {
        "prompts/support.md.j2": "You answer customers.\nQuestion: {{ question }}\nPlan: {{ plan }}\n",
        "config/model.yaml": "model: gpt-4o-mini\ntemperature: 0\n",
        "README.md": "# support bot\n",
        "docker-compose.yml": "services:\n  app:\n    image: app\n",
    })  # fmt: skip
    config, _ = init_validate_check(repo, server)
    assert config["watch"] == ["prompts/**", "config/model.yaml"]
    assert config["suites"] == [{
        "name": "support", "cases": "evals/cases.jsonl",
        "system": {"kind": "openai", "model_config": "config/model.yaml", "prompt": "prompts/support.md.j2"},
    }]  # fmt: skip
    first = json.loads((repo / "evals/cases.jsonl").read_text().splitlines()[0])
    assert first["input"] == {"plan": "example plan 1", "question": "example question 1"}
    # Both sides asked the model; the prompt was rendered with each case's input.
    assert server.requests >= 3
    assert any("example plan 1" in json.dumps(entry.body) for entry in server.log)
    assert "OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}" in (repo / WORKFLOW).read_text()
    # Adopted: the files land on main; the next PR edits the prompt and is compared with it.
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adopt the gate")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "adopt-the-gate")
    git(repo, "checkout", "-q", "-b", "reword")
    (repo / "prompts/support.md.j2").write_text("Answer kindly.\nQ: {{ question }} ({{ plan }})\n")
    server.reset_counts()
    pr = gate(repo, "check", "--base", "main", server=server)
    assert pr.returncode == 0, pr.stdout + pr.stderr
    assert "[gate] suite support: running base and head" in pr.stderr
    assert "support: pass: pass rate 100.0% -> 100.0% (±0.0 points)" in pr.stderr
    # The base is the prompt the first check ran: its answers come from the cache.
    assert server.requests == 3
    base = json.loads((repo / ".eval-gate/reports/support/base.summary.json").read_text())
    assert base["cache"]["hits"] == 3


def test_a_model_configs_system_prompt_is_no_suite_of_its_own(
    tmp_path: Path, server: ModelServer
) -> None:
    """The file a model config's `system:` names is that config's system message: a suite
    that sent it as the user message would evaluate a prompt nobody uses."""
    repo = make_repo(tmp_path / "repo", {
        "prompts/answer.txt": "{{ question }}\n",
        "prompts/system.txt": "You are the support bot of Acme.\n",
        "config/model.yaml": "model: gpt-4o-mini\nsystem: prompts/system.txt\n",
    })  # fmt: skip
    config, out = init_validate_check(repo, server)
    assert [s["system"]["prompt"] for s in config["suites"]] == ["prompts/answer.txt"]
    assert "skipped prompts/system.txt: the system prompt of config/model.yaml" in out
    assert "found prompt template prompts/system.txt" not in out
    assert config["watch"] == ["prompts/**", "config/model.yaml"]
    # It reached the model as the system message of the one suite.
    systems = [m for e in server.log for m in e.body["messages"] if m["role"] == "system"]
    assert systems and all(m["content"] == "You are the support bot of Acme." for m in systems)


def test_prompts_beside_the_code_pair_with_the_nearest_config(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = make_repo(tmp_path / "repo", {
        "app/support/reply_prompt.txt": "Reply to: {{ message }}\n",
        "app/support/settings.yaml": "model: gpt-4o\nmax_tokens: 300\n",
        "app/summary/summarize.prompt": "Summarise: {{ text }}\n",
        "app/summary/model.yml": "model: claude-3-5-haiku-latest\n",
        "app/support/loader.py": "def load(path):\n    return open(path).read()  # reply_prompt.txt\n",
        "app/__init__.py": "",
    })  # fmt: skip
    config, out = init_validate_check(repo, server)
    systems = {s["name"]: s["system"] for s in config["suites"]}
    assert systems == {
        "reply_prompt": {"kind": "openai", "model_config": "app/support/settings.yaml", "prompt": "app/support/reply_prompt.txt"},
        "summarize": {"kind": "anthropic", "model_config": "app/summary/model.yml", "prompt": "app/summary/summarize.prompt"},
    }  # fmt: skip
    assert sorted(s["cases"] for s in config["suites"]) == [
        "evals/reply_prompt.jsonl",
        "evals/summarize.jsonl",
    ]
    assert "python" not in out  # `load(path)` is a loader, not an entry point
    workflow = (repo / WORKFLOW).read_text()
    assert "OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n" in workflow
    assert "ANTHROPIC_API_KEY: ${{ secrets.ANTHROPIC_API_KEY }}\n" in workflow
    assert server.counts["requests"] >= 6


def test_python_app_with_an_entry_point(tmp_path: Path, server: ModelServer) -> None:
    app = '''import json, os, pathlib, urllib.request

import yaml

HERE = pathlib.Path(__file__).parent


def answer(question):
    """The app's entry point: one question in, the model's reply out."""
    model = yaml.safe_load((HERE / "model.yaml").read_text())["model"]
    prompt = (HERE / "prompts" / "system.txt").read_text()
    body = {"model": model, "messages": [
        {"role": "system", "content": prompt},
        {"role": "user", "content": question["text"] + " (" + question.get("lang", "en") + ")"},
    ]}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json",
                 "Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["choices"][0]["message"]["content"]


def load_history(path):
    return []
'''
    repo = make_repo(tmp_path / "repo", {
        "assistant/bot.py": app,
        "assistant/model.yaml": "model: gpt-4o-mini\n",
        "assistant/prompts/system.txt": "You are a helpful assistant.\n",
        "tests/test_bot.py": "def test_answer(question):\n    pass\n",
    })  # fmt: skip
    config, out = init_validate_check(repo, server)
    assert config["suites"] == [
        {
            "name": "bot",
            "cases": "evals/cases.jsonl",
            "system": {"kind": "python", "target": "assistant.bot:answer"},
        }
    ]
    assert config["watch"] == ["assistant/prompts/**", "assistant/model.yaml"]
    first = json.loads((repo / "evals/cases.jsonl").read_text().splitlines()[0])
    assert first["input"] == {"text": "example text 1", "lang": "example lang 1"}
    assert "system: python `assistant.bot:answer` (assistant/bot.py)" in out
    assert server.requests >= 3  # the function itself called the model on both sides


def test_never_overwrites_without_force(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        "prompts/a.j2": "{{ q }}", "model.yaml": "model: m\n",
        WORKFLOW: "name: mine\n",
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert ".github/workflows/eval-gate.yml already exist(s); nothing was written" in done.stderr
    assert not (repo / "gate.yml").exists()
    assert (repo / WORKFLOW).read_text() == "name: mine\n"
    forced = gate(repo, "init", "--force")
    assert forced.returncode == 0, forced.stderr
    assert f"overwrote {WORKFLOW}" in forced.stdout and "wrote gate.yml" in forced.stdout
    assert (repo / WORKFLOW).read_text() == (REPO_ROOT / "examples/pr-gate.yml").read_text()


def test_nothing_to_gate_and_bad_flags_are_clear_errors(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"main.py": "print('hi')\n", "README.md": "# x\n"})
    done = gate(repo, "init")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "found no prompt template" in done.stderr and "--target module:function" in done.stderr
    (repo / "p.j2").write_text("{{ q }}")
    no_config = gate(repo, "init")
    assert no_config.returncode == 2 and "but no model config" in no_config.stderr
    bad = gate(repo, "init", "--prompt", "p.j2", "--model-config", "README.md")
    assert bad.returncode == 2
    assert "README.md: key `--model-config`: needs a string `model:` key" in bad.stderr
    (repo / "m.yaml").write_text("model: gpt-4o\n")
    named = gate(repo, "init", "--prompt", "p.j2", "--model-config", "m.yaml")
    assert named.returncode == 0, named.stderr
    assert gate(repo, "validate").returncode == 0


def test_a_prompt_that_reads_the_input_object_gets_its_keys(tmp_path: Path) -> None:
    """`{{ input.question }}` needs `question` in the case input, not a key named `input`."""
    repo = make_repo(tmp_path / "repo", {
        "prompts/a.j2": "{{ input.question }} in {{ input['lang'] }} ({{ input.id }}), {{ tone }}",
        "model.yaml": "model: m\n",
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    first = json.loads((repo / "evals/cases.jsonl").read_text().splitlines()[0])
    assert sorted(first["input"]) == ["lang", "question", "tone"]
    validated = gate(repo, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def gate_step(repo: Path) -> dict:
    steps = yaml.safe_load((repo / WORKFLOW).read_text())["jobs"]["gate"]["steps"]
    return next(s for s in steps if s.get("uses", "").startswith("eval-gate/eval-gate@"))


def test_the_workflow_passes_the_key_the_system_reads(tmp_path: Path) -> None:
    """A model config's `provider:` and `api_key_env:`, and a Python app's SDK, decide the
    system's kind and the secret the workflow passes: a wrong one fails the first PR's run."""
    repo = make_repo(tmp_path / "repo", {
        "prompts/a.j2": "{{ q }}",
        "model.yaml": "model: house-model\nprovider: anthropic\napi_key_env: HOUSE_KEY\n",
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    suite = yaml.safe_load((repo / "gate.yml").read_text())["suites"][0]
    assert suite["system"]["kind"] == "anthropic"
    env = gate_step(repo)["env"]
    assert env == {"HOUSE_KEY": "${{ secrets.HOUSE_KEY }}"}
    app = make_repo(tmp_path / "app", {
        "bot.py": "import anthropic\n\ndef answer(question):\n    return question['q']\n",
    })  # fmt: skip
    done = gate(app, "init")
    assert done.returncode == 0, done.stderr
    env = gate_step(app)["env"]
    assert env == {"ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"}


def test_example_inputs_have_the_shape_the_prompt_reads(tmp_path: Path) -> None:
    """A variable the prompt loops over is a list, one it reads keys from a mapping: strings
    there fail `gate validate` ('str object' has no attribute 'name')."""
    repo = make_repo(tmp_path / "repo", {
        "prompts/a.j2": "Hi {{ user.name }} ({{ user['plan'] }}). {{ tone.upper() }}\n"
        "{% for d in docs %}{{ d.text }}{% endfor %}{% for t in input.tags %}{{ t }}{% endfor %}",
        "model.yaml": "model: m\n",
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    first = json.loads((repo / "evals/cases.jsonl").read_text().splitlines()[0])
    assert first["input"] == {
        "docs": [], "tags": [], "tone": "example tone 1",
        "user": {"name": "example name 1", "plan": "example plan 1"},
    }  # fmt: skip
    validated = gate(repo, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr


def test_a_nunjucks_prompt_is_skipped_with_its_reason(tmp_path: Path, server: ModelServer) -> None:
    """promptfoo's prompts are nunjucks: a filter neither engine has (`shout`) is no traceback,
    the prompt is reported as skipped and the others are used; nunjucks' `dump` is known."""
    repo = make_repo(tmp_path / "repo", {
        "prompts/weather.txt": "Query: {{ query }}, Location: {{ (context | shout).location }}\n",
        "prompts/dumped.j2": "Data: {{ data | dump }}\n",
        "prompts/broken.j2": "Hello {{ name \n",
        "prompts/ask.j2": "Question: {{ question }}\n",
        "config/model.yaml": "model: gpt-4o-mini\n",
    })  # fmt: skip
    config, out = init_validate_check(repo, server)
    assert "Traceback" not in out
    assert (
        "  skipped prompts/weather.txt: not a jinja2 template: unknown filter `shout` (line 1)"
        in out
    )
    assert "  skipped prompts/broken.j2: not a jinja2 template: " in out
    assert [s["system"]["prompt"] for s in config["suites"]] == [
        "prompts/ask.j2", "prompts/dumped.j2"
    ]  # fmt: skip
    done = gate(repo, "init", "--force", "--prompt", "prompts/weather.txt")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (
        "prompts/weather.txt: key `--prompt`: not a jinja2 template: unknown filter `shout`"
        in done.stderr
    )
    only = make_repo(tmp_path / "only", {
        "prompts/weather.txt": "{{ (context | shout).location }}\n",
        "config/model.yaml": "model: gpt-4o-mini\n",
    })  # fmt: skip
    done = gate(only, "init")
    assert done.returncode == 2 and "Traceback" not in done.stderr + done.stdout
    assert "found no prompt template" in done.stderr


def test_a_promptfoo_prompt_file_with_separators_is_several_prompts(
    tmp_path: Path, server: ModelServer
) -> None:
    repo = make_repo(tmp_path / "repo", {
        "prompts/variants.txt": (
            "Answer briefly: {{ question }}\n---\nYou are a pirate. {{ question }} ({{ tone }})\n"
            "  ---  \n\n---\nTranslate to {{ language }}: {{ text }}\n"
        ),
        "config/model.yaml": "model: gpt-4o-mini\n",
    })  # fmt: skip
    config, out = init_validate_check(repo, server)
    prompts = [s["system"]["prompt"] for s in config["suites"]]
    assert prompts == [f"evals/prompts/variants-{n}.txt" for n in (1, 2, 3)]
    assert (repo / prompts[0]).read_text() == "Answer briefly: {{ question }}\n"
    assert (repo / prompts[1]).read_text() == "You are a pirate. {{ question }} ({{ tone }})\n"
    for name in prompts:
        assert f"wrote {name}" in out
    assert "is one of the prompts of prompts/variants.txt, split at ---" in out
    assert "evals/prompts/**" in config["watch"]
    cases = {
        s["name"]: json.loads((repo / s["cases"]).read_text().splitlines()[0])["input"]
        for s in config["suites"]
    }
    assert [sorted(i) for i in cases.values()] == [
        ["question"],
        ["question", "tone"],
        ["language", "text"],
    ]
    # each prompt reached the model on its own, never the file with its separators
    assert not any("---" in json.dumps(e.body) for e in server.log)


def test_a_promptfoo_config_becomes_the_suite(tmp_path: Path, server: ModelServer) -> None:
    """A repository that evaluates with promptfoo gets a gate.yml naming its config (no
    starter cases: its tests are the cases) and a workflow passing its providers' keys."""
    repo = make_repo(tmp_path / "repo", {
        "evals/promptfooconfig.yaml": (
            "prompts: [file://prompts/ask.txt]\n"
            "providers: [openai:gpt-4o-mini, {id: anthropic:messages:claude-3-5-haiku-latest}]\n"
            "tests:\n  - vars: {q: Paris}\n    assert: [{type: icontains, value: paris}]\n"
        ),
        "evals/prompts/ask.txt": "Tell me about {{ q }}\n",
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    assert "suite evals: the promptfoo config evals/promptfooconfig.yaml (2 pair(s):" in done.stdout
    assert (
        "replace them with real ones" not in done.stdout
        and not (repo / "evals/cases.jsonl").exists()
    )
    config = yaml.safe_load((repo / "gate.yml").read_text())
    assert config["suites"] == [{"name": "evals", "promptfoo": "evals/promptfooconfig.yaml"}]
    assert set(gate_step(repo)["env"]) == {"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
    validated = gate(repo, "validate")
    assert validated.returncode == 0, validated.stdout + validated.stderr
    checked = gate(repo, "check", "--base", "main", server=server)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "[gate] suite evals/prompts/ask.txt/openai:gpt-4o-mini: running head" in checked.stderr


def test_a_model_config_with_tools_gets_an_agent_example(tmp_path: Path) -> None:
    from helpers.agents import tool
    from helpers.servers.model_server import agent_model

    model = {"model": "gpt-4o-mini", "tools": [tool("lookup_order"), tool("issue_refund")]}
    repo = make_repo(tmp_path / "repo", {
        "prompts/support.md.j2": "You help customers.\n{{ question }}\n",
        "config/model.yaml": yaml.safe_dump(model),
    })  # fmt: skip
    done = gate(repo, "init")
    assert done.returncode == 0, done.stderr
    assert "config/model.yaml offers tools (lookup_order, issue_refund)" in done.stdout
    rows = [json.loads(line) for line in (repo / "evals/cases.jsonl").read_text().splitlines()]
    agent = rows[-1]
    assert agent["id"] == "example-agent" and set(agent["tools"]) == {
        "lookup_order",
        "issue_refund",
    }
    assert agent["expect"]["trajectory"]["calls"] == [{"name": "lookup_order"}]
    assert gate(repo, "validate").returncode == 0
    with ModelServer(responder=agent_model, spec_check=True) as agents:
        checked = gate(repo, "check", "--base", "main", server=agents)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert agents.violations == []
    head = [
        json.loads(x)
        for x in (repo / ".eval-gate/reports/support/head.jsonl").read_text().splitlines()
    ]
    (ran,) = [x for x in head[1:] if x["id"] == "example-agent"]
    assert [m["turn"] for m in ran["messages"] if m["role"] == "user"] == [1, 2]
