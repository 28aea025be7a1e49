"""Paths as the gate shows and records them: relative to a checkout, with `/` separators."""

from __future__ import annotations

from pathlib import Path


def relative_posix(path: Path, root: Path) -> str | None:
    """`path` below `root` (both resolved) as a POSIX relative path; None when outside."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def display_path(path: Path, root: Path | None) -> str:
    """`path` relative to `root` when it lies below it, else as given."""
    relative = relative_posix(path, root) if root is not None else None
    return str(path) if relative is None else relative


def checkout_root(folder: Path) -> Path:
    """The checkout `folder` lies in: the nearest folder holding `.git`, else `folder`."""
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder
