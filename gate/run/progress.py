"""Progress of a long run: a live line on a terminal, periodic plain lines in CI logs; at the
end, the cases that ended in an error, grouped by their message (`20 cases (a, b, c, …): …`), so
the terminal says why, once, and not only the report."""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Mapping
from typing import TextIO

from gate.providers.traffic import Traffic
from gate.report.models import CaseResult
from gate.report.summary import case_fraction


class Progress:
    def __init__(
        self,
        total: int,
        *,
        label: str = "",
        stream: TextIO | None = None,
        interval_s: float | None = None,
        enabled: bool = True,
        traffic: Mapping[str, Traffic] | None = None,
    ) -> None:
        self.total = total
        self.traffic = traffic if traffic is not None else {}
        self.label = label
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.interval_s = interval_s if interval_s is not None else (0.1 if self.tty else 10.0)
        self.enabled = enabled
        self.counts: Counter[str] = Counter()
        self.fractions = 0.0  # the passed share of each case's runs, summed
        self.repeated = False
        self.done = 0
        self.started = time.monotonic()
        self._last = self.started
        self._lock = threading.Lock()
        self.errors = ErrorGroups()

    def advance(self, result: CaseResult) -> None:
        with self._lock:
            self.done += 1
            self.counts[result.status] += 1
            self.errors.add(result)
            self.fractions += case_fraction(result)
            self.repeated |= result.repeats > 1
            now = time.monotonic()
            if self.enabled and now - self._last >= self.interval_s:
                self._last = now
                self._emit(final=False)

    def line(self) -> str:
        elapsed = time.monotonic() - self.started
        pct = 100 * self.done / self.total if self.total else 100.0
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        parts = [f"{self.done}/{self.total} ({pct:.0f}%)"]
        shown: tuple[str, ...] = ("pass", "fail", "error", "needs_review")
        if self.repeated and self.done:  # the rate the comparison reads, not majority counts
            parts.append(f"pass rate {100 * self.fractions / self.done:.1f}%")
            shown = ("error", "needs_review")
        parts += [f"{k} {self.counts[k]}" for k in shown if self.counts[k]]
        parts += retry_parts(self.traffic)
        parts.append(f"{elapsed:.1f}s")
        if self.done < self.total and rate > 0:
            parts.append(f"eta {eta:.0f}s")
        prefix = f"[{self.label}] " if self.label else ""
        return prefix + " · ".join(parts)

    def _emit(self, *, final: bool) -> None:
        if self.tty:
            end = "\n" if final else ""
            self.stream.write("\r\x1b[2K" + self.line() + end)
        else:
            self.stream.write(self.line() + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """The last progress line (unless quiet), then the errors: those are no progress."""
        with self._lock:
            if self.enabled:
                self._emit(final=True)
            prefix = f"[{self.label}] " if self.label else ""
            for line in self.errors.lines():
                self.stream.write(prefix + line + "\n")
            self.stream.flush()


MESSAGE_CHARS = 400  # of one error message on the terminal (the report holds it whole)
SHOWN_GROUPS = 5
HELD_OUT = "(held out: its message is in the held-out detail report only)"


class ErrorGroups:
    """Cases that ended in an error, by message: one line says a message however many cases
    it ended. A held-out case's message is not shown (it may quote its input)."""

    def __init__(self) -> None:
        self.by_message: dict[str, list[str]] = {}
        self.total = 0

    def add(self, result: CaseResult) -> None:
        if result.status != "error":
            return
        self.total += 1
        message = HELD_OUT if result.heldout else one_line(result.error or "no message")
        self.by_message.setdefault(message, []).append(result.id)

    def lines(self) -> list[str]:
        if not self.total:
            return []
        noun = "case" if self.total == 1 else "cases"
        lines = [f"{self.total} {noun} ended in an error (not a test failure):"]
        groups = sorted(self.by_message.items(), key=lambda item: -len(item[1]))
        lines += [f"  {ids_part(ids)}: {message}" for message, ids in groups[:SHOWN_GROUPS]]
        if len(groups) > SHOWN_GROUPS:
            left = sum(len(ids) for _, ids in groups[SHOWN_GROUPS:])
            lines.append(
                f"  …and {left} more with {len(groups) - SHOWN_GROUPS} other messages (the report)"
            )
        return lines


def one_line(text: str, limit: int = MESSAGE_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def ids_part(ids: list[str], shown: int = 3) -> str:
    """`faq-003`, or `20 cases (faq-000, faq-001, faq-002, …)`."""
    if len(ids) == 1:
        return ids[0]
    ordered = sorted(ids)
    more = ", …" if len(ordered) > shown else ""
    return f"{len(ids)} cases ({', '.join(ordered[:shown])}{more})"


def retry_parts(traffic: Mapping[str, Traffic]) -> list[str]:
    """`system retries 12 (429 x 9)` for each provider client that had to retry."""
    parts = []
    for role, counts in traffic.items():
        if counts.retries:
            limited = f" (429 x {counts.rate_limited})" if counts.rate_limited else ""
            parts.append(f"{role} retries {counts.retries}{limited}")
    return parts
