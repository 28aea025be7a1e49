"""The response cache: one JSON file per request, named by the hash of the exact request.

The key covers everything a side controls about a request: where and how it goes (the
method, the whole URL and every header, a secret one by the variable it comes from:
`Endpoint.identity`), the body (model, messages, every parameter sent) and the repeat index.
An answer is taken only from an entry the gate wrote itself (`gate.providers.cache_trust`).
Writes go to a temporary file that is renamed into place, so concurrent workers and
concurrent processes never see half an entry; an unreadable entry is a miss and is
overwritten by the next answer.

A read sets the entry's modification time, so the file system records when each answer was
last used (tar, and so actions/cache, keeps it); `prune` deletes the answers no run read for
some days, which keeps a cache that a workflow carries from run to run bounded.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.providers.cache_trust import Untrusted, folder_problem, make_folders, read_owned
from gate.report.files import atomic_write

CACHE_VERSION = 2  # 2: the key covers the headers and the whole URL
IGNORE_ALL = "# written by Eval Gate: git ignores this response cache\n*\n"
# What `prune` may delete: entries (`v2/ab/<sha256>.json`), atomic_write's leftovers and the
# lock files a killed run left.
ENTRY = re.compile(r"(\.)?[0-9a-f]{64}(\.json(\..+\.tmp)?|\.lock)")
log = logging.getLogger(__name__)


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """The cache when gate.yml names no `cache.dir`: $GATE_CACHE_DIR, else `eval-gate` in
    $XDG_CACHE_HOME or ~/.cache. The PR flow hands its choice to both sides through
    $GATE_CACHE_DIR, so base and head share one cache."""
    if environ.get("GATE_CACHE_DIR"):
        return Path(environ["GATE_CACHE_DIR"])
    home = Path(environ.get("HOME", "~")).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "eval-gate"


def resolve_cache_dir(configured: str | None, environ: Mapping[str, str], root: Path) -> Path:
    """The cache folder: gate.yml's `cache.dir`, else `default_cache_dir`; a relative path is
    taken from `root` (the repository, the workspace in the Action), never from a side's own
    working directory, so both sides of the PR flow find one folder."""
    chosen = Path(configured).expanduser() if configured else default_cache_dir(environ)
    return chosen if chosen.is_absolute() else root.resolve() / chosen


def mark_ignored(directory: Path) -> None:
    """A `.gitignore` of `*` in the folder: git (and so `git status` and a side's dirty flag)
    never sees the cache, wherever it lies and whatever the repository's own ignore rules say."""
    marker = directory / ".gitignore"
    if not marker.exists():
        atomic_write(marker, IGNORE_ALL)


def cache_key(request: str | Mapping[str, Any], body: Any, repeat: int) -> str:
    """The entry's name: `request` is where and how the request goes (`Endpoint.identity()`),
    `body` what it sends, `repeat` which run of the case it is."""
    material = {"v": CACHE_VERSION, "endpoint": request, "body": body, "repeat": repeat}
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path | None, *, enabled: bool = True) -> None:
        self.directory = directory
        self.enabled = enabled and directory is not None
        self.hits = 0
        self.misses = 0
        self.ignored = 0  # entries found that the gate did not write (`cache_trust`)
        self.refused: str | None = None  # why the folder is not used at all
        self._lock = threading.Lock()
        self._warned = False
        self._marked = False
        self._checked = False

    def usable(self) -> bool:
        """Enabled, and its folder can hold only the gate's answers (checked once; a refusal
        is noted once)."""
        if not self.enabled:
            return False
        with self._lock:
            if not self._checked:
                self._checked = True
                self.refused = folder_problem(self.directory)  # type: ignore[arg-type]
                if self.refused is not None:
                    log.warning(
                        "[gate] response cache %s not used: %s, so an answer in it may not be "
                        "the gate's; every request is asked",
                        self.directory,
                        self.refused,
                    )
        return self.refused is None

    def path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"v{CACHE_VERSION}" / key[:2] / f"{key}.json"

    @contextlib.contextmanager
    def single_flight(self, key: str | None) -> Iterator[None]:
        """Hold the key while its request is looked up, asked and stored: another worker or
        process with the same request (the base's and the head's side ask the same for every
        case the PR leaves alone) waits and reads the first one's answer instead of asking the
        provider again. The lock is a file lock beside the entry, removed once it is stored; a
        folder that cannot hold one asks without it (a second call costs money, not results)."""
        if key is None or not self.usable():
            yield
            return
        lock = self.path(key).with_suffix(".lock")
        try:
            make_folders(lock.parent, 3)
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError:
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            # A waiter may hold the unlinked file's lock while a newcomer locks a new one: both
            # look the entry up first, so that costs at most a call, never a wrong answer.
            with contextlib.suppress(OSError):
                lock.unlink()
            os.close(fd)

    def get(self, key: str) -> Any | None:
        entry = self.lookup(key)
        return entry["response"] if entry is not None else None

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The stored entry (`response`, and `latency_ms` of the call it replaces) or None: one
        the gate wrote itself, under its own key."""
        if not self.usable():
            return None
        path = self.path(key)
        try:
            data = read_owned(self.directory, path.parts[-3:])  # type: ignore[arg-type]
            entry = json.loads(data.decode("utf-8")) if data is not None else None
        except Untrusted as exc:
            self._ignore(path, str(exc))
            entry = None
        except (OSError, ValueError):
            entry = None
        found = isinstance(entry, dict) and entry.get("key") == key and "response" in entry
        with self._lock:
            if found:
                self.hits += 1
            else:
                self.misses += 1
        if found:
            _touch(path)
        return entry if found else None  # type: ignore[return-value]

    def _ignore(self, path: Path, reason: str) -> None:
        with self._lock:
            self.ignored += 1
            first = self.ignored == 1
        if first:
            log.warning(
                "[gate] response cache: an answer the gate did not write is ignored (%s: %s); "
                "so is every other such one, and the request is asked",
                path,
                reason,
            )

    def put(self, key: str, response: Any, *, latency_ms: float | None = None) -> None:
        if not self.usable():
            return
        target = self.path(key)
        entry = {"key": key, "response": response, "latency_ms": latency_ms}
        text = json.dumps(entry, ensure_ascii=False)
        try:
            make_folders(target.parent, 3)
            atomic_write(target, text, folder_mode=0o700)
            if not self._marked:
                mark_ignored(self.directory)  # type: ignore[arg-type]
                self._marked = True
        except OSError as exc:
            # A cache that cannot be written costs calls on the next run, not this run.
            if not self._warned:
                self._warned = True
                log.warning("response cache not written (%s): %s", exc.strerror, target.parent)


def _touch(path: Path) -> None:
    """Record the read: the entry's modification time is when a run last used it."""
    with contextlib.suppress(OSError):  # a read-only cache still answers
        os.utime(path)


@dataclass(frozen=True)
class CacheSize:
    """What a cache folder holds after `prune`: answers kept and removed, bytes kept."""

    entries: int = 0
    bytes: int = 0
    removed: int = 0


def prune(directory: Path, keep_days: float, *, now: float | None = None) -> CacheSize:
    """Delete the entries no run read or wrote in the last `keep_days` days (and temporary
    files as old); nothing that is not an entry of the cache's layout is ever touched."""
    cutoff = (time.time() if now is None else now) - keep_days * 86400
    entries = size = removed = 0
    for path in sorted(directory.glob("v*/??/*")):
        if not ENTRY.fullmatch(path.name):
            continue
        try:
            stat = path.stat()
            if stat.st_mtime < cutoff:
                path.unlink()
                removed += 1
            elif path.name.endswith(".json") and not path.name.startswith("."):
                entries, size = entries + 1, size + stat.st_size
        except OSError:
            continue
    return CacheSize(entries=entries, bytes=size, removed=removed)
