"""The shared slow-down: every worker calling one provider passes through one `Throttle`.

Two mechanisms, both driven by the provider's 429 answers:
- a cool-down gate: after a 429 nobody sends anything until the provider's requested wait is
  over (instead of every worker discovering the limit on its own);
- an adaptive in-flight limit (additive increase, multiplicative decrease, as in TCP): each
  pile-up of 429s halves the number of concurrent requests, each success adds back a fraction,
  so a rate-limited run settles at the rate the provider accepts instead of hammering it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class ThrottleTimeout(Exception):
    """The deadline passed while waiting for a slot or for the cool-down to end."""


class Throttle:
    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_limit = max(1, limit)
        self._limit = float(self.max_limit)
        self._in_flight = 0
        self._resume_at = 0.0
        self._clock = clock
        self._cond = threading.Condition()
        self.slowdowns = 0

    @property
    def limit(self) -> int:
        return max(1, int(self._limit))

    @contextmanager
    def slot(self, deadline: float | None) -> Iterator[None]:
        self._acquire(deadline)
        try:
            yield
        finally:
            with self._cond:
                self._in_flight -= 1
                self._cond.notify_all()

    def _acquire(self, deadline: float | None) -> None:
        with self._cond:
            while True:
                now = self._clock()
                cool = self._resume_at - now
                if cool <= 0 and self._in_flight < self.limit:
                    self._in_flight += 1
                    return
                left = None if deadline is None else deadline - now
                if left is not None and (left <= 0 or cool >= left):
                    raise ThrottleTimeout
                waits = [w for w in (cool if cool > 0 else None, left) if w is not None]
                self._cond.wait(timeout=min(waits) if waits else None)

    def succeeded(self) -> None:
        with self._cond:
            before = self.limit
            self._limit = min(float(self.max_limit), self._limit + 1.0 / self._limit)
            if self.limit > before:
                self._cond.notify_all()

    def rate_limited(self, wait_s: float) -> None:
        """A 429: close the gate for `wait_s`; the first 429 of a pile-up halves the limit.

        429s that arrive while the gate is already closed come from requests sent before it
        closed, so they do not halve the limit again.
        """
        with self._cond:
            now = self._clock()
            if now >= self._resume_at:
                self._limit = max(1.0, self._limit / 2)
                self.slowdowns += 1
            self._resume_at = max(self._resume_at, now + wait_s)
