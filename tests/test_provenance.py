"""A run's provenance: the checkout's commit and whether tracked files differ from it."""

from __future__ import annotations

from pathlib import Path

from helpers.servers.git_http import git

from gate.run.provenance import git_state


def test_git_state_of_real_repositories(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_state(outside) == (None, None)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    assert git_state(repo) == (None, None)  # no commit yet
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "-c", "user.email=a@b.c", "-c", "user.name=A", "commit", "-q", "-m", "one")
    sha = git(repo, "rev-parse", "HEAD").strip()
    (repo / "sub").mkdir()
    assert git_state(repo / "sub") == (sha, False)
    (repo / "new.txt").write_text("untracked files do not make it dirty\n")
    assert git_state(repo) == (sha, False)
    (repo / "a.txt").write_text("two\n")
    assert git_state(repo) == (sha, True)
    git(repo, "add", "a.txt")
    assert git_state(repo) == (sha, True)  # staged counts too
