"""The GitHub Actions cache service and actions/cache's archive, for the runner simulation.

What it keeps of GitHub's behaviour (docs "Dependency caching reference" and actions/toolkit's
`@actions/cache`):
- an entry is a key, a version and a scope; it is immutable: saving a key that exists in the
  scope saves nothing (the action warns);
- the version is a hash of the `path` input and the compression, so a restore finds only what
  was saved with the same paths;
- the scope is the ref of the run that saved it (`refs/pull/7/merge`, `refs/heads/main`); a
  run may restore from its own ref, then from the default branch's, nothing else;
- in each scope: the exact key; else the newest entry whose key starts with the key; else,
  for each restore key in order, the newest entry whose key starts with it;
- the archive is real `tar` with the action's arguments (`--posix`, zstd, `-P -C workspace`,
  paths relative to the workspace), run as the runner's user: a file that user cannot read
  fails the save, as on GitHub; modification times survive the round trip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_BRANCH = "refs/heads/main"
VERSION_SALT = "1.0"
COMPRESSION = "zstd" if shutil.which("zstd") else "gzip"


def runner_user() -> tuple[int, int] | None:
    """The runner's user when the tests run as root (the container's user): uid 1000; None
    when the tests run as a plain user, who then plays both."""
    return (1000, 1000) if os.geteuid() == 0 else None


def as_runner(argv: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    user = runner_user()
    ids = {"user": user[0], "group": user[1], "extra_groups": []} if user else {}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        list(argv), capture_output=True, text=True, check=False, **ids, **kwargs
    )


def version(paths: Sequence[str]) -> str:
    components = [*paths, COMPRESSION, VERSION_SALT]
    return hashlib.sha256("|".join(components).encode()).hexdigest()


@dataclass
class Entry:
    key: str
    version: str
    scope: str
    archive: Path
    created: int
    size: int


@dataclass
class CacheService:
    root: Path
    entries: list[Entry] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        user = runner_user()
        if user:
            os.chown(self.root, *user)

    def find(
        self, paths: Sequence[str], key: str, restore_keys: Sequence[str], scopes: Sequence[str]
    ) -> Entry | None:
        wanted = version(paths)
        for scope in dict.fromkeys(scopes):
            here = [e for e in self.entries if e.scope == scope and e.version == wanted]
            newest = sorted(here, key=lambda e: e.created, reverse=True)
            exact = [e for e in newest if e.key == key]
            if exact:
                return exact[0]
            for prefix in (key, *restore_keys):
                match = next((e for e in newest if e.key.startswith(prefix)), None)
                if match:
                    return match
        return None

    def restore(
        self,
        workspace: Path,
        paths: Sequence[str],
        key: str,
        restore_keys: Sequence[str],
        scopes: Sequence[str],
    ) -> Entry | None:
        entry = self.find(paths, key, restore_keys, scopes)
        if entry is None:
            self.log.append(f"miss {key}")
            return None
        done = as_runner(
            ["tar", *_decompress(), "-xf", str(entry.archive), "-P", "-C", str(workspace)]
        )
        assert done.returncode == 0, done.stderr
        self.log.append(f"restored {entry.key} for {key}")
        return entry

    def save(self, workspace: Path, paths: Sequence[str], key: str, scope: str) -> Entry | None:
        wanted = version(paths)
        if any(e.key == key and e.scope == scope and e.version == wanted for e in self.entries):
            self.log.append(f"exists {key}")  # "Unable to reserve cache": a warning, no entry
            return None
        present = [p for p in paths if (workspace / p).exists()]
        if not present:
            self.log.append(f"nothing to save {key}")  # "Path Validation Error"
            return None
        folder = self.root / f"entry-{len(self.entries)}"
        folder.mkdir()
        user = runner_user()
        if user:
            os.chown(folder, *user)
        (folder / "manifest.txt").write_text("\n".join(present))
        archive = folder / ("cache.tzst" if COMPRESSION == "zstd" else "cache.tgz")
        argv = ["tar", "--posix", *_compress(), "-cf", archive.name, "-P", "-C", str(workspace),
                "--files-from", "manifest.txt"]  # fmt: skip
        done = as_runner(argv, cwd=folder)
        if done.returncode != 0:
            self.log.append(f"failed {key}: {done.stderr.strip()}")  # "Cache save failed."
            return None
        entry = Entry(key, wanted, scope, archive, len(self.entries), archive.stat().st_size)
        self.entries.append(entry)
        self.log.append(f"saved {key} ({entry.size} bytes)")
        return entry


def _compress() -> list[str]:
    return ["--use-compress-program", "zstd -T0 --long=30"] if COMPRESSION == "zstd" else ["-z"]


def _decompress() -> list[str]:
    return ["--use-compress-program", "zstd -d --long=30"] if COMPRESSION == "zstd" else ["-z"]
