"""The response cache in the Action: one folder in the workspace that both sides share and that
a workflow's actions/cache steps carry from run to run (see examples/*.yml).

GitHub runs the container with the workspace mounted and `HOME=/github/home`, which is not the
`~` of the runner, where actions/cache runs: only the workspace is seen by both. So the cache
is `.eval-gate/cache` there unless `cache.dir` or `$GATE_CACHE_DIR` names another; a relative
one is taken from the workspace. After the run, the answers that no run read for
`cache.keep_days` are deleted, and what the gate wrote in the workspace is handed to the
workspace's owner: the container runs as root, the save step and upload-artifact as the
runner's user, who cannot read root's private files. Before the run, what the restore step
wrote as that user is taken back (`claim_cache`): the gate reads only entries it owns
(`gate.providers.cache_trust`), so those another uid wrote (a system's) are never read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from gate.inputs.config import CacheConfig
from gate.inputs.paths import relative_posix
from gate.providers.cache import prune, resolve_cache_dir

CACHE_DIR = ".eval-gate/cache"


def cache_environ(environ: Mapping[str, str], workspace: Path) -> dict[str, str]:
    """The flow's environment: `$GATE_CACHE_DIR` absolute (from the workspace), by default
    the workspace's `.eval-gate/cache`."""
    chosen = environ.get("GATE_CACHE_DIR") or CACHE_DIR
    folder = resolve_cache_dir(None, {"GATE_CACHE_DIR": chosen}, workspace)
    return {**environ, "GATE_CACHE_DIR": str(folder)}


def claim_cache(folder: Path, workspace: Path) -> None:
    """The flow's cache `folder` as actions/cache restored it made the gate's again, when the
    gate runs as root: what the workspace's owner (the runner's user, who restored it) owns
    inside the workspace becomes root's, private; what any other uid owns stays theirs, and
    unread."""
    if os.geteuid() != 0 or not folder.is_dir() or folder.is_symlink():
        return
    inside, top = folder.resolve(), workspace.resolve()
    owner = top.stat().st_uid
    if not inside.is_relative_to(top) or inside == top or owner == 0:
        return
    paths = [inside, *(Path(p, n) for p, dirs, files in os.walk(inside) for n in dirs + files)]
    for path in paths:
        with contextlib.suppress(OSError):
            if path.lstat().st_uid == owner:
                os.lchown(path, 0, 0)


def tidy_cache(folder: Path, settings: CacheConfig, workspace: Path) -> str | None:
    """Prune the flow's cache `folder` (by the base's `settings`) and hand it to the
    workspace's owner; the log line that says what it holds (None when nothing is cached)."""
    if not settings.enabled or not folder.is_dir():
        return None
    size = prune(folder, settings.keep_days)
    hand_over(folder, workspace)
    where = relative_posix(folder, workspace) or str(folder)
    removed = f"; {size.removed:,} not read for {settings.keep_days:g} days deleted"
    return f"[gate] response cache {where}: {size.entries:,} answers, {size.bytes / 1e6:.2f} MB" + (
        removed if size.removed else ""
    )


def hand_over(folder: Path, workspace: Path) -> None:
    """`folder`, everything in it and the folders above it up to the workspace owned by the
    workspace's owner, when the gate runs as root (a container) and the folder lies inside the
    workspace; symlinks are not followed."""
    if os.geteuid() != 0 or not folder.is_dir() or folder.is_symlink():
        return
    inside, top = folder.resolve(), workspace.resolve()
    owner = top.stat()
    if not inside.is_relative_to(top) or inside == top or owner.st_uid == 0:
        return
    paths = [Path(parent, name) for parent, dirs, files in os.walk(inside) for name in dirs + files]
    paths += [above for above in (inside, *inside.parents) if above.is_relative_to(top)][:-1]
    for path in paths:
        with contextlib.suppress(OSError):  # the cache is only worth less for it
            os.lchown(path, owner.st_uid, owner.st_gid)
