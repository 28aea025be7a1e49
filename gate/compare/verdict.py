"""The verdict: errors first, then the blocking rules (threshold, blocking cases, budgets),
then what could not be decided.

Pure and wordless: each rule that fired, held, or could not decide is a `Finding` with its
numbers; `gate.render.reasons` words them. The threshold rule: with fixed repeats a drop past
the threshold fails (the SPEC's rule); under `repeats: auto`, or with `require_significance`,
the drop test decides (`gate.compare.droptest`, at the suite's share of the PR's false-block
rate): a drop past the threshold fails when it rejects "no change", and is `inconclusive` when
it does not, as are `repeats: auto` rounds that spent their budget with the interval still
reaching past −threshold.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist
from typing import NamedTuple

from gate.compare.droptest import METHODS, DropTest
from gate.compare.finding_base import Advice, SideName
from gate.compare.findings import (
    Blockers,
    BlockingError,
    CoarseSuite,
    Drop,
    ErrorRate,
    Finding,
    Inconclusive,
    NoBaseline,
    NoBlockerFails,
    NoHeadResults,
    NothingCompared,
    OldBlockers,
    Runs,
    Underpowered,
    WithinThreshold,
)
from gate.compare.lists import CaseLists
from gate.compare.models import CaseChange, SideCase, SideTotals, Verdict
from gate.compare.power import Power
from gate.inputs.policy import Policy
from gate.report.plan import StopReason

UNDERPOWERED = 1.5  # a note when the drop caught 9 times in 10 is beyond this many thresholds
_normal = NormalDist()


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


class ThresholdCase(NamedTuple):
    """What the threshold rule decides on: the delta (points), the drop test, the interval
    (low, high, confidence), whether the drop test decides (`repeats: auto`, or
    `require_significance`), whether `repeats: auto` ended undecided (its budget spent, or no
    case went on), and what would decide it."""

    delta: float | None
    drop: DropTest | None
    interval: tuple[float | None, float | None, float]
    tested: bool = False
    undecided: bool = False
    to_decide: tuple[int, int] | None = None
    single_runs: bool = False


def threshold_findings(case: ThresholdCase, policy: Policy) -> list[Finding]:
    """The threshold rule. Fixed repeats under the default policy: a drop past the threshold
    fails (the SPEC's rule). Where the drop test decides (`tested`), such a drop fails only
    when the test rejects no change at the suite's share of the false-block rate, else it is
    inconclusive, as are rounds that ended undecided with the interval past −threshold."""
    delta, drop, (low, high, confidence) = case.delta, case.drop, case.interval
    if delta is None:
        return []
    threshold = policy.threshold
    past = delta < -threshold
    if past and not case.tested:
        return [Drop(drop_points=-delta, threshold=threshold)]
    if drop is None:
        return []
    if past and drop.significant:
        return [
            Drop(
                drop_points=-delta,
                threshold=threshold,
                p_value=drop.p_value,
                bar=drop.bar,
                level=drop.level,
                method=METHODS[drop.method],
            )
        ]
    if not past and not (case.undecided and low is not None and low < -threshold):
        return []
    more, cases = case.to_decide or (None, None)
    return [
        Inconclusive(
            why="not_significant" if past else "budget",
            delta_points=delta,
            threshold=threshold,
            ci_low_points=low,
            ci_high_points=high,
            confidence=confidence,
            p_value=drop.p_value,
            bar=drop.bar,
            level=drop.level,
            more_runs=more,
            cases=cases,
            single_runs=case.single_runs,
        )
    ]


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
    threshold: Sequence[Finding],
    lists: CaseLists,
    changes: dict[str, CaseChange],
    policy: Policy,
    budgets: Sequence[Finding] = (),
    *,
    baseline: bool = True,
) -> tuple[Verdict, list[Finding]]:
    """The verdict and its findings: errors first, then the blocking rules (`threshold`, the
    threshold rule's findings; blocking cases; the budgets' findings of
    `gate.compare.budgets`), then what could not be decided. With a baseline, a comparison that
    paired no case compared nothing: an error, never a pass."""
    errors = _error_findings(base, head, policy) + _blocking_errors(changes, lists)
    if baseline and delta is None and head.n:
        errors.append(NothingCompared(base_cases=base.n, head_cases=head.n))
    rules = list(threshold) + _blockers(lists, changes, policy) + list(budgets)
    failures: list[Finding] = [f for f in rules if f.outcome == "fail"]
    undecided: list[Finding] = [f for f in rules if f.outcome == "inconclusive"]
    notes: list[Finding] = [f for f in rules if f.outcome == "note"]
    if errors:
        return "error", errors + failures + undecided + notes
    if failures:
        return "fail", failures + undecided + notes
    blocking_held: list[Finding] = (
        [] if any(isinstance(f, OldBlockers) for f in notes) else [NoBlockerFails()]
    )
    if undecided:
        return "inconclusive", [*undecided, *blocking_held, *notes]
    held: Finding = (
        WithinThreshold(delta_points=delta, threshold=policy.threshold)
        if baseline and delta is not None
        else NoBaseline(head_cases=head.n)
    )
    return "pass", [held, *blocking_held, *notes]


def resolution_findings(
    power: Power | None, policy: Policy, *, tested: bool, stop: StopReason | None = None
) -> list[Finding]:
    """A note when the suite cannot enforce the threshold as the gate applies it: the
    threshold is below one case's weight (one case decides); with fixed repeats and the
    threshold rule alone (`tested` False), noise alone crosses the threshold in more PRs that
    change nothing than `false_block_rate`; where the drop test decides, the drop caught 9
    times in 10 is beyond 1.5 thresholds (smaller ones are often inconclusive), which under
    `repeats: auto` is said only when the rounds ended undecided (`stop`: their budget)."""
    if power is None:
        return []
    coarse = policy.threshold < power.case_weight_points
    noise = _normal.cdf(-policy.threshold / power.se_points) if power.se_points > 0 else 0.0
    if coarse:
        advice: Advice = "fixed"
    elif not tested:
        advice = "fixed"
        if noise <= policy.false_block_rate:
            return []
    else:
        advice = "tested" if power.design_points is None else "budget"
        if power.detectable_points <= UNDERPOWERED * policy.threshold:
            return []
        if advice == "budget" and stop not in ("budget", "settled"):
            return []  # the rounds decided within their design
    kind = CoarseSuite if coarse else Underpowered
    return [
        kind(
            cases=power.n,
            case_weight_points=power.case_weight_points,
            detectable_points=power.detectable_points,
            threshold=policy.threshold,
            level=power.level,
            se_points=power.se_points,
            noise_blocks=noise,
            advice=advice,
        )
    ]
