"""The comparison's decision: the threshold rule (by the drop test where the gate controls its
error), what the suite can resolve, the budgets, and from them the verdict. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gate.compare.budgets import budget_findings
from gate.compare.droptest import DropTest, fixed_test, interval, sequential_test, to_decide
from gate.compare.estimates import DeltaEstimate, delta_estimate
from gate.compare.findings import Finding
from gate.compare.lists import CaseLists
from gate.compare.models import CaseChange, SideTotals, SideUsage, Verdict
from gate.compare.power import Power, resolution
from gate.compare.rates import PassRates
from gate.compare.stats import PairedCounts
from gate.compare.verdict import ThresholdCase, decide, resolution_findings, threshold_findings
from gate.inputs.policy import Policy
from gate.report.models import CaseResult
from gate.report.plan import AutoRecord


@dataclass(frozen=True)
class Sides:
    """Each side's totals over its whole report and its usage over the paired cases."""

    base: SideTotals
    head: SideTotals
    base_usage: SideUsage
    head_usage: SideUsage


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    findings: list[Finding]
    drop_test: DropTest | None
    power: Power | None


def drop_test_decides(auto: AutoRecord | None, policy: Policy) -> bool:
    """Whether the drop test decides the threshold rule: under `repeats: auto` (the gate chose
    the runs, so it controls the error) or with `require_significance`; with fixed repeats
    otherwise a drop past the threshold fails on its own (the SPEC's rule)."""
    return auto is not None or policy.require_significance


def _drop_test(
    auto: AutoRecord | None,
    estimate: DeltaEstimate | None,
    table: PairedCounts,
    threshold: float,
    level: float,
) -> DropTest:
    """The rounds' looks when `repeats: auto` recorded them, else one look of the estimate."""
    if auto is not None and auto.looks:
        return sequential_test(auto.looks, threshold, level)
    return fixed_test(estimate, table, threshold, level)


def _threshold_rule(
    auto: AutoRecord | None, rates: PassRates, policy: Policy, level: float
) -> tuple[list[Finding], DropTest | None, DeltaEstimate | None]:
    """The threshold rule's findings, the drop test and the estimate it tested."""
    moments, stats = rates.moments, rates.stats
    estimate = delta_estimate(moments) if moments else None
    if rates.delta is None:
        return [], None, estimate
    tested = drop_test_decides(auto, policy)
    drop = _drop_test(auto, estimate, rates.table, policy.threshold, level)
    if not tested:
        drop = drop.model_copy(update={"decides": False})
    low, high = (
        interval(estimate, stats.confidence)
        if estimate is not None
        else (stats.ci_low_points, stats.ci_high_points)
    )
    case = ThresholdCase(
        delta=rates.delta,
        drop=drop,
        interval=(low, high, stats.confidence),
        tested=tested,
        undecided=auto is not None and auto.stop in ("budget", "settled"),
        to_decide=to_decide(moments, estimate, policy.threshold, (drop.bar, policy.alpha)),
        single_runs=estimate is None,
    )
    return threshold_findings(case, policy), drop, estimate


def decision(
    pairs: Sequence[tuple[CaseResult, CaseResult]],
    auto: AutoRecord | None,
    rates: PassRates,
    lists: CaseLists,
    changes: dict[str, CaseChange],
    sides: Sides,
    policy: Policy,
    level: float,
    *,
    baseline: bool,
    pairing: Sequence[Finding] = (),
) -> Decision:
    """The verdict and its findings (`pairing`'s, what pairing the reports found, after the
    rules'), the drop test and the power line. `level`: the drop test's; `baseline` False: the
    suite is new and the head is judged on its own."""
    rule, drop, estimate = _threshold_rule(auto, rates, policy, level)
    runs = sum(b.repeats + h.repeats for b, h in pairs) / (2 * len(pairs)) if pairs else 0.0
    power = resolution(
        estimate,
        rates.diffs,
        runs_per_case=runs,
        threshold=policy.threshold,
        level=level,
        design_points=policy.detect_points if auto is not None else None,
    )
    budgets = budget_findings(sides.base_usage, sides.head_usage, policy.budgets) if pairs else []
    verdict, findings = decide(
        sides.base, sides.head, rates.delta, rule, lists, changes, policy, budgets,
        baseline=baseline,
    )  # fmt: skip
    tested = drop_test_decides(auto, policy)
    stop = auto.stop if auto else None
    findings += [*pairing, *resolution_findings(power, policy, tested=tested, stop=stop)]
    return Decision(verdict, findings, drop, power)
