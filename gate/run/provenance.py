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


OID = "# branch.oid "


def find_repo_root(start: Path) -> Path | None:
    for folder in [start.resolve(), *start.resolve().parents]:
        if (folder / ".git").exists():
            return folder
    return None


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """(sha, dirty) of the repository holding `root`, or (None, None) outside git."""
    if find_repo_root(root) is None:
        return None, None
    # One plain git call (importing gitpython alone costs 25 ms of every run's start-up): the
    # commit is status's `branch.oid` header line, every other line a changed tracked file.
    status = _git(
        root,
        "status",
        "--porcelain=v2",
        "--branch",
        "--no-ahead-behind",
        "--untracked-files=no",
    )
    if status is None:  # no status: the commit may still be known, not whether it changed
        return _git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") or None, None
    lines = status.splitlines()
    sha = next((line[len(OID) :] for line in lines if line.startswith(OID)), "(initial)")
    if sha == "(initial)":  # no commit yet
        return None, None
    return sha, any(not line.startswith("#") for line in lines)


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
