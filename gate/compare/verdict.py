"""The verdict: errors first, then the two blocking rules (threshold, blocking cases)."""

from __future__ import annotations

from gate.compare.models import CaseChange, SideTotals, Verdict
from gate.compare.stats import Significance
from gate.inputs.policy import Policy


def _fmt(value: float) -> str:
    return f"{value:.1f}".replace("-", "\N{MINUS SIGN}")


def _error_reasons(base: SideTotals, head: SideTotals, policy: Policy) -> list[str]:
    reasons = []
    if head.n == 0:
        reasons.append("the head report has no case results")
    for label, side in (("base", base), ("head", head)):
        if side.n and side.error_rate is not None and side.error_rate > policy.max_error_rate:
            reasons.append(
                f"{side.errors} of {side.n} {label} cases ended in an error "
                f"({_fmt(side.error_rate)}%, the limit is {policy.max_error_rate:g}%)"
            )
    return reasons


def _blocking_errors(
    changes: dict[str, CaseChange], lists: dict[str, list[str]], policy: Policy
) -> list[str]:
    reasons = []
    for side in ("head", "base"):
        ids = [
            i for i in lists["errors" if side == "head" else "base_errors"] if changes[i].blocking
        ]
        if ids:
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            noun = "case" if len(ids) == 1 else "cases"
            reasons.append(f"blocking {noun} {shown} ended in an error on {side}")
    return reasons


def _threshold_reason(
    delta: float | None, stats: Significance, policy: Policy, notes: list[str]
) -> list[str]:
    if delta is None or delta >= -policy.threshold:
        return []
    drop = (
        f"the pass rate dropped {_fmt(-delta)} points, more than the threshold of "
        f"{policy.threshold:g}"
    )
    if not policy.require_significance:
        return [drop]
    p = stats.decision_p_value
    if stats.significant and p is not None:
        return [f"{drop}, and the drop is significant (p = {p:.3g} < {policy.alpha:g})"]
    shown = "n/a" if p is None else f"{p:.3g}"
    notes.append(
        f"{drop}, but the drop is not significant (p = {shown}, alpha {policy.alpha:g}); "
        "require_significance is on, so it does not block"
    )
    return []


def _blocker_reason(lists: dict[str, list[str]]) -> list[str]:
    failing = lists["blocker_failures"]
    if not failing:
        return []
    new = set(lists["new_blocker_failures"])
    shown = ", ".join(
        f"{i} ({'new' if i in new else 'already failing on base'})" for i in failing[:5]
    )
    more = f" and {len(failing) - 5} more" if len(failing) > 5 else ""
    noun = "case does" if len(failing) == 1 else "cases do"
    return [f"{len(failing)} blocking {noun} not pass on head: {shown}{more}"]


def decide(
    base: SideTotals,
    head: SideTotals,
    delta: float | None,
    stats: Significance,
    lists: dict[str, list[str]],
    changes: dict[str, CaseChange],
    policy: Policy,
) -> tuple[Verdict, list[str], list[str]]:
    """(verdict, reasons, notes): errors first, then the two blocking rules."""
    notes: list[str] = []
    errors = _error_reasons(base, head, policy) + _blocking_errors(changes, lists, policy)
    failures = _threshold_reason(delta, stats, policy, notes) + _blocker_reason(lists)
    if errors:
        return "error", errors + [f"also: {f}" for f in failures], notes
    if failures:
        return "fail", failures, notes
    reasons = []
    if delta is None:
        reasons.append("no case ran on both sides, so the threshold rule does not apply")
    else:
        reasons.append(
            f"the pass rate changed by {'+' if delta >= 0 else ''}{_fmt(delta)} points "
            f"(a drop of more than {policy.threshold:g} blocks)"
        )
    reasons.append("no blocking case fails on head")
    return "pass", reasons, notes
