"""Bad input the PR brings is exit 2 naming the PR's file and line, deterministically: it is
found while planning, before either side runs, and a side that fails never stops the other
before that side has started (so its own bad input is always seen)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.servers.git_http import git
from helpers.servers.world import REPO_ROOT, WORDS, project_files

from gate.errors import InputError
from gate.flow.pr import run_check
from gate.inputs.cases import load_cases


def project(tmp_path: Path, files: dict[str, str | None] | None = None) -> Path:
    """The support project on `main`, and a branch `pr` checked out on top of it."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, {**project_files("base", WORDS), **(files or {})})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def write(root: Path, files: dict[str, str | None]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text or "")


def commit(root: Path, files: dict[str, str | None]) -> None:
    write(root, files)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pr")


def check(root: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(tmp_path / "c")}
    run_check(root, root / "gate.yml", "main", tmp_path / "out", environ=env)


def test_a_non_utf8_case_file_names_the_file_and_the_line(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_bytes(
        b'{"id": "a", "input": {}}\n{"id": "b", "input": {"q": "caf\xe9"}}\n'
    )
    with pytest.raises(InputError) as caught:
        load_cases("cases.jsonl", tmp_path)
    assert str(caught.value) == (
        "cases.jsonl:2: not UTF-8 text: byte 0xe9 at column 32 (invalid continuation byte); "
        "save the file as UTF-8"
    )


def test_a_duplicate_id_in_the_prs_case_file_is_exit_2_every_time(tmp_path: Path) -> None:
    """It was exit 3 ("the base side could not run") in 7 of 20 runs when the base side,
    reading the same file, failed first. Now planning finds it before either side starts."""
    root = project(tmp_path)
    rows = (root / "cases" / "support.jsonl").read_text().splitlines()
    commit(root, {"cases/support.jsonl": "\n".join([*rows, rows[0]]) + "\n"})
    messages = set()
    for _ in range(20):
        with pytest.raises(InputError) as caught:
            check(root, tmp_path)
        messages.add(str(caught.value))
    assert messages == {
        "cases/support.jsonl:7: key `id`: duplicate case id 'faq-001' "
        "(first defined at cases/support.jsonl:1)"
    }
    assert not (tmp_path / "out").exists()  # no side ran
    done = run_gate("check", "--base", "main", cwd=root, env={"GATE_CACHE_DIR": str(tmp_path)})
    assert done.code == 2 and done.err.strip().splitlines() == [f"gate: error: {messages.pop()}"]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"cases/support.jsonl": '{"id": "x", "input": {}, "expect": {"must_includ": ["a"]}}\n'},
         "cases/support.jsonl:1:"),
        ({"gate.yml": "watch: [prompts/**]\nsuites:\n  - name: support\n    cases: nope/*.jsonl\n"
                      "    system: {kind: python, target: 'app.bot:answer'}\n"},
         "gate.yml:4: key `cases`: suite 'support': no case files match 'nope/*.jsonl'"),
        ({"gate.yml": "suites:\n  - name: support\n    cases: cases/support.jsonl\n"
                      "    system: {kind: openai, model_config: m.yaml, prompt: p.j2}\n",
          "m.yaml": "model: m\n", "p.j2": 'x\n{% include "../outside.md" %}\n'},
         "p.j2:2: cannot load '../outside.md': it is outside the checkout"),
        ({"gate.yml": "suites:\n  - name: support\n    cases: cases/support.jsonl\n"
                      "    system: {kind: openai, model_config: m.yaml, prompt: p.j2}\n",
          "m.yaml": "model: m\ntemperature: hot\n", "p.j2": "x"},
         "m.yaml:2: key `temperature`"),
        ({"gate.yml": "templates: tpl\nsuites:\n  - name: support\n    cases: cases/support.jsonl\n"
                      "    system: {kind: python, target: 'app.bot:answer'}\n",
          "tpl/comment.md.j2": "ok\n{% for %}\n"},
         "tpl/comment.md.j2:2: template error"),
    ],
    ids=["unknown-expect-key", "cases-glob-matches-nothing", "include-outside", "model-config",
         "template-syntax"],
)  # fmt: skip
def test_what_the_pr_brings_is_refused_before_any_side_runs(
    tmp_path: Path, files: dict[str, str | None], expected: str
) -> None:
    root = project(tmp_path)
    commit(root, files)
    with pytest.raises(InputError) as caught:
        check(root, tmp_path)
    assert expected in str(caught.value)
    assert not (tmp_path / "out").exists()


SLOW_BROKEN_APP = """
import time

time.sleep(1.5)
raise RuntimeError("the head's module is broken")
"""


def test_the_heads_own_start_error_wins_when_the_base_fails_first(tmp_path: Path) -> None:
    """What planning cannot see without running the PR's code (its module failing on import)
    is still the PR's input error, even when the base side, broken on its own, fails first:
    the head is not stopped before it has started."""
    base_yml = (
        "suites:\n  - name: support\n    cases: cases/support.jsonl\n"
        "    system: {kind: replay, file: recorded/missing.jsonl}\n"
    )
    root = project(tmp_path, {"gate.yml": base_yml})
    head_yml = base_yml.replace(
        "{kind: replay, file: recorded/missing.jsonl}", "{kind: python, target: 'app.bot:answer'}"
    )
    commit(root, {"gate.yml": head_yml, "app/bot.py": SLOW_BROKEN_APP})
    with pytest.raises(InputError) as caught:
        check(root, tmp_path)
    assert "the head's module is broken" in str(caught.value)
    assert not (tmp_path / "out" / "support" / "base.jsonl").exists()  # failed at its start
