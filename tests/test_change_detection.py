"""Change detection sees what the system reads: each PR here changes only a file the system
reads without naming it in gate.yml, in a real git repository, and the suite runs."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest
from helpers.flows import check as check_flow
from helpers.servers.git_http import git
from helpers.servers.world import REPO_ROOT

from gate.flow.git import FileChange, GitRepo
from gate.flow.plan import FlowPlan, plan_flow
from gate.flow.request import FlowIO, FlowRequest, Revisions
from gate.flow.triggers import base_watch, relevant_changes
from gate.inputs.config import load_config

CASES = "".join(
    json.dumps({"id": f"c{i}", "input": {"q": w}, "expect": {"must_include": [w]}}) + "\n"
    for i, w in enumerate(["fees", "card"])
)


def repo_with(tmp_path: Path, system: dict, files: dict[str, str], **config: object) -> Path:
    """A repository on `main` holding gate.yml (one suite with `system`), the cases and
    `files`; symlinks are written as `-> target`."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    suite = {"name": "s", "cases": "cases.jsonl", "system": system}
    write(root, {
        "gate.yml": json.dumps({**config, "suites": [suite]}, indent=1) + "\n",
        "cases.jsonl": CASES,
        **files,
    })  # fmt: skip
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("-> "):
            path.symlink_to(text.removeprefix("-> "))
        else:
            path.write_text(textwrap.dedent(text))


def pr(root: Path, files: dict[str, str]) -> None:
    git(root, "checkout", "-q", "-b", "pr")
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")


def plan(root: Path) -> FlowPlan:
    repo = GitRepo(root)
    request = FlowRequest(
        revisions=Revisions(repo, repo.resolve_ref("main", fetch=False), repo.head_sha()),
        config=load_config(root / "gate.yml"),
        config_at="gate.yml",
        io=FlowIO(root.parent / "out", environ={**os.environ, "OPENAI_API_KEY": "sk-test"}),
    )
    return plan_flow(request)


def runs(root: Path, changed: str) -> bool:
    (suite,) = plan(root).suites
    assert [str(c) for c in suite.changes] == ([f"M {changed}"] if suite.runs else [])
    return suite.runs


ANSWER = """
import json, sys
from helpers import words

print(json.dumps({"text": " ".join(words())}))
"""


def test_a_command_systems_script_and_what_it_imports(tmp_path: Path) -> None:
    root = repo_with(
        tmp_path,
        {"kind": "command", "command": ["{python}", "answer.py"]},
        {"answer.py": ANSWER, "helpers.py": "def words():\n    return ['fees', 'card']\n"},
    )
    pr(root, {"answer.py": ANSWER + "# edited\n"})
    assert runs(root, "answer.py")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "pr")
    pr(root, {"helpers.py": "def words():\n    return ['fees']\n"})
    assert runs(root, "helpers.py")


def test_a_command_module_run_with_dash_m_and_a_config_argument(tmp_path: Path) -> None:
    root = repo_with(
        tmp_path,
        {"kind": "command", "command": ["{python}", "-m", "tool.main", "--rules=rules.txt"]},
        {"tool/__init__.py": "", "tool/main.py": "from . import fmt\n", "tool/fmt.py": "",
         "rules.txt": "be kind\n"},
    )  # fmt: skip
    pr(root, {"tool/fmt.py": "X = 1\n"})
    assert runs(root, "tool/fmt.py")
    git(root, "checkout", "-q", "main")
    git(root, "branch", "-qD", "pr")
    pr(root, {"rules.txt": "be rude\n"})
    assert runs(root, "rules.txt")


@pytest.mark.parametrize(
    "changed",
    ["helpers.py", "pkg/__init__.py", "pkg/util.py", "pkg/deep/more.py", "sdk/vendor.py"],
)
def test_the_modules_a_python_target_imports(tmp_path: Path, changed: str) -> None:
    root = repo_with(
        tmp_path,
        {"kind": "python", "target": "app:answer"},
        {
            "app.py": """
                import helpers
                from pkg.util import shout

                def answer(inputs):
                    from vendor import tag  # inside a function: still an import
                    return {"text": shout(helpers.word()) + tag}
            """,
            "helpers.py": "def word():\n    return 'fees card'\n",
            "pkg/__init__.py": "",
            "pkg/util.py": "from .deep import more\n\ndef shout(s):\n    return s\n",
            "pkg/deep/__init__.py": "",
            "pkg/deep/more.py": "",
            "sdk/vendor.py": "tag = ''\n",
            "unrelated.py": "",
        },
        sandbox={"pythonpath": ["sdk"]},
    )
    pr(root, {changed: "# edited\n"})
    assert runs(root, changed)


def test_a_module_the_target_does_not_import_is_not_watched(tmp_path: Path) -> None:
    root = repo_with(
        tmp_path,
        {"kind": "python", "target": "app:answer"},
        {"app.py": "import os\n\ndef answer(inputs):\n    return {'text': ''}\n", "other.py": ""},
    )
    pr(root, {"other.py": "# edited\n"})
    (suite,) = plan(root).suites
    assert not suite.runs and "no watched file changed" in (suite.skip_reason or "")


CHAT = {"kind": "openai", "model_config": "config/model.yaml", "prompt": "prompts/support.md"}


@pytest.mark.parametrize(
    ("files", "changed"),
    [
        (
            {
                "shared/support.md": "Answer {{ q }}\n",
                "prompts/support.md": "-> ../shared/support.md",
            },
            "shared/support.md",
        ),
        (
            {"shared/prompts/support.md": "Answer {{ q }}\n", "prompts": "-> shared/prompts"},
            "shared/prompts/support.md",
        ),
        (
            {
                "prompts/support.md": '{% include "parts/rules.md" %}\n{{ q }}\n',
                "prompts/parts/rules.md": '{% import "lib/m.j2" as m %}{{ m.be() }}\n',
                "lib/m.j2": "{% macro be() %}Be kind.{% endmacro %}",
            },
            "lib/m.j2",
        ),
        (
            {
                "prompts/support.md": "{{ q }}\n",
                "config/model.yaml": "model: m\nsystem: sys/s.md\n",
                "sys/s.md": '{% extends "sys/base.md" %}',
                "sys/base.md": "Be brief.",
            },
            "sys/base.md",
        ),
    ],
    ids=["symlinked-prompt", "symlinked-folder", "include-of-an-include", "system-prompt-extends"],
)
def test_what_a_prompt_reads(tmp_path: Path, files: dict[str, str], changed: str) -> None:
    root = repo_with(tmp_path, CHAT, {"config/model.yaml": "model: m\n", **files})
    pr(root, {changed: "Changed {{ q }}\n"})
    assert runs(root, changed)


def test_a_prompt_that_cannot_be_read_runs_the_suite_and_the_run_says_why(
    tmp_path: Path,
) -> None:
    root = repo_with(
        tmp_path, CHAT, {"config/model.yaml": "model: m\n", "prompts/support.md": "{{ q }}\n"}
    )
    pr(root, {"prompts/support.md": '{% include "gone.md" %}\n'})
    with pytest.raises(Exception, match=r"prompts/support\.md:1: cannot load 'gone\.md'"):
        plan(root)


def test_the_bases_watch_counts_whatever_the_heads_says() -> None:
    """A head `watch` that excludes a folder does not cancel the base's watching it."""
    base = load_config_text("watch: ['docs/**']\nsuites: [{name: s, cases: c.jsonl, "
                            "system: {kind: replay, file: r.jsonl}}]\n")  # fmt: skip
    change = [FileChange("M", "docs/faq.md")]
    head = ["docs/**", "!docs/**"]
    assert relevant_changes(change, head) == []
    assert relevant_changes(change, head, base_watch(base, "s")) == change
    assert base_watch(None, "s") == []


def load_config_text(text: str):  # type: ignore[no-untyped-def]
    from gate.inputs.config import read_config

    return read_config(text, Path("gate.yml"))


def test_a_pr_that_narrows_watch_still_runs(tmp_path: Path) -> None:
    files = {"prompts/support.md": "{{ q }}\n", "config/model.yaml": "model: m\n",
             "docs/faq.md": "fees\n"}  # fmt: skip
    root = repo_with(tmp_path, CHAT, files, watch=["docs/**"])
    config = json.loads((root / "gate.yml").read_text())
    pr(root, {"docs/faq.md": "nothing\n", "gate.yml": json.dumps({**config, "watch": []})})
    (suite,) = plan(root).suites
    assert suite.runs and {str(c) for c in suite.changes} == {"M docs/faq.md", "M gate.yml"}


def test_a_changed_script_runs_both_sides_end_to_end(tmp_path: Path) -> None:
    """`gate check` of a PR that changes only the command's script: it runs, and fails."""
    root = repo_with(
        tmp_path,
        {"kind": "command", "command": ["{python}", "answer.py"]},
        {"answer.py": ANSWER, "helpers.py": "def words():\n    return ['fees', 'card']\n"},
    )
    pr(root, {"answer.py": ANSWER.replace('" ".join(words())', '"fees"')})
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(tmp_path / "c")}
    (outcome,) = check_flow(root, root / "gate.yml", "main", tmp_path / "out", environ=env)
    assert outcome.comparison.verdict == "fail" and outcome.comparison.regressions == ["c1"]
    assert "answer.py" in outcome.markdown  # its diff: the runs hashed it
