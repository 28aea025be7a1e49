"""The same error on many cases, said once: cases grouped by their error message.

A dead endpoint ends every case with the same words; the comment and the terminal show one
row for them (`20 cases: …`), not twenty. A held-out case's message is never shown, so held-out
cases make a group of their own. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gate.compare.models import CaseChange, Comparison

Side = Literal["base", "head"]


@dataclass(frozen=True)
class ErrorGroup:
    """Cases that ended in an error with the same message on one side."""

    cases: list[CaseChange]
    error: str | None  # None: held-out cases, whose message is not shown
    heldout: bool = False

    @property
    def total(self) -> int:
        return len(self.cases)

    @property
    def tasks(self) -> list[str]:
        return sorted({case.task for case in self.cases})

    @property
    def by_change(self) -> list[CaseChange]:
        """One case of each outcome change (`pass → error`, `error → error`), in order."""
        seen: dict[tuple[str | None, str | None], CaseChange] = {}
        for case in self.cases:
            seen.setdefault(case.statuses, case)
        return list(seen.values())

    @property
    def first(self) -> CaseChange:
        return self.cases[0]


def error_groups(c: Comparison, ids: list[str], side: Side) -> list[ErrorGroup]:
    """The cases of `ids` grouped by their error on `side`, the largest group first (then in
    the order of `ids`)."""
    groups: dict[tuple[bool, str | None], list[CaseChange]] = {}
    for case in c.case_list(ids):
        outcome = case.head if side == "head" else case.base
        message = None if case.heldout else ((outcome.error if outcome else None) or "")
        groups.setdefault((case.heldout, message), []).append(case)
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return [
        ErrorGroup(cases=cases, error=message, heldout=heldout)
        for (heldout, message), cases in ordered
    ]
