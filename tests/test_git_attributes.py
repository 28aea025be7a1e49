"""The PR's git attributes shape none of the gate's diffs (issue 28, class 6).

A PR that drops a word from its prompt (a regression) also adds a `.gitattributes` that calls
every file binary (`* -diff`, `*.md binary`) and hands the prompts to diff drivers the machine
happens to define (a `textconv` that prints "no change", an external diff that prints
nothing), and the user's own attributes file says `* -diff` too. git's own diff of the prompt
would read "binary file: no diff shown" or nothing at all; the gate diffs the stored bytes
itself, so the comment shows the removed line, through `gate check` (the commit and the
working tree) and `gate action`. The suite still runs: which files changed is read from a raw
diff of the two commits, which attributes do not touch.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import gate_here
from helpers.pr_scenarios import drop, make_project
from helpers.servers.world import WORDS, World, project_files, prompt

from gate.flow.git import GitRepo
from gate.flow.system_diff import file_diff

ATTRIBUTES = "* -diff\n*.md binary\n"  # the PR's: its prompt is binary
DRIVEN = "prompts/** diff=cover\n"  # the PR's: its prompts go to a driver the machine defines


@pytest.fixture
def drivers(tmp_path: Path) -> dict[str, str]:
    """A global git config with the drivers the PR's attributes name, and an attributes file of
    the user's that calls everything binary: what a runner's or a developer's git may hold."""
    folder = tmp_path / "gitconfig"
    folder.mkdir()
    (folder / "attributes").write_text("* -diff\n")
    (folder / "config").write_text(
        "[core]\n"
        f"\tattributesFile = {folder / 'attributes'}\n"
        '[diff "cover"]\n'
        "\ttextconv = sh -c 'echo TEXTCONV-SAYS-NOTHING-CHANGED'\n"
        "\tcommand = true\n"
    )
    return {"GIT_CONFIG_GLOBAL": str(folder / "config")}


def comment_diff(markdown: str) -> str:
    """The comment's section on the PR's changes to the system."""
    section = markdown[markdown.index("What the PR changed in the system") :]
    return section.split("</details>", 1)[0]


def honest(shown: str) -> bool:
    """The prompt's removed line is shown, and nothing a driver or an attribute made up."""
    made_up = ("binary file", "TEXTCONV-SAYS", "no difference")
    return "-say: fees" in shown and not any(words in shown for words in made_up)


def test_gate_check_shows_the_diff_whatever_the_attributes_say(
    tmp_path: Path, drivers: dict[str, str]
) -> None:
    author = make_project(tmp_path / "repo")
    author.write({"prompts/support.md": drop("fees")["prompt"], ".gitattributes": ATTRIBUTES})
    env = {**drivers, "GATE_CACHE_DIR": str(tmp_path / "cache")}
    for head in ("the working tree", "a commit"):
        if head == "a commit":
            author.commit("drop fees, call everything binary", {})
        done = gate_here(
            "check", "--base", "main", "--format", "markdown", cwd=author.path, env=env
        )
        assert done.code == 1, (head, done.err[-2000:])
        assert honest(comment_diff(done.out)), head


@pytest.mark.parametrize("attributes", [ATTRIBUTES, DRIVEN, ""])
def test_file_diff_reads_the_stored_bytes(
    tmp_path: Path, drivers: dict[str, str], attributes: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Between two commits and to the working tree, whatever the PR's attributes say (and with
    none, the user's `* -diff` alone)."""
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", drivers["GIT_CONFIG_GLOBAL"])
    author = make_project(tmp_path / "repo")
    base = author.commit("base", {})
    head = author.commit("drop fees", {"prompts/support.md": drop("fees")["prompt"]})
    author.write({".gitattributes": attributes})
    author.commit("attributes", {})
    repo = GitRepo(author.path)
    try:
        diffs = [
            file_diff(repo, base, sha, "prompts/support.md", "modified") for sha in (head, None)
        ]
    finally:
        repo.close()
    for changed in diffs:
        assert not changed.binary and (changed.added, changed.removed) == (0, 1)
        assert "-say: fees" in changed.diff.splitlines()


def test_gate_action_shows_the_diff_whatever_the_attributes_say(
    world: World, drivers: dict[str, str]
) -> None:
    world.base(project_files("base", WORDS))
    words = [w for w in WORDS if w != "fees"]
    world.pr({"prompts/support.md": prompt(words), ".gitattributes": ATTRIBUTES}, "drop fees")
    world.checkout()
    run = world.run_here(world.environ(world.event()) | drivers)
    assert run.code == 1, run.log[-3000:]
    assert run.outputs["verdict"] == "fail"
    (comment,) = world.comments()
    assert honest(comment_diff(comment.body))
