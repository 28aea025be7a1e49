"""Provenance of a run: git sha of the checkout and hashes of the files that shaped it."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from gate.inputs.paths import relative_posix


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def find_repo_root(start: Path) -> Path | None:
    for folder in [start.resolve(), *start.resolve().parents]:
        if (folder / ".git").exists():
            return folder
    return None


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(sha, dirty) of the repository holding `root`, or (None, None) outside git."""
    if find_repo_root(root) is None:
        return None, None
    # Two plain git calls: importing gitpython alone costs 25 ms of every run's start-up.
    sha = _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    if not sha:
        return None, None
    status = _git(root, "status", "--porcelain", "--untracked-files=no")
    return sha, None if status is None else bool(status)


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def hash_files(paths: list[Path], relative_to: list[Path]) -> dict[str, str]:
    hashes: dict[str, str] = {}
    for path in paths:
        below = (relative_posix(path, base) for base in relative_to)
        name = next((n for n in below if n is not None), str(path))
        if path.is_file():
            hashes[name] = sha256_file(path)
    return dict(sorted(hashes.items()))


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
