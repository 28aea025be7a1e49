"""What the PR changed in the system under test: the files each side's run hashed
(`RunMeta.files`) that differ, with their diffs.

Pure: the models and which paths changed. Reading the diffs takes git and lives in the flow
(`gate.flow.system_diff`); the render shows them (`gate.render.diff`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from gate.report.models import RunMeta

# `no_longer_read` / `newly_read`: the file is the same on both commits, but only the base's run
# (the head's) read it: the PR changed what reads it (a config pointing at another prompt).
FileStatus = Literal["added", "removed", "modified", "no_longer_read", "newly_read"]
DIFF_LINES = 400  # kept per file (the comment shows fewer); the rest is counted
DIFF_CHARS = 40_000


class FileDiff(BaseModel):
    """One changed file: its unified diff hunks (no `diff --git` header)."""

    path: str
    status: FileStatus
    added: int = 0
    removed: int = 0
    binary: bool = False
    diff: str = Field("", description=f"the hunks, at most {DIFF_LINES} lines")
    diff_lines: int = Field(0, description="lines of the whole diff, kept or not")
    note: str | None = Field(None, description="why no diff is shown, when none is")


class SystemDiff(BaseModel):
    base_sha: str | None = None
    head_sha: str | None = Field(None, description="None: the working tree (gate check)")
    files: list[FileDiff] = Field(default_factory=list)


def changed_files(base: RunMeta | None, head: RunMeta | None) -> list[tuple[str, FileStatus]]:
    """Paths whose hash differs between the sides' metadata, or that only one side lists."""
    before = base.files if base else {}
    after = head.files if head else {}
    changed: list[tuple[str, FileStatus]] = []
    for path in sorted(set(before) | set(after)):
        if path not in before:
            changed.append((path, "added"))
        elif path not in after:
            changed.append((path, "removed"))
        elif before[path] != after[path]:
            changed.append((path, "modified"))
    return changed


def cut_diff(lines: list[str]) -> tuple[str, int]:
    """The hunks kept in the comparison (bounded) and how many lines the whole diff has."""
    kept: list[str] = []
    size = 0
    for line in lines[:DIFF_LINES]:
        size += len(line) + 1
        if size > DIFF_CHARS:
            break
        kept.append(line)
    return "\n".join(kept), len(lines)
