"""Pair the base and head reports of one suite by id over the head's suite: what changed.

Pure: reports in, a `Comparison` out. Cases only in base are `removed`, cases only in
head are `added`, and pass rates and their delta are over the paired cases. A paired case
marked `added` (one the PR adds, asked of both sides) is kept apart, `added_by_pr`: it is in
no rate, delta, test or budget, and only its blocking failures and errors count, so an added
case can make the verdict stricter and never offset a drop.
"""

from __future__ import annotations

from typing import Any

from gate.compare.budgets import budget_findings
from gate.compare.droptest import DropTest, fixed_test, interval, sequential_test, to_decide
from gate.compare.estimates import (
    DeltaEstimate,
    Moments,
    delta_estimate,
    pair_moments,
    plain_fraction,
)
from gate.compare.findings import Finding, OtherSuite, Unpaired
from gate.compare.lists import sort_into_lists
from gate.compare.metrics import metric_rates
from gate.compare.models import EXCERPT_CHARS, CaseChange, Comparison, SideCase
from gate.compare.paths import path_changed, path_details
from gate.compare.power import resolution
from gate.compare.rubric import compare_rubric
from gate.compare.stats import PairedCounts, Significance, paired_counts, significance
from gate.compare.totals import Estimates, points, task_deltas, totals, usage
from gate.compare.verdict import ThresholdCase, decide, resolution_findings, threshold_findings
from gate.inputs.policy import Policy
from gate.report.models import (
    CaseResult,
    CheckResult,
    Report,
    RunMeta,
    rate,
)
from gate.report.output import readable_output
from gate.report.plan import AutoRecord

DETAIL_CHARS = 500
MAX_CHECKS = 20


def _excerpt(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _short_check(check: CheckResult) -> CheckResult:
    if len(check.detail) <= DETAIL_CHARS:
        return check
    return CheckResult(
        name=check.name, passed=check.passed, detail=check.detail[:DETAIL_CHARS], score=check.score
    )


def _rubric(result: CaseResult) -> list[CheckResult]:
    return [_short_check(c) for c in result.checks if c.name.startswith("rubric:")][:MAX_CHECKS]


def _details(result: CaseResult) -> dict[str, Any]:
    """What a reader needs to see why a side failed; never kept for held-out cases."""
    shown = readable_output(result.output, result.tool_calls)
    return {
        "output": _excerpt(shown, EXCERPT_CHARS),
        "output_chars": len(shown or ""),
        "failed_checks": [_short_check(c) for c in result.failed_checks[:MAX_CHECKS]],
        "review_checks": [_short_check(c) for c in result.checks if c.passed is None][:MAX_CHECKS],
        "rubric": _rubric(result),
        "error": _excerpt(result.error, DETAIL_CHARS),
        **path_details(result),
    }


def _side(result: CaseResult, fraction: float, *, heldout: bool) -> SideCase:
    return SideCase(
        status=result.status,
        fraction=fraction,
        repeats=result.repeats,
        passes=sum(result.run_passes()),
        flaky=result.flaky,
        **({} if heldout else _details(result)),
    )


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


def _report_findings(base: Report, head: Report, added: int, removed: int) -> list[Finding]:
    found: list[Finding] = []
    if base.meta.suite and head.meta.suite and base.meta.suite != head.meta.suite:
        found.append(OtherSuite(base_suite=base.meta.suite, head_suite=head.meta.suite))
    if added or removed:
        found.append(Unpaired(added=added, removed=removed))
    return found


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
    auto: AutoRecord | None,
    moments: list[tuple[Moments, Moments]] | None,
    table: PairedCounts,
    delta: float | None,
    stats: Significance,
    policy: Policy,
    level: float,
) -> tuple[list[Finding], DropTest | None, DeltaEstimate | None]:
    """The threshold rule's findings, the drop test and the estimate it tested."""
    estimate = delta_estimate(moments) if moments else None
    if delta is None:
        return [], None, estimate
    tested = drop_test_decides(auto, policy)
    drop = _drop_test(auto, estimate, table, policy.threshold, level)
    if not tested:
        drop = drop.model_copy(update={"decides": False})
    low, high = (
        interval(estimate, stats.confidence)
        if estimate is not None
        else (stats.ci_low_points, stats.ci_high_points)
    )
    case = ThresholdCase(
        delta=delta,
        drop=drop,
        interval=(low, high, stats.confidence),
        tested=tested,
        undecided=auto is not None and auto.stop in ("budget", "settled"),
        to_decide=to_decide(moments, estimate, policy.threshold, (drop.bar, policy.alpha)),
        single_runs=estimate is None,
    )
    return threshold_findings(case, policy), drop, estimate


def compare(
    base: Report | None, head: Report, policy: Policy, level: float | None = None
) -> Comparison:
    """Pair the head's cases with the base's by id and decide the verdict. `base` None: the
    suite is new, there is no baseline, and the head is judged on its own (its blocking cases
    and errors); otherwise a comparison that paired no case is an error, never a pass.
    `level`: the drop test's (the suite's share of the PR's false-block rate; default: the
    share `repeats: auto` recorded, else the whole `false_block_rate`)."""
    baseline = base is not None
    if base is None:
        base = Report(meta=RunMeta(label="base", suite=head.meta.suite), results=[], path=head.path)
    base_by_id = {r.id: r for r in base.results}
    head_ids = {r.id for r in head.results}
    both = [(base_by_id[r.id], r) for r in head.results if r.id in base_by_id]
    pairs = [(b, h) for b, h in both if not h.added]
    by_pr = [(b, h) for b, h in both if h.added]
    added = [r for r in head.results if r.id not in base_by_id]
    removed = [r for r in base.results if r.id not in head_ids]

    auto = head.meta.auto or base.meta.auto  # None: the repeats were fixed
    if level is None:
        level = auto.level if auto and auto.level else policy.false_block_rate
    repeated = auto is not None or any(r.repeats > 1 for b, h in pairs for r in (b, h))
    moments = [pair_moments(auto, b, h) for b, h in pairs] if repeated else None
    estimates: Estimates | None = (
        {h.id: (mb.mean, mh.mean) for (_, h), (mb, mh) in zip(pairs, moments, strict=True)}
        if moments is not None
        else None
    )
    changed = [
        case_change(b, h, policy, estimates[h.id] if estimates else None)
        for b, h in pairs
        if not (b.passed and h.passed) or b.flaky or h.flaky or path_changed(b, h)
    ]  # unchanged passes: counted only
    changed += [case_change(b, h, policy, added_by_pr=True) for b, h in by_pr]
    changed += [case_change(None, r, policy) for r in added]
    changed += [case_change(r, None, policy) for r in removed]
    lists, changes = sort_into_lists(changed, repeated=repeated)

    table: PairedCounts = paired_counts([(b.passed, h.passed) for b, h in pairs])
    fractions = list(estimates.values()) if estimates is not None else None
    stats = significance(table, policy.alpha, fractions)
    if fractions:  # the mean of the per-case pass fractions: unbiased, where majorities are not
        n = len(fractions)
        base_rate: float | None = 100.0 * sum(b for b, _ in fractions) / n
        head_rate: float | None = 100.0 * sum(h for _, h in fractions) / n
        delta: float | None = round(100.0 * sum(h - b for b, h in fractions) / n, 9)
    else:
        base_rate, head_rate = rate(table.base_passed, table.n), rate(table.head_passed, table.n)
        delta = points(table.head_passed, table.base_passed, table.n)
    diffs = (
        [h - b for b, h in fractions]
        if fractions
        else [float(h.passed) - float(b.passed) for b, h in pairs]
    )
    rule, drop, estimate = _threshold_rule(auto, moments, table, delta, stats, policy, level)
    runs = sum(b.repeats + h.repeats for b, h in pairs) / (2 * len(pairs)) if pairs else 0.0
    power = resolution(
        estimate,
        diffs,
        runs_per_case=runs,
        threshold=policy.threshold,
        level=level,
        design_points=policy.detect_points if auto is not None else None,
    )
    base_totals = totals(base.results, base.meta.repeats)
    head_totals = totals(head.results, head.meta.repeats)
    base_usage, head_usage = usage(b for b, _ in pairs), usage(h for _, h in pairs)
    budgets = budget_findings(base_usage, head_usage, policy.budgets) if pairs else []
    verdict, findings = decide(
        base_totals, head_totals, delta, rule, lists, changes, policy, budgets, baseline=baseline
    )
    if baseline:
        findings += _report_findings(base, head, len(added), len(removed))
    return Comparison(
        verdict=verdict,
        findings=findings
        + resolution_findings(
            power,
            policy,
            tested=drop_test_decides(auto, policy),
            stop=auto.stop if auto else None,
        ),
        suite=head.meta.suite or base.meta.suite or "default",
        policy=policy,
        base_pass_rate=base_rate,
        head_pass_rate=head_rate,
        delta_points=delta,
        paired=table.n,
        p_value=stats.p_value,
        ci_low_points=stats.ci_low_points,
        ci_high_points=stats.ci_high_points,
        significant=stats.significant,
        statistics=stats,
        power=power,
        drop_test=drop,
        tasks=task_deltas(pairs, [*added, *(h for _, h in by_pr)], removed, lists, estimates),
        metrics=metric_rates(pairs),
        base=base_totals,
        head=head_totals,
        base_usage=base_usage,
        head_usage=head_usage,
        cases=changes,
        base_meta=base.meta if baseline else None,
        head_meta=head.meta,
        rubric=compare_rubric(pairs),
        **lists.as_fields(),
    )
