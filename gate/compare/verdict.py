"""The verdict: errors first, then the two blocking rules (threshold, blocking cases).

Pure and wordless: each rule that fired, or held, is a `Finding` with its numbers;
`gate.render.reasons` words them.
"""

from __future__ import annotations

from collections.abc import Sequence

from gate.compare.findings import (
    Blockers,
    BlockingError,
    CoarseSuite,
    Drop,
    ErrorRate,
    Finding,
    InsignificantDrop,
    NoBaseline,
    NoBlockerFails,
    NoHeadResults,
    NothingCompared,
    OldBlockers,
    Runs,
    SideName,
    SignificantDrop,
    Underpowered,
    WithinThreshold,
)
from gate.compare.lists import CaseLists
from gate.compare.models import CaseChange, SideCase, SideTotals, Verdict
from gate.compare.power import Power
from gate.compare.stats import Significance
from gate.inputs.policy import Policy


def _error_findings(base: SideTotals, head: SideTotals, policy: Policy) -> list[Finding]:
    found: list[Finding] = []
    if head.n == 0:
        found.append(NoHeadResults())
    sides: tuple[tuple[SideName, SideTotals], ...] = (("base", base), ("head", head))
    for label, side in sides:
        if side.n and side.error_rate is not None and side.error_rate > policy.max_error_rate:
            found.append(
                ErrorRate(
                    side=label,
                    errors=side.errors,
                    cases=side.n,
                    rate_pct=side.error_rate,
                    limit_pct=policy.max_error_rate,
                )
            )
    return found


def _blocking_errors(changes: dict[str, CaseChange], lists: CaseLists) -> list[Finding]:
    found: list[Finding] = []
    sides: tuple[SideName, ...] = ("head", "base")
    for side in sides:
        ids = [i for i in lists.errors_on(side) if changes[i].blocking]
        if ids:
            found.append(BlockingError(side=side, ids=ids))
    return found


def _threshold(delta: float | None, stats: Significance, policy: Policy) -> list[Finding]:
    if delta is None or delta >= -policy.threshold:
        return []
    drop, threshold = -delta, policy.threshold
    if not policy.require_significance:
        return [Drop(drop_points=drop, threshold=threshold)]
    p = stats.decision_p_value
    if stats.significant and p is not None:
        return [
            SignificantDrop(drop_points=drop, threshold=threshold, p_value=p, alpha=policy.alpha)
        ]
    return [InsignificantDrop(drop_points=drop, threshold=threshold, p_value=p, alpha=policy.alpha)]


def _runs(change: CaseChange) -> Runs:
    def counts(side: SideCase | None) -> tuple[int, int]:
        return (side.passes, side.repeats) if side else (0, 0)

    (base_passes, base_runs), (head_passes, head_runs) = counts(change.base), counts(change.head)
    return Runs(
        base_passes=base_passes, base_runs=base_runs, head_passes=head_passes, head_runs=head_runs
    )


def _passed_every_run_on_base(change: CaseChange) -> bool:
    base = change.base
    if base is None:
        return True  # new on head: there is no base to excuse it
    return base.status == "pass" and base.passes == base.repeats


def _blockers(lists: CaseLists, changes: dict[str, CaseChange], policy: Policy) -> list[Finding]:
    failing = lists.blocker_failures
    if not failing:
        return []
    new = set(lists.new_blocker_failures)
    runs = {i: _runs(changes[i]) for i in failing if changes[i].repeated}
    if policy.blockers == "new":
        blocking = [i for i in failing if _passed_every_run_on_base(changes[i])]
        excused = [i for i in failing if i not in blocking]
    else:
        blocking, excused = failing, []
    found: list[Finding] = []
    if blocking:
        found.append(
            Blockers(
                ids=blocking,
                new_ids=[i for i in blocking if i in new],
                runs={i: r for i, r in runs.items() if i in blocking},
            )
        )
    if excused:
        found.append(
            OldBlockers(
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
    lists: CaseLists,
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
        errors.append(NothingCompared(base_cases=base.n, head_cases=head.n))
    rules = _threshold(delta, stats, policy) + _blockers(lists, changes, policy) + list(budgets)
    failures: list[Finding] = [f for f in rules if f.outcome == "fail"]
    notes: list[Finding] = [f for f in rules if f.outcome == "note"]
    if errors:
        return "error", errors + failures + notes
    if failures:
        return "fail", failures + notes
    blocking_held: list[Finding] = (
        [] if any(isinstance(f, OldBlockers) for f in notes) else [NoBlockerFails()]
    )
    held: Finding = (
        WithinThreshold(delta_points=delta, threshold=policy.threshold)
        if baseline and delta is not None
        else NoBaseline(head_cases=head.n)
    )
    return "pass", [held, *blocking_held, *notes]


def resolution_findings(power: Power | None, policy: Policy) -> list[Finding]:
    """A note when the threshold is finer than the suite can resolve: below one case's weight
    (one case decides) or below the smallest drop caught with 80% power."""
    if power is None or policy.threshold >= power.mde_points:
        return []
    kind = CoarseSuite if policy.threshold < power.case_weight_points else Underpowered
    return [
        kind(
            cases=power.n,
            case_weight_points=power.case_weight_points,
            mde_points=power.mde_points,
            threshold=policy.threshold,
            alpha=power.alpha,
        )
    ]
