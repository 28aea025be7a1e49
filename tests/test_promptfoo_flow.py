"""A promptfoo suite through `gate check` in a real git repository: base and head each run their
own prompts and providers, measured with the same tests; change detection watches the config
and every file it reads; the comment shows the regressions and the per-metric pass rates."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.promptfoo_suites import gate_env, say_model
from helpers.servers.git_http import commit_main
from helpers.servers.model_server import ModelServer

CONFIG = """
prompts:
  - file://prompts/answer.txt
providers:
  - openai:chat:gpt-4o-mini
tests:
  - description: capital
    vars: {city: Paris}
    metadata: {severity: blocker}
    assert:
      - {type: icontains, value: paris, metric: mentions}
  - description: second city
    vars: file://vars/lyon.yaml
    assert:
      - {type: icontains, value: lyon, metric: mentions}
      - {type: starts-with, value: "I", metric: format}
  - file://tests/more.yaml
"""
FILES = {
    "gate.yml": "suites:\n  - name: cities\n    promptfoo: evals/promptfooconfig.yaml\n",
    "evals/promptfooconfig.yaml": CONFIG,
    "evals/prompts/answer.txt": "SAY: I like {{ city }}\n",
    "evals/vars/lyon.yaml": "city: Lyon\n",
    "evals/tests/more.yaml": "- description: third\n  vars: {city: Nice}\n  assert: [{type: contains, value: Nice}]\n",
    "README.md": "docs\n",
}


def dedented(files: dict[str, str]) -> dict[str, str]:
    return {name: textwrap.dedent(text).lstrip("\n") for name, text in files.items()}


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return commit_main(tmp_path / "repo", dedented(FILES), branch="pr")


MODEL_SERVER = {"responder": say_model}  # `server`'s options (conftest.py)


def change(repo: Path, name: str, text: str) -> None:
    (repo / name).write_text(text)
    git(repo, "commit", "-q", "-am", f"change {name}")


def check(repo: Path, server: ModelServer) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gate", "check", "--base", "main", "--format", "markdown", "--no-cache"],
        cwd=repo, env=gate_env(server, repo), capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_a_prompt_that_regresses_fails_with_its_metrics(repo: Path, server: ModelServer) -> None:
    change(repo, "evals/prompts/answer.txt", "SAY: We like a city\n")
    done = check(repo, server)
    assert done.returncode == 1, done.stderr
    comment = done.stdout
    assert "❌ **Eval Gate: fail** (cities)" in comment
    assert "**<code>capital</code>** · promptfooconfig · blocker · 🆕 new: pass → fail" in comment
    assert "| mentions | 3 | 100.0% | 0.0% | −100.0 |" not in comment  # third has no metric
    assert "| mentions | 2 | 100.0% | 0.0% | −100.0 |" in comment
    assert "| format | 1 | 100.0% | 0.0% | −100.0 |" in comment
    assert "<code>evals/prompts/answer.txt</code> · modified" in comment


def test_a_model_switch_runs_each_side_with_its_own_provider(
    repo: Path, server: ModelServer
) -> None:
    server.reset_counts()
    text = (repo / "evals/promptfooconfig.yaml").read_text()
    change(repo, "evals/promptfooconfig.yaml", text.replace("gpt-4o-mini", "gpt-4.1"))
    done = check(repo, server)
    assert done.returncode == 0, done.stdout + done.stderr
    models = {e.body["model"] for e in server.log}
    assert models == {"gpt-4o-mini", "gpt-4.1"}  # the base its own, the head its own
    assert "pass rate 100.0% → 100.0%" in done.stdout


@pytest.mark.parametrize(
    ("name", "text", "runs"),
    [
        ("evals/vars/lyon.yaml", "city: Lyon \n", True),
        ("evals/tests/more.yaml", FILES["evals/tests/more.yaml"] + "- vars: {city: Rome}\n", True),
        ("README.md", "more docs\n", False),
    ],
)
def test_every_file_the_config_reads_is_watched(
    repo: Path, server: ModelServer, name: str, text: str, runs: bool
) -> None:
    change(repo, name, text)
    done = check(repo, server)
    assert done.returncode == 0, done.stdout + done.stderr
    assert ("verdict: skipped" in done.stderr) is not runs, done.stderr


DOCUMENTED = {
    "gate.yml": "suites:\n  - name: support\n    promptfoo: evals/promptfooconfig.yaml\n",
    "evals/promptfooconfig.yaml": """
        description: the support bot, as promptfoo's documentation writes a config
        prompts: [file://prompts/reply.txt]
        providers: [{id: openai:chat:gpt-4o-mini, label: main}]
        evaluateOptions: {maxConcurrency: 4}
        defaultTest:
          assert:
            - $ref: "#/assertionTemplates/noApology"
        assertionTemplates:
          noApology: {type: not-icontains, value: sorry}
          greets: {type: starts-with, value: Hello, metric: tone}
        tests:
          - description: greets by name
            vars: {name: Ann, topic: refunds, answer: five days}
            assert:
              - $ref: "#/assertionTemplates/greets"
          - file://tests/*.csv
        scenarios:
          - file://scenarios/*.yaml
        """,
    "evals/prompts/reply.txt": "SAY: Hello {{ name }}! About {{ topic }}: {{ answer }}\n",
    "evals/tests/basics.csv": (
        "name,topic,answer,__expected,__metric\n"
        "Bo,refunds,we refund in 5 days,icontains: refund,facts\n"
        "Cy,parcels,parcels ship daily,icontains: ship,facts\n"
    ),
    "evals/scenarios/teams.yaml": """
        description: every team's greeting
        config:
          - vars: {topic: billing}
          - vars: {topic: shipping}
        tests:
          - description: the first word greets
            vars: {name: Di, answer: ok}
            assert:
              - {type: equals, value: Hello, transform: "file://transforms.py:first_word", metric: tone}
        """,
    "evals/transforms.py": "def first_word(output, context):\n    return output.split()[0]\n",
}


def test_a_config_as_promptfoos_documentation_writes_it_gates_a_pr(
    tmp_path: Path, server: ModelServer
) -> None:
    """assertionTemplates with $ref, CSV tests from a glob, scenarios from files and a
    transform in Python: the PR that drops the greeting fails, naming each broken case."""
    root = commit_main(tmp_path / "docs", dedented(DOCUMENTED), branch="pr")
    change(root, "evals/prompts/reply.txt", "SAY: {{ name }}! About {{ topic }}: {{ answer }}\n")
    done = check(root, server)
    assert done.returncode == 1, done.stdout + done.stderr
    comment = done.stdout
    assert "❌ **Eval Gate: fail** (support)" in comment
    assert "pass rate 100.0% → 40.0%" in done.stdout  # 5 cases: 2 CSV rows still pass
    assert "<code>greets by name</code>" in comment
    first = "**<code>the first word greets"
    broken = [line for line in comment.splitlines() if line.startswith(first)]
    assert len(broken) == 2 and all("· teams · major ·" in line for line in broken)  # each entry
    assert "transform" not in comment  # the transformed answer failed, not the gate
    assert "| tone | 3 | 100.0% | 0.0% | −100.0 |" in comment
    assert "| facts | 2 | 100.0% | 100.0% | ±0.0 |" in comment
