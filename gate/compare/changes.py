"""The cases the comparison keeps, as a reader needs them: each side's outcome and, unless the
case is held out, an excerpt of its output and the checks that decided it. Pure.

A case that passed on both sides, with nothing flaky about it and an agent's path unchanged,
is counted and not kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from gate.compare.estimates import plain_fraction
from gate.compare.models import EXCERPT_CHARS, CaseChange, SideCase
from gate.compare.paths import path_changed, path_details
from gate.compare.totals import Estimates
from gate.inputs.policy import Policy
from gate.report.checks import CheckBase, RubricResult, TurnCheckResult
from gate.report.models import CaseResult
from gate.report.output import readable_output

DETAIL_CHARS = 500
MAX_CHECKS = 20
C = TypeVar("C", bound=CheckBase)
Pairs = Sequence[tuple[CaseResult, CaseResult]]


def _excerpt(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _short_check(check: C) -> C:
    if isinstance(check, TurnCheckResult):  # a turn's check keeps its own detail too
        check = check.model_copy(update={"check": _short_check(check.check)})
    if len(check.detail) <= DETAIL_CHARS:
        return check
    return check.model_copy(update={"detail": check.detail[:DETAIL_CHARS]})


def _rubric(result: CaseResult) -> list[RubricResult]:
    return [_short_check(c) for c in result.checks if isinstance(c, RubricResult)][:MAX_CHECKS]


def _side(result: CaseResult, fraction: float, *, heldout: bool) -> SideCase:
    """One side's outcome and, unless the case is held out, what a reader needs to see why it
    failed."""
    outcome = SideCase(
        status=result.status,
        fraction=fraction,
        repeats=result.repeats,
        passes=sum(result.run_passes()),
        flaky=result.flaky,
    )
    if heldout:
        return outcome
    shown = readable_output(result.output, result.tool_calls)
    details = {
        "output": _excerpt(shown, EXCERPT_CHARS),
        "output_chars": len(shown or ""),
        "failed_checks": [_short_check(c) for c in result.failed_checks[:MAX_CHECKS]],
        "review_checks": [_short_check(c) for c in result.checks if c.passed is None][:MAX_CHECKS],
        "rubric": _rubric(result),
        "error": _excerpt(result.error, DETAIL_CHARS),
    }
    return outcome.model_copy(update={**details, **path_details(result)})


def case_change(
    base: CaseResult | None,
    head: CaseResult | None,
    policy: Policy,
    estimate: tuple[float, float] | None = None,
    *,
    added_by_pr: bool = False,
) -> CaseChange:
    """What the comparison keeps of one case; held-out cases lose everything but outcomes.
    `estimate`: the two sides' pass fractions when they are not the plain ones (repeats: auto)."""
    source = head if head is not None else base
    assert source is not None
    heldout = source.heldout or bool(base and base.heldout)
    base_fraction = plain_fraction(base) if base else 0.0
    head_fraction = plain_fraction(head) if head else 0.0
    if estimate is not None:
        base_fraction, head_fraction = estimate
    return CaseChange(
        id=source.id,
        task=source.task,
        severity=source.severity,
        heldout=heldout,
        blocking=source.severity in policy.block_severities,
        base=_side(base, base_fraction, heldout=heldout) if base else None,
        head=_side(head, head_fraction, heldout=heldout) if head else None,
        index=source.index,
        added_by_pr=added_by_pr,
        **({} if heldout else {"file": source.file, "line": source.line}),
    )


def changed_cases(
    pairs: Pairs,
    by_pr: Pairs,
    added: Sequence[CaseResult],
    removed: Sequence[CaseResult],
    policy: Policy,
    fractions: Estimates | None,
) -> list[CaseChange]:
    """The paired cases that did not pass on both sides (or were flaky, or took another
    path), the cases the PR adds, and the cases of one side only; `fractions`: the pass
    fractions under repeats."""
    changed = [
        case_change(b, h, policy, fractions[h.id] if fractions else None)
        for b, h in pairs
        if not (b.passed and h.passed) or b.flaky or h.flaky or path_changed(b, h)
    ]  # unchanged passes: counted only
    changed += [case_change(b, h, policy, added_by_pr=True) for b, h in by_pr]
    changed += [case_change(None, r, policy) for r in added]
    changed += [case_change(r, None, policy) for r in removed]
    return changed
