"""Pair the base and head reports of one suite by id over the head's suite: what changed.

Pure: reports in, a `Comparison` out. Cases only in base are `removed`, cases only in
head are `added`, and pass rates and their delta are over the paired cases.
"""

from __future__ import annotations

from gate.compare.budgets import budget_findings
from gate.compare.estimates import pair_fractions, plain_fraction, plan_of
from gate.compare.models import (
    EXCERPT_CHARS,
    CaseChange,
    Comparison,
    Finding,
)
from gate.compare.power import resolution
from gate.compare.rubric import compare_rubric
from gate.compare.stats import PairedCounts, paired_counts, significance
from gate.compare.totals import Estimates, points, task_deltas, totals, usage
from gate.compare.verdict import decide, resolution_findings
from gate.inputs.policy import SEVERITY_ORDER, Policy
from gate.report.models import (
    CaseResult,
    CheckResult,
    Report,
    RunMeta,
    rate,
)
from gate.report.output import readable_output

DETAIL_CHARS = 500
MAX_CHECKS = 20
CLEAR_CHANGE = 0.5  # with repeats: a regression's pass fraction fell by at least this much


def _excerpt(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _short_check(check: CheckResult) -> CheckResult:
    if len(check.detail) <= DETAIL_CHARS:
        return check
    return CheckResult(
        name=check.name, passed=check.passed, detail=check.detail[:DETAIL_CHARS], score=check.score
    )


def _rubric(result: CaseResult | None) -> list[CheckResult]:
    if result is None:
        return []
    return [_short_check(c) for c in result.checks if c.name.startswith("rubric:")][:MAX_CHECKS]


def _base_details(base: CaseResult | None) -> dict:
    """The base's side of a case, to set against the head's."""
    if base is None:
        return {}
    shown = readable_output(base.output, base.tool_calls)
    return {
        "base_output": _excerpt(shown, EXCERPT_CHARS),
        "base_output_chars": len(shown or ""),
        "base_failed_checks": [_short_check(c) for c in base.failed_checks[:MAX_CHECKS]],
        "base_rubric": _rubric(base),
    }


def _details(source: CaseResult, base: CaseResult | None, head: CaseResult | None) -> dict:
    """What a reader needs to see why a case fails; never kept for held-out cases."""
    shown = readable_output(source.output, source.tool_calls)
    return {
        **_base_details(base),
        "head_rubric": _rubric(head),
        "failed_checks": [_short_check(c) for c in source.failed_checks[:MAX_CHECKS]],
        "review_checks": [_short_check(c) for c in source.checks if c.passed is None][:MAX_CHECKS],
        "output": _excerpt(shown, EXCERPT_CHARS),
        "output_chars": len(shown or ""),
        "error": _excerpt(head.error if head else None, DETAIL_CHARS),
        "base_error": _excerpt(base.error if base else None, DETAIL_CHARS),
        "file": source.file,
        "line": source.line,
    }


def case_change(
    base: CaseResult | None,
    head: CaseResult | None,
    policy: Policy,
    estimate: tuple[float, float] | None = None,
) -> CaseChange:
    """What the comparison keeps of one case; held-out cases lose everything but outcomes.
    `estimate`: the two sides' pass fractions when they are not the plain ones (repeats: auto)."""
    source = head if head is not None else base
    assert source is not None
    heldout = source.heldout or bool(base and base.heldout)
    base_fraction = plain_fraction(base) if base else None
    head_fraction = plain_fraction(head) if head else None
    if estimate is not None:
        base_fraction, head_fraction = estimate
    return CaseChange(
        id=source.id,
        task=source.task,
        severity=source.severity,
        heldout=heldout,
        blocking=source.severity in policy.block_severities,
        base=base.status if base else None,
        head=head.status if head else None,
        base_fraction=base_fraction,
        head_fraction=head_fraction,
        base_repeats=base.repeats if base else 0,
        head_repeats=head.repeats if head else 0,
        base_passes=sum(base.run_passes()) if base else None,
        head_passes=sum(head.run_passes()) if head else None,
        base_flaky=bool(base and base.flaky),
        head_flaky=bool(head and head.flaky),
        index=source.index,
        **({} if heldout else _details(source, base, head)),
    )


def _order(change: CaseChange) -> tuple[int, int, int]:
    """Blocking cases first, then by severity, then in suite order."""
    return (not change.blocking, SEVERITY_ORDER.get(change.severity, 9), change.index)


class _Lists:
    """The id lists of a comparison, filled case by case."""

    def __init__(self, repeated: bool = False) -> None:
        self.repeated = repeated
        self.by_name: dict[str, list[CaseChange]] = {
            name: []
            for name in (
                "regressions",
                "new_errors",
                "fixes",
                "still_failing",
                "added",
                "removed",
                "blocker_failures",
                "new_blocker_failures",
                "errors",
                "base_errors",
                "needs_review",
                "flaky",
            )
        }

    def add(self, change: CaseChange) -> None:
        lists = self.by_name
        base, head = change.base, change.head
        if head is None:
            lists["removed"].append(change)
        elif base is None:
            lists["added"].append(change)
        elif self.repeated and "error" not in (base, head):
            self._by_fraction(change)
        elif base == "pass" and head == "fail":
            lists["regressions"].append(change)
        elif base == "pass" and head == "error":
            lists["new_errors"].append(change)
        elif base != "pass" and head == "pass":
            lists["fixes"].append(change)
        elif base != "pass" and head == "fail":
            lists["still_failing"].append(change)
        if head == "error":
            lists["errors"].append(change)
        if base == "error":
            lists["base_errors"].append(change)
        if head == "needs_review":
            lists["needs_review"].append(change)
        if change.flaky:
            lists["flaky"].append(change)
        if change.blocking and head in ("fail", "needs_review"):
            lists["blocker_failures"].append(change)
            if base not in ("fail", "needs_review"):
                lists["new_blocker_failures"].append(change)

    def _by_fraction(self, change: CaseChange) -> None:
        """With repeats: a regression (fix) is a case whose pass fraction fell (rose) by at
        least `CLEAR_CHANGE`, e.g. 2/3 -> 0/3; a smaller move of a flaky case is noise."""
        assert change.base_fraction is not None and change.head_fraction is not None
        moved = change.head_fraction - change.base_fraction
        if moved <= -CLEAR_CHANGE + 1e-9:
            self.by_name["regressions"].append(change)
        elif moved >= CLEAR_CHANGE - 1e-9:
            self.by_name["fixes"].append(change)
        elif change.head == "fail" and change.base != "pass":
            self.by_name["still_failing"].append(change)

    def ids(self) -> dict[str, list[str]]:
        return {
            name: [c.id for c in sorted(items, key=_order)] for name, items in self.by_name.items()
        }

    def cases(self) -> dict[str, CaseChange]:
        return {c.id: c for items in self.by_name.values() for c in items}


def _report_findings(base: Report, head: Report, added: int, removed: int) -> list[Finding]:
    found = []
    if base.meta.suite and head.meta.suite and base.meta.suite != head.meta.suite:
        found.append(
            Finding(kind="other_suite", outcome="note", names=[base.meta.suite, head.meta.suite])
        )
    if added or removed:
        found.append(Finding(kind="unpaired", outcome="note", count=added, n=removed))
    return found


def compare(base: Report | None, head: Report, policy: Policy) -> Comparison:
    """Pair the head's cases with the base's by id and decide the verdict. `base` None: the
    suite is new, there is no baseline, and the head is judged on its own (its blocking cases
    and errors); otherwise a comparison that paired no case is an error, never a pass."""
    baseline = base is not None
    if base is None:
        base = Report(meta=RunMeta(label="base", suite=head.meta.suite), results=[], path=head.path)
    base_by_id = {r.id: r for r in base.results}
    head_ids = {r.id for r in head.results}
    pairs = [(base_by_id[r.id], r) for r in head.results if r.id in base_by_id]
    added = [r for r in head.results if r.id not in base_by_id]
    removed = [r for r in base.results if r.id not in head_ids]

    plan = plan_of(head.meta.auto) or plan_of(base.meta.auto)
    repeated = plan is not None or any(r.repeats > 1 for b, h in pairs for r in (b, h))
    estimates: Estimates | None = (
        {h.id: pair_fractions(plan, b, h) for b, h in pairs} if repeated else None
    )
    collected = _Lists(repeated)
    for b, h in pairs:
        if not (b.passed and h.passed) or b.flaky or h.flaky:  # unchanged passes: counted only
            collected.add(case_change(b, h, policy, estimates[h.id] if estimates else None))
    for r in added:
        collected.add(case_change(None, r, policy))
    for r in removed:
        collected.add(case_change(r, None, policy))
    lists = collected.ids()
    changes = collected.cases()

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
    runs = sum(b.repeats + h.repeats for b, h in pairs) / (2 * len(pairs)) if pairs else 0.0
    power = resolution(diffs, policy.alpha, runs)
    base_totals = totals(base.results, base.meta.repeats)
    head_totals = totals(head.results, head.meta.repeats)
    base_usage, head_usage = usage(b for b, _ in pairs), usage(h for _, h in pairs)
    budgets = budget_findings(base_usage, head_usage, policy.budgets) if pairs else []
    verdict, findings = decide(
        base_totals, head_totals, delta, stats, lists, changes, policy, budgets, baseline=baseline
    )
    if baseline:
        findings += _report_findings(base, head, len(added), len(removed))
    return Comparison(
        verdict=verdict,
        findings=findings + resolution_findings(power, policy),
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
        tasks=task_deltas(pairs, added, removed, lists, estimates),
        base=base_totals,
        head=head_totals,
        base_usage=base_usage,
        head_usage=head_usage,
        cases=changes,
        base_meta=base.meta if baseline else None,
        head_meta=head.meta,
        rubric=compare_rubric(pairs),
        **lists,
    )
