"""What the PR changed in the system under test: the diff of every file whose hash differs
between the two runs' metadata (`RunMeta.files`: the config, the prompt and model-config
files, the watched files), from the base commit to the head commit, or to the working tree for
`gate check`. The gate diffs the bytes git stores itself, so the repository's attributes and
diff drivers, which are the PR's, shape nothing of it. A file only one side lists is added or
removed, or, when git has it unchanged on both, no longer (newly) read by the head's run.

A case file that a `watch` glob hashed is listed without its diff: it may hold held-out
cases, whose input and expectations the comment never shows.

The diffs are data for the render (`Comparison.system_diff`), which stays pure.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from gate.compare.models import Comparison
from gate.compare.system import FileDiff, FileStatus, SystemDiff, changed_files, cut_diff
from gate.errors import GitError
from gate.flow.git import GitRepo
from gate.inputs.globs import watched

SNIFF_BYTES = 8000  # git's rule: a NUL in the first 8000 bytes makes a file binary
MAX_BYTES = 2_000_000  # a side larger than this is listed without its diff
CONTEXT = 3
CASE_FILE = "a case file: no diff shown (it may hold held-out cases)"
NO_DIFFERENCE = "git shows no difference (the file may lie outside the repository or be ignored)"


def _inside(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts


def _working_file(root: Path, path: str) -> bytes | None:
    """The working tree's `path` as git would see it: a symlink's target text, a file's bytes;
    None when it is neither, or lies beyond a symlink out of the checkout."""
    full = root / path
    if not full.parent.resolve().is_relative_to(root.resolve()):
        return None
    if full.is_symlink():
        return os.readlink(full).encode("utf-8", errors="surrogateescape")
    return full.read_bytes() if full.is_file() else None


def _lines(data: bytes) -> list[str]:
    """Lines with their ends: a change of line ends alone is a change too."""
    return data.decode("utf-8", errors="replace").splitlines(keepends=True)


def hunks(before: bytes, after: bytes) -> list[str]:
    """The unified diff's hunk lines (`@@ ...`, ` `, `-`, `+`), without the two header lines
    and the lines' ends."""
    lines = difflib.unified_diff(_lines(before), _lines(after), n=CONTEXT, lineterm="")
    return [line.rstrip("\r\n") for line in list(lines)[2:]]


def file_diff(
    repo: GitRepo, base_sha: str, head_sha: str | None, path: str, status: FileStatus
) -> FileDiff:
    """`path` from the base commit to the head commit (None: the working tree), diffed by the
    gate from the bytes git stores: the repository's attributes and diff drivers (a PR's
    `.gitattributes` saying `binary`, `-diff` or `diff=driver`) change nothing of it."""
    if not _inside(path):
        return FileDiff(path=path, status=status, note="outside the repository: no diff")
    try:
        before = repo.blob(base_sha, path)
        after = repo.blob(head_sha, path) if head_sha else _working_file(repo.root, path)
    except (GitError, OSError) as exc:
        return FileDiff(path=path, status=status, note=f"cannot read the diff: {exc}")
    if before == after:
        if before is not None and status in ("added", "removed"):
            return _unchanged(path, status)
        return FileDiff(path=path, status=status, note=NO_DIFFERENCE)
    sides = [side for side in (before, after) if side is not None]
    if any(len(side) > MAX_BYTES for side in sides):
        return FileDiff(path=path, status=status, note="too large to show its diff")
    if any(b"\0" in side[:SNIFF_BYTES] for side in sides):
        return FileDiff(path=path, status=status, binary=True)
    lines = hunks(before or b"", after or b"")
    text, total = cut_diff(lines)
    return FileDiff(
        path=path,
        status=status,
        added=sum(line.startswith("+") for line in lines),
        removed=sum(line.startswith("-") for line in lines),
        diff=text,
        diff_lines=total,
    )


def _unchanged(path: str, status: FileStatus) -> FileDiff:
    """A file git has the same on both sides that only one side's run read."""
    if status == "removed":
        note = "unchanged: the base's run read it, the head's does not"
        return FileDiff(path=path, status="no_longer_read", note=note)
    note = "unchanged: the head's run reads it, the base's did not"
    return FileDiff(path=path, status="newly_read", note=note)


def read_system_diff(
    repo: GitRepo,
    base_sha: str,
    head_sha: str | None,
    comparison: Comparison,
    cases: Sequence[str] = (),
) -> SystemDiff | None:
    """The diffs of the files the two runs' metadata lists as changed; None if none did.
    Files matched by `cases` (the suite's case globs) are listed without their diff."""
    changed = changed_files(comparison.base_meta, comparison.head_meta)
    if not changed:
        return None
    files = [
        FileDiff(path=path, status=status, note=CASE_FILE)
        if watched(path, cases)
        else file_diff(repo, base_sha, head_sha, path, status)
        for path, status in changed
    ]
    return SystemDiff(base_sha=base_sha, head_sha=head_sha, files=files)


def with_system_diff(
    repo: GitRepo,
    base_sha: str,
    head_sha: str | None,
    comparison: Comparison,
    cases: Sequence[str] = (),
) -> Comparison:
    """`comparison` with its `system_diff` filled in (a skipped or failed one is left alone)."""
    base, head = comparison.base_meta, comparison.head_meta
    if base is None or head is None or not base.files or not head.files:
        return comparison  # a side that did not run hashed nothing: no diff to tell
    diff = read_system_diff(repo, base_sha, head_sha, comparison, cases)
    return comparison.model_copy(update={"system_diff": diff}) if diff else comparison
