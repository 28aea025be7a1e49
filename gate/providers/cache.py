"""The response cache: one JSON file per request, named by the hash of the exact request.

The key material is the endpoint (without secrets), the request body (model, messages,
parameters) and the repeat index; headers never enter it. Writes go to a temporary file that is
renamed into place, so concurrent workers and concurrent processes never see half an entry;
an unreadable entry is a miss and is overwritten by the next answer.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.report.files import atomic_write

CACHE_VERSION = 1
log = logging.getLogger(__name__)


def default_cache_dir(environ: Mapping[str, str]) -> Path:
    """The cache when gate.yml names no `cache.dir`: $GATE_CACHE_DIR, else `eval-gate` in
    $XDG_CACHE_HOME or ~/.cache. The PR flow hands its choice to both sides through
    $GATE_CACHE_DIR, so base and head share one cache."""
    if environ.get("GATE_CACHE_DIR"):
        return Path(environ["GATE_CACHE_DIR"])
    home = Path(environ.get("HOME", "~")).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or home / ".cache") / "eval-gate"


def cache_key(endpoint: str, body: Any, repeat: int) -> str:
    material = {"v": CACHE_VERSION, "endpoint": endpoint, "body": body, "repeat": repeat}
    canonical = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, directory: Path | None, *, enabled: bool = True) -> None:
        self.directory = directory
        self.enabled = enabled and directory is not None
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()
        self._warned = False

    def path(self, key: str) -> Path:
        assert self.directory is not None
        return self.directory / f"v{CACHE_VERSION}" / key[:2] / f"{key}.json"

    def get(self, key: str) -> Any | None:
        entry = self.lookup(key)
        return entry["response"] if entry is not None else None

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The stored entry (`response`, and `latency_ms` of the call it replaces) or None."""
        if not self.enabled:
            return None
        try:
            entry = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            entry = None
        found = isinstance(entry, dict) and entry.get("key") == key and "response" in entry
        with self._lock:
            if found:
                self.hits += 1
            else:
                self.misses += 1
        return entry if found else None  # type: ignore[return-value]

    def put(self, key: str, response: Any, *, latency_ms: float | None = None) -> None:
        if not self.enabled:
            return
        target = self.path(key)
        entry = {"key": key, "response": response, "latency_ms": latency_ms}
        text = json.dumps(entry, ensure_ascii=False)
        try:
            atomic_write(target, text, folder_mode=0o700)
        except OSError as exc:
            # A cache that cannot be written costs calls on the next run, not this run.
            if not self._warned:
                self._warned = True
                log.warning("response cache not written (%s): %s", exc.strerror, target.parent)
