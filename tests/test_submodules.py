"""Submodules (issue 28, class 7): a bump is a change, and each side runs with its own commit's
submodule content, or the flow stops with an error naming the submodule.

The prompts live in a real submodule (`prompts/shared`, added from a local repository) that
`watch: ["prompts/**"]` covers and the system reads. A PR that only bumps the submodule to a
commit whose prompt drops a word (a regression) used to be skipped ("no watched file
changed", exit 0). Now the suite runs: the base with the submodule at the base's commit
(materialised in its worktree), the head with its own, and the regression fails, through
`gate check` (commit and working tree) and `gate action`. A head whose checkout lacks the
submodule, or a base commit nowhere at hand, stops the flow with an error naming it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers.cli import gate_here
from helpers.pr_scenarios import BOT, base_files, drop, prompt
from helpers.servers.git_http import Author, git, make_bare
from helpers.servers.world import WORDS, World, project_files

FILE_ALLOW = ("-c", "protocol.file.allow=always")  # submodules from local repositories
SHARED = "prompts/shared"
SHARED_BOT = BOT.replace('"prompts" / "support.md"', '"prompts" / "shared" / "support.md"')


def prompts_repository(tmp: Path, text: str) -> tuple[Path, Author]:
    """The submodule's origin and a clone to write its commits."""
    origin = make_bare(tmp / "shared-origin.git")
    author = Author(tmp / "shared", origin)
    git(author.path, "checkout", "-q", "-B", "main")
    author.commit("prompt", {"support.md": text})
    author.push("HEAD:main")
    return origin, author


def add_submodule(repo: Path, origin: Path) -> None:
    git(repo, *FILE_ALLOW, "submodule", "add", "-q", "-b", "main", str(origin), SHARED)


def bump(repo: Path, shared: Author, text: str) -> str:
    """A new commit of the prompts, checked out in `repo`'s submodule and staged there."""
    sha = shared.commit("drop a word", {"support.md": text})
    shared.push("HEAD:main")
    git(repo / SHARED, *FILE_ALLOW, "fetch", "-q", "origin")
    git(repo / SHARED, "checkout", "-q", sha)
    git(repo, "add", SHARED)
    return sha


def local_project(tmp: Path) -> tuple[Author, Author]:
    """A developer's clone on branch `pr`, branched from `main`, whose prompt is a submodule."""
    origin, shared = prompts_repository(tmp, prompt([*WORDS_ALL]))
    author = Author(tmp / "repo", make_bare(tmp / "repo-origin.git"))
    git(author.path, "checkout", "-q", "-B", "main")
    add_submodule(author.path, origin)
    files = {k: v for k, v in base_files().items() if k != "prompts/support.md"}
    files["app/bot.py"] = SHARED_BOT
    author.commit("the project, its prompt in a submodule", files)
    author.push("HEAD:main")
    git(author.path, "checkout", "-q", "-b", "pr")
    return author, shared


WORDS_ALL = [line.split(": ")[1] for line in drop()["prompt"].splitlines()[1:]]


def check(repo: Path, tmp: Path) -> tuple[int, str]:
    env = {"GATE_CACHE_DIR": str(tmp / "cache"), "GIT_CONFIG_PARAMETERS": ""}
    done = gate_here("check", "--base", "main", "--format", "markdown", cwd=repo, env=env)
    return done.code, done.out + done.err


def test_a_submodule_bump_is_a_change_and_each_side_runs_its_own(tmp_path: Path) -> None:
    author, shared = local_project(tmp_path)
    bump(author.path, shared, drop("fees")["prompt"])
    for head in ("the working tree", "a commit"):
        if head == "a commit":
            author.commit("bump the prompts")
        code, out = check(author.path, tmp_path)
        assert code == 1, (head, out[-3000:])  # the base's prompt allows fees: a regression
        assert "❌ **Eval Gate: fail** (support)" in out, head
        assert "no watched file changed" not in out
        assert "\n-say: fees\n" in out, head  # the prompt's diff, read from the submodule


def test_a_head_without_its_submodule_checked_out_is_an_error(tmp_path: Path) -> None:
    author, shared = local_project(tmp_path)
    bump(author.path, shared, drop("fees")["prompt"])
    author.commit("bump the prompts")
    git(author.path, "submodule", "deinit", "-q", "--force", SHARED)
    code, out = check(author.path, tmp_path)
    assert code == 3, out[-3000:]
    assert f"the submodule {SHARED} is not checked out" in out


def test_a_base_commit_not_at_hand_is_an_error(tmp_path: Path) -> None:
    """The head's submodule is a fresh shallow clone of the bump alone: the base's commit is
    nowhere (gate check fetches nothing)."""
    author, shared = local_project(tmp_path)
    head = bump(author.path, shared, drop("fees")["prompt"])
    author.commit("bump the prompts")
    git(author.path, "submodule", "deinit", "-q", "--force", SHARED)
    shutil.rmtree(author.path / ".git" / "modules" / SHARED)
    git(author.path, "submodule", "init", "-q", SHARED)
    url = f"file://{tmp_path / 'shared-origin.git'}"  # a local path ignores --depth
    git(author.path, "config", f"submodule.{SHARED}.url", url)
    git(author.path, *FILE_ALLOW, "submodule", "update", "-q", "--depth=1", SHARED)
    assert git(author.path / SHARED, "rev-parse", "HEAD") == head
    assert git(author.path / SHARED, "rev-parse", "--is-shallow-repository") == "true"
    code, out = check(author.path, tmp_path)
    assert code == 3, out[-3000:]
    assert f"of the submodule {SHARED} is not at hand" in out


@pytest.mark.parametrize("checked_out", [True, False])
def test_gate_action_runs_each_sides_submodule_or_names_it(world: World, checked_out: bool) -> None:
    origin, shared = prompts_repository(world.tmp, prompt(WORDS))
    add_submodule(world.author.path, origin)
    files = {k: v for k, v in project_files("base", WORDS).items() if k != "prompts/support.md"}
    world.base({**files, "app/bot.py": SHARED_BOT})
    git(world.author.path, "checkout", "-q", "-B", "feature", world.base_sha)
    bump(world.author.path, shared, prompt([w for w in WORDS if w != "fees"]))
    world.pr({}, "bump the prompts")
    workspace = world.checkout()
    if checked_out:  # actions/checkout with `submodules: true`
        git(workspace, *FILE_ALLOW, "submodule", "update", "--init", "-q")
    run = world.run_here(world.environ(world.event()))
    if checked_out:
        assert run.code == 1, run.log[-3000:]
        assert run.outputs["verdict"] == "fail"
    else:
        assert run.code == 3, run.log[-3000:]
        assert f"the submodule {SHARED} is not checked out" in run.log
        assert run.outputs.get("verdict") == "error"
