"""What one provider client sent: requests, retries, rate-limit answers, calls given up on.

Shown in the progress line while a run goes (a provider that keeps answering 429 is visible
at once) and recorded in the summary's `http`."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

COUNTS = ("requests", "retries", "rate_limited", "failures")


@dataclass
class Traffic:
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0  # 429 answers
    failures: int = 0  # calls that ended in an error after their retries
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def bump(self, name: str) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + 1)

    def as_dict(self) -> dict[str, int]:
        with self._lock:
            return {name: getattr(self, name) for name in COUNTS}
