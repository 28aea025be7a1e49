"""The verdict: errors first, then the two blocking rules (threshold, blocking cases).

Pure and wordless: each rule that fired, or held, is a `Finding` with its numbers;
`gate.render.reasons` words them.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.compare.models import CaseChange, Finding, SideTotals, Verdict
from gate.compare.power import Power
from gate.compare.stats import Significance
from gate.inputs.policy import Policy


def _error_findings(base: SideTotals, head: SideTotals, policy: Policy) -> list[Finding]:
    found = []
    if head.n == 0:
        found.append(Finding(kind="no_head_results", outcome="error"))
    for label, side in (("base", base), ("head", head)):
        if side.n and side.error_rate is not None and side.error_rate > policy.max_error_rate:
            found.append(
                Finding(
                    kind="error_rate",
                    outcome="error",
                    side=label,
                    count=side.errors,
                    n=side.n,
                    value=side.error_rate,
                    limit=policy.max_error_rate,
                )
            )
    return found


def _blocking_errors(changes: dict[str, CaseChange], lists: dict[str, list[str]]) -> list[Finding]:
    found = []
    for side in ("head", "base"):
        ids = [
            i for i in lists["errors" if side == "head" else "base_errors"] if changes[i].blocking
        ]
        if ids:
            found.append(Finding(kind="blocking_error", outcome="error", side=side, ids=ids))
    return found


def _threshold(delta: float | None, stats: Significance, policy: Policy) -> list[Finding]:
    if delta is None or delta >= -policy.threshold:
        return []
    drop = {"value": -delta, "limit": policy.threshold}
    if not policy.require_significance:
        return [Finding(kind="drop", outcome="fail", **drop)]
    p = stats.decision_p_value
    if stats.significant and p is not None:
        return [
            Finding(kind="significant_drop", outcome="fail", p_value=p, alpha=policy.alpha, **drop)
        ]
    return [
        Finding(kind="insignificant_drop", outcome="note", p_value=p, alpha=policy.alpha, **drop)
    ]


def _runs(change: CaseChange) -> list[int]:
    return [
        change.base_passes or 0,
        change.base_repeats,
        change.head_passes or 0,
        change.head_repeats,
    ]


def _passed_every_run_on_base(change: CaseChange) -> bool:
    if change.base is None:
        return True  # new on head: there is no base to excuse it
    return change.base == "pass" and change.base_passes == change.base_repeats


def _blockers(
    lists: dict[str, list[str]], changes: dict[str, CaseChange], policy: Policy
) -> list[Finding]:
    failing = lists["blocker_failures"]
    if not failing:
        return []
    new = set(lists["new_blocker_failures"])
    runs = {
        i: _runs(changes[i])
        for i in failing
        if changes[i].base_repeats > 1 or changes[i].head_repeats > 1
    }
    if policy.blockers == "new":
        blocking = [i for i in failing if _passed_every_run_on_base(changes[i])]
        excused = [i for i in failing if i not in blocking]
    else:
        blocking, excused = failing, []
    found = []
    if blocking:
        found.append(
            Finding(
                kind="blockers",
                outcome="fail",
                ids=blocking,
                new_ids=[i for i in blocking if i in new],
                runs={i: r for i, r in runs.items() if i in blocking},
            )
        )
    if excused:
        found.append(
            Finding(
                kind="old_blockers",
                outcome="note",
                ids=excused,
                runs={i: r for i, r in runs.items() if i in excused},
            )
        )
    return found


def decide(
    base: SideTotals,
    head: SideTotals,
    delta: float | None,
    stats: Significance,
    lists: dict[str, list[str]],
    changes: dict[str, CaseChange],
    policy: Policy,
    budgets: Sequence[Finding] = (),
    *,
    baseline: bool = True,
) -> tuple[Verdict, list[Finding]]:
    """The verdict and its findings: errors first, then the blocking rules (threshold, blocking
    cases, the budgets' findings of `gate.compare.budgets`). With a baseline, a comparison that
    paired no case compared nothing: an error, never a pass."""
    errors = _error_findings(base, head, policy) + _blocking_errors(changes, lists)
    if baseline and delta is None and head.n:
        errors.append(Finding(kind="nothing_compared", outcome="error", count=base.n, n=head.n))
    rules = _threshold(delta, stats, policy) + _blockers(lists, changes, policy) + list(budgets)
    failures = [f for f in rules if f.outcome == "fail"]
    notes = [f for f in rules if f.outcome == "note"]
    if errors:
        return "error", errors + failures + notes
    if failures:
        return "fail", failures + notes
    blocking_held = (
        [Finding(kind="no_blocker_fails", outcome="pass")]
        if not any(f.kind == "old_blockers" for f in notes)
        else []
    )
    held = (
        Finding(kind="no_baseline", outcome="pass", n=head.n)
        if not baseline
        else Finding(kind="within_threshold", outcome="pass", value=delta, limit=policy.threshold)
    )
    return "pass", [held, *blocking_held, *notes]


def resolution_findings(power: Power | None, policy: Policy) -> list[Finding]:
    """A note when the threshold is finer than the suite can resolve: below one case's weight
    (one case decides) or below the smallest drop caught with 80% power."""
    if power is None or policy.threshold >= power.mde_points:
        return []
    kind = "coarse_suite" if policy.threshold < power.case_weight_points else "underpowered"
    return [
        Finding(
            kind=kind,
            outcome="note",
            n=power.n,
            value=power.mde_points,
            limit=policy.threshold,
            alpha=power.alpha,
            count=round(power.case_weight_points * 100),  # hundredths of a point
        )
    ]
