"""gate.flow.git against real repositories: globs, changed files, shallow clones and tokens,
safe.directory, and the base worktree."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.servers.git_http import Author, GitHttpServer, checkout_like_actions, git, make_bare

from gate.errors import GitError, InputError
from gate.flow.git import (
    FileChange,
    GitRepo,
    auth_header,
    config_env,
)
from gate.inputs.globs import glob_matches, watched

TOKEN = "ghs_gitopsTestToken987654321"


# --- globs -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("prompts/**", "prompts/a.md", True),
        ("prompts/**", "prompts/deep/er/a.md", True),
        ("prompts/**", "prompts2/a.md", False),
        ("prompts/*", "prompts/a.md", True),
        ("prompts/*", "prompts/deep/a.md", False),
        ("**/*.md", "a.md", True),
        ("**/*.md", "x/y/a.md", True),
        ("**/*.md", "x/y/a.mdx", False),
        ("config/model.yaml", "config/model.yaml", True),
        ("config/model.yaml", "config/model.yml", False),
        ("prompts", "prompts/a.md", True),  # a folder name covers what is inside
        ("prompts/", "prompts/sub/a.md", True),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/a/b/test_a.py", True),
        ("case?.jsonl", "case1.jsonl", True),
        ("case?.jsonl", "case12.jsonl", False),
        ("cases/[ab].jsonl", "cases/a.jsonl", True),
        ("cases/[!ab].jsonl", "cases/a.jsonl", False),
        ("cases/[!ab].jsonl", "cases/c.jsonl", True),
        ("./gate.yml", "gate.yml", True),
        ("a+b(c).md", "a+b(c).md", True),
    ],
)
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_matches(pattern, path) is expected


def test_negated_patterns_exclude_later() -> None:
    patterns = ["prompts/**", "!prompts/drafts/**"]
    assert watched("prompts/live.md", patterns)
    assert not watched("prompts/drafts/wip.md", patterns)
    assert watched("prompts/drafts/wip.md", [*patterns, "prompts/drafts/wip.md"])


def test_config_env_appends_after_existing_entries() -> None:
    env = config_env([("safe.directory", "/w")], {"GIT_CONFIG_COUNT": "2"})
    assert env == {
        "GIT_CONFIG_COUNT": "3",
        "GIT_CONFIG_KEY_2": "safe.directory",
        "GIT_CONFIG_VALUE_2": "/w",
    }


# --- a local repository ----------------------------------------------------------------------


@pytest.fixture
def author(tmp_path: Path) -> Author:
    origin = make_bare(tmp_path / "origin.git")
    a = Author(tmp_path / "repo", origin)
    git(a.path, "checkout", "-q", "-B", "main")
    return a


def test_changed_files_with_renames_and_deletions(author: Author) -> None:
    base = author.commit("base", {"prompts/a.md": "alpha\n" * 20, "old.txt": "x", "keep": "k"})
    head = author.commit(
        "head", {"prompts/a.md": None, "prompts/b.md": "alpha\n" * 20, "old.txt": None, "new": "n"}
    )
    repo = GitRepo(author.path)
    changes = repo.changed_files(repo.merge_base(base, head, fetch=False), head)
    assert FileChange("R", "prompts/b.md", "prompts/a.md") in changes
    assert FileChange("D", "old.txt") in changes
    assert FileChange("A", "new") in changes
    renamed = next(c for c in changes if c.status == "R")
    assert renamed.paths == ("prompts/a.md", "prompts/b.md")
    assert watched(renamed.paths[0], ["prompts/a.md"])  # moving a watched file away counts


def test_working_tree_changes_include_uncommitted_and_untracked(author: Author) -> None:
    base = author.commit("base", {"a.txt": "a", "b.txt": "b"})
    author.write({"a.txt": "changed", "c.txt": "new, untracked"})
    repo = GitRepo(author.path)
    changes = repo.changed_files(base, None)
    assert {str(c) for c in changes} == {"M a.txt", "A c.txt"}


def test_merge_base_is_where_the_branch_left(author: Author) -> None:
    fork = author.commit("base", {"a": "1"})
    main_tip = author.commit("main moves on", {"b": "2"})
    git(author.path, "checkout", "-q", "-b", "feature", fork)
    head = author.commit("feature", {"c": "3"})
    repo = GitRepo(author.path)
    since = repo.merge_base(main_tip, head, fetch=False)
    assert since == fork
    assert [str(c) for c in repo.changed_files(since, head)] == ["A c"]


def test_default_base_prefers_origin_head(author: Author) -> None:
    author.commit("base", {"a": "1"})
    author.push("HEAD:main")
    clone = author.path.parent / "clone"
    git(author.path.parent, "clone", "-q", str(author.path.parent / "origin.git"), "clone")
    assert GitRepo(clone).default_base() == "origin/main"
    git(clone, "remote", "set-head", "origin", "--delete")
    assert GitRepo(clone).default_base() == "origin/main"  # else main/master


def test_resolve_ref_locally_and_unknown_ref(author: Author) -> None:
    sha = author.commit("base", {"a": "1"})
    repo = GitRepo(author.path)
    assert repo.resolve_ref("main", fetch=False) == sha
    with pytest.raises(InputError, match="base ref 'nope' not found"):
        repo.resolve_ref("nope", fetch=False)


def test_not_a_repository_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not inside a git repository"):
        GitRepo(tmp_path)


def test_worktree_is_removed_even_when_the_body_fails(author: Author) -> None:
    sha = author.commit("base", {"a.txt": "base"})
    author.commit("head", {"a.txt": "head"})
    repo = GitRepo(author.path)
    with pytest.raises(RuntimeError), repo.worktree(sha) as path:
        assert (path / "a.txt").read_text() == "base"
        assert git(path, "rev-parse", "HEAD") == sha
        raise RuntimeError("the run failed")
    assert not path.exists() and not path.parent.exists()
    assert git(author.path, "worktree", "list").count("\n") == 0
    assert not (author.path / ".git" / "worktrees").exists() or not any(
        (author.path / ".git" / "worktrees").iterdir()
    )


# --- shallow clones over HTTP with the job token ---------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[GitHttpServer, Author, dict[str, str]]]:
    root = tmp_path / "srv"
    root.mkdir()
    origin = make_bare(root / "app.git")
    a = Author(tmp_path / "author", origin)
    git(a.path, "checkout", "-q", "-B", "main")
    shas: dict[str, str] = {}
    for n in range(30):  # a long main history before the fork point
        a.commit(f"main {n}", {"history.txt": f"{n}\n"})
    shas["fork"] = a.commit("fork point", {"prompts/p.md": "v1\n"})
    for n in range(70):  # the PR branch is long too: deeper than one deepen step
        shas["head"] = a.commit(f"feature {n}", {"prompts/p.md": f"v{n + 2}\n"})
    a.push("HEAD:refs/heads/feature")
    git(a.path, "checkout", "-q", "main")
    git(a.path, "reset", "-q", "--hard", shas["fork"])
    shas["base"] = a.commit("main after fork", {"other.txt": "o"})
    a.push("HEAD:main")
    shas["merge"] = a.merge_ref(shas["base"], shas["head"], "refs/pull/3/merge")
    with GitHttpServer(root, TOKEN) as server:
        yield server, a, shas


def workspace(
    tmp_path: Path, server: GitHttpServer, shas: dict[str, str], at: str, depth: int = 1
) -> Path:
    """A checkout made the way actions/checkout makes it: of the PR's merge commit or the branch."""
    ref = "refs/remotes/pull/3/merge" if at == "merge" else "refs/remotes/origin/feature"
    ws = tmp_path / "ws"
    checkout_like_actions(ws, f"{server.url}/app.git", shas[at], ref, TOKEN, depth=depth)
    return ws


def test_shallow_clone_fetches_base_and_deepens_to_the_merge_base(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "merge")
    repo = GitRepo(ws, token=TOKEN, server_url=server.url)
    assert repo.is_shallow() and repo.rev_parse(shas["base"]) is None
    before = len(server.log)
    assert repo.ensure_commit(shas["base"]) == shas["base"]
    since = repo.merge_base(shas["base"], repo.head_sha(), fetch=True)
    assert since == shas["base"]  # the merge commit's first parent
    head_since = repo.merge_base(shas["base"], shas["head"], fetch=True)
    assert head_since == shas["fork"]  # 70 commits back on the branch: deepened twice
    assert [str(c) for c in repo.changed_files(since, repo.head_sha())] == ["M prompts/p.md"]
    assert repo.is_shallow()  # deepened, not unshallowed
    fetches = server.log[before:]
    assert fetches and all(r.authorized for r in fetches)
    # The header went through the environment: nothing was written to the repository config.
    assert "extraheader" not in (ws / ".git" / "config").read_text()


def test_parent_of_a_one_commit_clone_is_fetched(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "head")
    repo = GitRepo(ws, token=TOKEN, server_url=server.url)
    assert repo.rev_parse(f"{shas['head']}^1") is None
    parent = repo.parent_of(shas["head"], fetch=True)
    assert parent is not None and git(ws, "rev-parse", f"{shas['head']}^1") == parent


def test_base_ref_by_name_is_fetched_from_the_remote(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "head")
    repo = GitRepo(ws, token=TOKEN, server_url=server.url)
    assert repo.resolve_ref("main", fetch=True) == shas["base"]
    assert repo.resolve_ref(shas["fork"], fetch=True) == shas["fork"]
    with pytest.raises(InputError, match="not found on `origin`"):
        repo.resolve_ref("no-such-branch", fetch=True)


def test_without_a_token_the_error_names_fetch_depth_and_hides_secrets(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "merge")
    environ = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    repo = GitRepo(ws, token="ghs_wrongToken", server_url=server.url, environ=environ)
    with pytest.raises(GitError) as info:
        repo.ensure_commit(shas["base"])
    message = str(info.value)
    assert "fetch-depth: 0" in message and shas["base"][:12] in message
    assert "ghs_wrongToken" not in message
    assert auth_header("ghs_wrongToken").split()[-1] not in message


def test_credentials_left_by_actions_checkout_are_used_not_doubled(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    """actions/checkout's default `persist-credentials: true` keeps its header in .git/config."""
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "merge")
    git(ws, "config", "--local", f"http.{server.url}/.extraheader", auth_header(TOKEN))
    before = len(server.log)
    assert GitRepo(ws, token=None).ensure_commit(shas["base"]) == shas["base"]
    repo = GitRepo(ws, token=TOKEN, server_url=server.url)
    assert repo.merge_base(shas["fork"], shas["head"], fetch=True) == shas["fork"]
    fetches = server.log[before:]
    assert fetches and all(r.authorized and r.auth_headers == 1 for r in fetches)


def test_a_full_clone_needs_no_fetch(
    tmp_path: Path, served: tuple[GitHttpServer, Author, dict[str, str]]
) -> None:
    server, _, shas = served
    ws = workspace(tmp_path, server, shas, "merge", depth=0)
    git(ws, "fetch", "-q", "origin", "+refs/heads/*:refs/remotes/origin/*",
        env={"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": f"http.{server.url}/.extraheader",
             "GIT_CONFIG_VALUE_0": auth_header(TOKEN)})  # fmt: skip
    repo = GitRepo(ws, token=TOKEN, server_url=server.url)
    before = len(server.log)
    assert repo.merge_base(shas["base"], shas["head"], fetch=True) == shas["fork"]
    assert len(server.log) == before


# --- safe.directory --------------------------------------------------------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_workspace_owned_by_another_user(author: Author, tmp_path: Path) -> None:
    base = author.commit("base", {"a.txt": "a"})
    head = author.commit("head", {"a.txt": "b"})
    subprocess.run(["chown", "-R", "1000:1000", str(author.path)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_CONFIG")}
    env["HOME"] = str(tmp_path / "home")  # no global config of ours to lean on
    plain = subprocess.run(
        ["git", "-C", str(author.path), "status"], env=env, capture_output=True, text=True
    )
    assert "dubious ownership" in plain.stderr
    repo = GitRepo(author.path, environ=env)
    assert repo.head_sha() == head
    assert [str(c) for c in repo.changed_files(base, head)] == ["M a.txt"]
    with repo.worktree(base) as path:
        done = subprocess.run(
            ["git", "-C", str(path), "rev-parse", "HEAD"],
            env=repo.subprocess_env(),
            capture_output=True,
            text=True,
        )
        assert done.stdout.strip() == base, done.stderr
    assert not (tmp_path / "home" / ".gitconfig").exists()
