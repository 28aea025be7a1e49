"""Submodules: each side runs with its own commit's submodule content, or the flow stops.

git records a submodule as one entry of its tree (a gitlink: the folder and the submodule's
commit); the files are in the submodule's own repository. A checkout made without submodules
(actions/checkout's default) leaves the folder empty, and so would the base's worktree: a
system whose prompt lives there would run on nothing. So the base's worktree gets every
submodule at the base's commit (`GitRepo.worktree`, from the checkout's submodule), a bump of
a submodule is a change of everything below it (`gate.flow.triggers`), and before any side
runs, every submodule that a running suite's triggers reach must be at hand on both sides
(`require_submodules`): the head's checked out at the head commit's (the working tree: checked
out at all), the base's commit in the submodule's repository (fetched from its remote in CI).
Otherwise the flow stops with an error naming the submodule: never a skip, never a run on an
empty folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gate.errors import GitError
from gate.flow.request import FlowRequest
from gate.flow.triggers import base_watch, suite_triggers
from gate.inputs.config import LoadedConfig
from gate.inputs.globs import reaches_below

HINT = "check out submodules with the repository (actions/checkout: `submodules: recursive`)"


def require_submodules(
    request: FlowRequest, base: LoadedConfig | None, suites: Sequence[str]
) -> None:
    """Stop (`GitError`) unless every submodule the `suites` (the ones that run) read or watch
    is at its commit on both sides."""
    revisions = request.revisions
    repo, root = revisions.repo, revisions.repo.root
    patterns = [p for name in suites for p in _patterns(request.config, base, name, root)]
    head = {f: c for f, c in repo.gitlinks(revisions.head_sha).items() if _reached(f, patterns)}
    base_links = repo.gitlinks(revisions.base_sha)
    for folder, commit in head.items():
        found = repo.submodule_commit(folder)
        if found is None:
            raise GitError(f"the submodule {folder} is not checked out in {root}: {HINT}")
        if revisions.head_sha is not None and found != commit:
            raise GitError(
                f"the submodule {folder} is checked out at {found[:12]}, not at the head's "
                f"commit {commit[:12]}: {HINT}"
            )
    for folder, commit in base_links.items():
        if not _reached(folder, patterns):
            continue
        if repo.submodule_source(folder, commit, fetch=revisions.fetch) is None:
            raise GitError(
                f"the base's commit {commit[:12]} of the submodule {folder} is not at hand (the "
                f"head's checkout of the submodule lacks it, or the submodule is not checked "
                f"out): fetch it into {root / folder}, or {HINT} and `fetch-depth: 0`"
            )


def _patterns(head: LoadedConfig, base: LoadedConfig | None, name: str, root: Path) -> list[str]:
    """What makes the suite run: the head's triggers and the base's `watch` (as planned)."""
    return [*suite_triggers(head, head.config.suite(name), root), *base_watch(base, name)]


def _reached(folder: str, patterns: Sequence[str]) -> bool:
    return any(reaches_below(pattern, folder) for pattern in patterns)
