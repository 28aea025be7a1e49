"""What the PR changed in the system under test, read with git: the diff of every file whose
hash differs between the two runs' metadata (`RunMeta.files`: the config, the prompt and
model-config files, the watched files), from the base commit to the head commit, or to the
working tree for `gate check`. A file only one side lists is added or removed, or, when git
has it unchanged on both, no longer (newly) read by the head's run.

A case file that a `watch` glob hashed is listed without its diff: it may hold held-out
cases, whose input and expectations the comment never shows.

The diffs are data for the render (`Comparison.system_diff`), which stays pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from gate.compare.models import Comparison
from gate.compare.system import FileDiff, FileStatus, SystemDiff, changed_files, cut_diff
from gate.errors import GitError
from gate.flow.git import GitRepo
from gate.inputs.globs import watched

DIFF_ARGS = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--unified=3")
SNIFF_BYTES = 8000
CASE_FILE = "a case file: no diff shown (it may hold held-out cases)"


def _inside(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not PurePosixPath(path).is_absolute() and ".." not in parts


def _hunks(output: str) -> tuple[list[str], bool]:
    """The hunk lines of one file's `git diff` (headers dropped), and whether it is binary."""
    lines = output.split("\n")
    if any(line.startswith("Binary files ") for line in lines[:8]):
        return [], True
    start = next((i for i, line in enumerate(lines) if line.startswith("@@")), len(lines))
    hunks = lines[start:]
    while hunks and hunks[-1] == "":
        hunks.pop()
    return hunks, False


def _new_file(path: Path) -> tuple[list[str], bool]:
    """A file git does not track yet (gate check's working tree): every line added."""
    data = path.read_bytes()
    if b"\0" in data[:SNIFF_BYTES]:
        return [], True
    lines = data.decode("utf-8", errors="replace").splitlines()
    return [f"@@ -0,0 +1,{len(lines)} @@", *(f"+{line}" for line in lines)], False


def file_diff(
    repo: GitRepo, base_sha: str, head_sha: str | None, path: str, status: FileStatus
) -> FileDiff:
    if not _inside(path):
        return FileDiff(path=path, status=status, note="outside the repository: no diff")
    revisions = (base_sha, head_sha) if head_sha else (base_sha,)
    try:
        # literal: a file named `p*.md` must not pull in the diff of every file it matches
        hunks, binary = _hunks(repo.git(*DIFF_ARGS, *revisions, "--", f":(literal){path}"))
        if not hunks and not binary and status in ("added", "removed"):
            if _on_both(repo, base_sha, head_sha, path):
                return _unchanged(path, status)
            local = repo.root / path
            if head_sha is None and status == "added" and local.is_file():
                hunks, binary = _new_file(local)
    except (GitError, OSError) as exc:
        return FileDiff(path=path, status=status, note=f"cannot read the diff: {exc}")
    if not hunks and not binary:
        note = "git shows no difference (the file may lie outside the repository or be ignored)"
        return FileDiff(path=path, status=status, note=note)
    text, total = cut_diff(hunks)
    return FileDiff(
        path=path,
        status=status,
        added=sum(line.startswith("+") for line in hunks),
        removed=sum(line.startswith("-") for line in hunks),
        binary=binary,
        diff=text,
        diff_lines=total,
    )


def _on_both(repo: GitRepo, base_sha: str, head_sha: str | None, path: str) -> bool:
    def at(sha: str) -> bool:
        try:
            repo.git("cat-file", "-e", f"{sha}:{path}")
        except GitError:
            return False
        return True

    return at(base_sha) and (at(head_sha) if head_sha else (repo.root / path).is_file())


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
