"""Which lists a changed case belongs in: regressions, fixes, errors, blocking failures, ...

Pure. The lists are the comparison's `json` keys of the same names (case ids); each is in the
order the comment shows it: blocking cases first, then by severity, then in suite order.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, fields

from gate.compare.finding_base import SideName
from gate.compare.models import CaseChange
from gate.inputs.policy import SEVERITY_ORDER

CLEAR_CHANGE = 0.5  # with repeats: a regression's pass fraction fell by at least this much
NOT_PASSING_BLOCKER = ("fail", "needs_review")


@dataclass
class CaseLists:
    """The case ids of each list of a comparison (see docs/comment.md, "What is compared")."""

    regressions: list[str] = field(default_factory=list)
    new_errors: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)
    still_failing: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    added_by_pr: list[str] = field(default_factory=list)
    blocker_failures: list[str] = field(default_factory=list)
    new_blocker_failures: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    base_errors: list[str] = field(default_factory=list)
    needs_review: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    path_changed: list[str] = field(default_factory=list)

    def errors_on(self, side: SideName) -> list[str]:
        return self.errors if side == "head" else self.base_errors

    def as_fields(self) -> dict[str, list[str]]:
        """The lists by name, as `Comparison` holds them."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _order(change: CaseChange) -> tuple[int, int, int]:
    """Blocking cases first, then by severity, then in suite order."""
    return (not change.blocking, SEVERITY_ORDER.get(change.severity, 9), change.index)


def _by_outcome(lists: CaseLists, change: CaseChange) -> None:
    """One run per side: the outcomes decide."""
    base, head = change.statuses
    if base == "pass" and head == "fail":
        lists.regressions.append(change.id)
    elif base == "pass" and head == "error":
        lists.new_errors.append(change.id)
    elif base != "pass" and head == "pass":
        lists.fixes.append(change.id)
    elif base != "pass" and head == "fail":
        lists.still_failing.append(change.id)


def _by_fraction(lists: CaseLists, change: CaseChange) -> None:
    """With repeats: a regression (fix) is a case whose pass fraction fell (rose) by at least
    `CLEAR_CHANGE`, e.g. 2/3 -> 0/3; a smaller move of a flaky case is noise."""
    assert change.base is not None and change.head is not None
    moved = change.head.fraction - change.base.fraction
    if moved <= -CLEAR_CHANGE + 1e-9:
        lists.regressions.append(change.id)
    elif moved >= CLEAR_CHANGE - 1e-9:
        lists.fixes.append(change.id)
    elif change.head.status == "fail" and change.base.status != "pass":
        lists.still_failing.append(change.id)


def _add(lists: CaseLists, change: CaseChange, repeated: bool) -> None:
    base, head = change.statuses
    if change.added_by_pr:  # outside the delta: no regression or fix, only what blocks
        lists.added_by_pr.append(change.id)
    elif head is None:
        lists.removed.append(change.id)
    elif base is None:
        lists.added.append(change.id)
    elif repeated and "error" not in (base, head):
        _by_fraction(lists, change)
    else:
        _by_outcome(lists, change)
    if head == "error":
        lists.errors.append(change.id)
    if base == "error":
        lists.base_errors.append(change.id)
    if head == "needs_review":
        lists.needs_review.append(change.id)
    if change.flaky:
        lists.flaky.append(change.id)
    if change.path_changed:
        lists.path_changed.append(change.id)
    if change.blocking and head in NOT_PASSING_BLOCKER:
        lists.blocker_failures.append(change.id)
        if base not in NOT_PASSING_BLOCKER:
            lists.new_blocker_failures.append(change.id)


def sort_into_lists(
    changes: Iterable[CaseChange], *, repeated: bool
) -> tuple[CaseLists, dict[str, CaseChange]]:
    """The lists of the changed cases (`repeated`: by pass fractions), and every listed case
    by id; a change no list names (a case that passed on both sides) is left out."""
    lists = CaseLists()
    by_id: dict[str, CaseChange] = {}
    for change in changes:
        by_id[change.id] = change
        _add(lists, change, repeated)
    found = lists.as_fields()
    listed = {i: by_id[i] for ids in found.values() for i in ids}
    ordered = {name: sorted(ids, key=lambda i: _order(by_id[i])) for name, ids in found.items()}
    return CaseLists(**ordered), listed
