"""Compare the base and head reports of one suite: what changed, and the verdict.

Pure: reports in, a `Comparison` out (it is also the `json` format, so its keys are stable).
Cases are paired by id over the head's suite; cases only in base are `removed`, cases only in
head are `added`, and pass rates and their delta are over the paired cases.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, Field

from gate.checks.base import CheckResult
from gate.config import GateConfig
from gate.report import (
    CaseResult,
    JudgeUsage,
    Report,
    RunMeta,
    Status,
    calls_of,
    percentile,
    total_judge,
)
from gate.stats import PairedCounts, Significance, paired_counts, significance

Verdict = Literal["pass", "fail", "error", "skipped"]
EXIT_CODES: dict[str, int] = {"pass": 0, "skipped": 0, "fail": 1, "error": 3}

EXCERPT_CHARS = 2000
DETAIL_CHARS = 500
MAX_CHECKS = 20
SEVERITY_ORDER = {"blocker": 0, "major": 1, "minor": 2}


class Policy(BaseModel):
    """The rules that turn a comparison into a verdict (from gate.yml and the command line)."""

    threshold: float = Field(3.0, ge=0, description="points of pass rate a PR may lose")
    block_severities: list[str] = Field(default_factory=lambda: ["blocker"])
    require_significance: bool = Field(
        False, description="the threshold rule blocks only if the drop is also significant"
    )
    alpha: float = Field(0.05, gt=0, lt=1)
    max_error_rate: float = Field(
        5.0, ge=0, le=100, description="percent of errors per side above which the verdict is error"
    )

    @classmethod
    def from_config(
        cls,
        config: GateConfig,
        *,
        threshold: float | None = None,
        block_severities: list[str] | None = None,
    ) -> Policy:
        return cls(
            threshold=config.threshold if threshold is None else threshold,
            block_severities=list(
                config.block_severities if block_severities is None else block_severities
            ),
            require_significance=config.require_significance,
            alpha=config.alpha,
            max_error_rate=config.max_error_rate,
        )


class CaseChange(BaseModel):
    """One case on both sides. Held-out cases carry only id, task, severity and outcomes."""

    id: str
    task: str
    severity: str
    heldout: bool = False
    blocking: bool = False
    base: Status | None = Field(None, description="None: the case is not in the base report")
    head: Status | None = Field(None, description="None: the case is not in the head report")
    base_fraction: float | None = Field(None, description="pass fraction over the repeats")
    head_fraction: float | None = None
    base_repeats: int = 0
    head_repeats: int = 0
    base_flaky: bool = False
    head_flaky: bool = False
    failed_checks: list[CheckResult] = Field(default_factory=list)
    review_checks: list[CheckResult] = Field(default_factory=list)
    output: str | None = Field(None, description=f"first {EXCERPT_CHARS} characters")
    output_chars: int = 0
    error: str | None = None
    base_error: str | None = None
    file: str = ""
    line: int = 0
    index: int = 0

    @property
    def flaky(self) -> bool:
        return self.base_flaky or self.head_flaky


class TaskDelta(BaseModel):
    task: str
    n: int = Field(description="paired cases of this task")
    base_passed: int
    head_passed: int
    base_pass_rate: float | None
    head_pass_rate: float | None
    delta_points: float | None
    regressions: int = 0
    fixes: int = 0
    added: int = 0
    removed: int = 0


class SideUsage(BaseModel):
    """Tokens, cost and latency of one side over the paired cases (every repeat counted)."""

    calls: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    tokens_total: int = 0
    cost_usd: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    judge_calls: int = 0  # what grading cost, apart from the system's own tokens and cost
    judge_tokens: int = 0
    judge_cost_usd: float | None = None


class SideTotals(BaseModel):
    """A whole report, paired or not."""

    n: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    needs_review: int = 0
    pass_rate: float | None = None
    error_rate: float | None = None
    repeats: int = 1


class Comparison(BaseModel):
    """The result of `gate compare`, and its `json` format."""

    verdict: Verdict
    reasons: list[str] = Field(default_factory=list, description="why this verdict")
    notes: list[str] = Field(default_factory=list, description="worth knowing, not decisive")
    suite: str = "default"
    policy: Policy = Field(default_factory=Policy)
    base_pass_rate: float | None = None
    head_pass_rate: float | None = None
    delta_points: float | None = None
    paired: int = 0
    regressions: list[str] = Field(default_factory=list, description="pass -> fail")
    new_errors: list[str] = Field(default_factory=list, description="pass -> error")
    fixes: list[str] = Field(default_factory=list, description="not passing -> pass")
    still_failing: list[str] = Field(default_factory=list, description="not passing -> fail")
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    blocker_failures: list[str] = Field(
        default_factory=list, description="blocking-severity cases not passing on head"
    )
    new_blocker_failures: list[str] = Field(
        default_factory=list, description="the blocker failures that passed on base or are new"
    )
    errors: list[str] = Field(default_factory=list, description="error on head")
    base_errors: list[str] = Field(default_factory=list, description="error on base")
    needs_review: list[str] = Field(default_factory=list, description="needs_review on head")
    flaky: list[str] = Field(default_factory=list, description="outcome varies across repeats")
    p_value: float | None = Field(None, description="exact McNemar p-value")
    ci_low_points: float | None = None
    ci_high_points: float | None = None
    significant: bool = False
    statistics: Significance | None = None
    tasks: list[TaskDelta] = Field(default_factory=list)
    base: SideTotals = Field(default_factory=SideTotals)
    head: SideTotals = Field(default_factory=SideTotals)
    base_usage: SideUsage = Field(default_factory=SideUsage)
    head_usage: SideUsage = Field(default_factory=SideUsage)
    cases: dict[str, CaseChange] = Field(
        default_factory=dict, description="every case named in a list above, by id"
    )
    base_meta: RunMeta | None = None
    head_meta: RunMeta | None = None

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def case_list(self, ids: Iterable[str]) -> list[CaseChange]:
        return [self.cases[i] for i in ids]


def skipped_comparison(reason: str, *, suite: str = "default") -> Comparison:
    """No watched file changed: nothing was run, nothing blocks."""
    return Comparison(verdict="skipped", reasons=[reason], suite=suite)


def rate(passed: int, n: int) -> float | None:
    return 100.0 * passed / n if n else None


def points(gained: int, lost: int, n: int) -> float | None:
    """Delta of pass rate in points, exact for integer counts (no float noise at the edge)."""
    return round(100.0 * (gained - lost) / n, 9) if n else None


def fraction(result: CaseResult) -> float:
    return result.pass_fraction if result.repeats > 1 else float(result.passed)


def _excerpt(text: str | None, limit: int) -> str | None:
    return text if text is None or len(text) <= limit else text[:limit]


def _short_check(check: CheckResult) -> CheckResult:
    if len(check.detail) <= DETAIL_CHARS:
        return check
    return CheckResult(
        name=check.name, passed=check.passed, detail=check.detail[:DETAIL_CHARS], score=check.score
    )


def _details(source: CaseResult, base: CaseResult | None, head: CaseResult | None) -> dict:
    """What a reader needs to see why a case fails; never kept for held-out cases."""
    return {
        "failed_checks": [_short_check(c) for c in source.failed_checks[:MAX_CHECKS]],
        "review_checks": [_short_check(c) for c in source.checks if c.passed is None][:MAX_CHECKS],
        "output": _excerpt(source.output, EXCERPT_CHARS),
        "output_chars": len(source.output or ""),
        "error": _excerpt(head.error if head else None, DETAIL_CHARS),
        "base_error": _excerpt(base.error if base else None, DETAIL_CHARS),
        "file": source.file,
        "line": source.line,
    }


def case_change(base: CaseResult | None, head: CaseResult | None, policy: Policy) -> CaseChange:
    """What the comparison keeps of one case; held-out cases lose everything but outcomes."""
    source = head if head is not None else base
    assert source is not None
    heldout = source.heldout or bool(base and base.heldout)
    return CaseChange(
        id=source.id,
        task=source.task,
        severity=source.severity,
        heldout=heldout,
        blocking=source.severity in policy.block_severities,
        base=base.status if base else None,
        head=head.status if head else None,
        base_fraction=fraction(base) if base else None,
        head_fraction=fraction(head) if head else None,
        base_repeats=base.repeats if base else 0,
        head_repeats=head.repeats if head else 0,
        base_flaky=bool(base and base.flaky),
        head_flaky=bool(head and head.flaky),
        index=source.index,
        **({} if heldout else _details(source, base, head)),
    )


def totals(results: list[CaseResult], repeats: int) -> SideTotals:
    n = len(results)
    count = {s: 0 for s in ("pass", "fail", "error", "needs_review")}
    for result in results:
        count[result.status] += 1
    return SideTotals(
        n=n,
        passed=count["pass"],
        failed=count["fail"],
        errors=count["error"],
        needs_review=count["needs_review"],
        pass_rate=rate(count["pass"], n),
        error_rate=rate(count["error"], n),
        repeats=repeats,
    )


def usage(results: Iterable[CaseResult]) -> SideUsage:
    """Every call counts: with repeats, each attempt's tokens, cost and latency."""
    latencies: list[float] = []
    prompt = completion = calls = 0
    cost: float | None = None
    judges: list[JudgeUsage | None] = []
    for result in results:
        judges.append(result.judge)
        for source in calls_of(result):
            calls += 1
            prompt += source.prompt_tokens
            completion += source.completion_tokens
            if source.cost_usd is not None:
                cost = (cost or 0.0) + source.cost_usd
            if source.latency_ms is not None:
                latencies.append(source.latency_ms)
    return SideUsage(
        calls=calls,
        tokens_prompt=prompt,
        tokens_completion=completion,
        tokens_total=prompt + completion,
        cost_usd=round(cost, 8) if cost is not None else None,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        **_judge_usage(total_judge(judges)),
    )


def _judge_usage(judge: JudgeUsage | None) -> dict[str, Any]:
    if judge is None:
        return {}
    return {
        "judge_calls": judge.calls,
        "judge_tokens": judge.tokens.total,
        "judge_cost_usd": judge.cost_usd,
    }


def task_deltas(
    pairs: list[tuple[CaseResult, CaseResult]], added: list[CaseResult], removed: list[CaseResult]
) -> list[TaskDelta]:
    """Per task, over its paired cases; worst delta first."""
    stats: dict[str, list[int]] = {}
    for base, head in pairs:
        row = stats.setdefault(head.task, [0] * 7)
        row[0] += 1
        row[1] += int(base.passed)
        row[2] += int(head.passed)
        row[3] += int(base.passed and head.status == "fail")
        row[4] += int(head.passed and not base.passed)
    for result in added:
        stats.setdefault(result.task, [0] * 7)[5] += 1
    for result in removed:
        stats.setdefault(result.task, [0] * 7)[6] += 1
    tasks = [
        TaskDelta(
            task=task,
            n=n,
            base_passed=bp,
            head_passed=hp,
            base_pass_rate=rate(bp, n),
            head_pass_rate=rate(hp, n),
            delta_points=points(hp, bp, n),
            regressions=reg,
            fixes=fix,
            added=add,
            removed=rem,
        )
        for task, (n, bp, hp, reg, fix, add, rem) in stats.items()
    ]
    return sorted(tasks, key=lambda t: (t.delta_points is None, t.delta_points or 0.0, t.task))


def _order(change: CaseChange) -> tuple[int, int, int]:
    """Blocking cases first, then by severity, then in suite order."""
    return (not change.blocking, SEVERITY_ORDER.get(change.severity, 9), change.index)


class _Lists:
    """The id lists of a comparison, filled case by case."""

    def __init__(self) -> None:
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

    def ids(self) -> dict[str, list[str]]:
        return {
            name: [c.id for c in sorted(items, key=_order)] for name, items in self.by_name.items()
        }

    def cases(self) -> dict[str, CaseChange]:
        return {c.id: c for items in self.by_name.values() for c in items}


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


def _notes(base: Report, head: Report, added: int, removed: int) -> list[str]:
    notes = []
    if base.meta.suite and head.meta.suite and base.meta.suite != head.meta.suite:
        notes.append(
            f"the base report is of suite {base.meta.suite!r}, the head's of {head.meta.suite!r}"
        )
    if added or removed:
        notes.append(
            f"{added} added and {removed} removed cases are not in the pass-rate delta, "
            "which is over the cases both sides ran"
        )
    return notes


def compare(base: Report, head: Report, policy: Policy) -> Comparison:
    """Pair the head's cases with the base's by id and decide the verdict."""
    base_by_id = {r.id: r for r in base.results}
    head_ids = {r.id for r in head.results}
    pairs = [(base_by_id[r.id], r) for r in head.results if r.id in base_by_id]
    added = [r for r in head.results if r.id not in base_by_id]
    removed = [r for r in base.results if r.id not in head_ids]

    collected = _Lists()
    for b, h in pairs:
        if not (b.passed and h.passed) or b.flaky or h.flaky:  # unchanged passes: counted only
            collected.add(case_change(b, h, policy))
    for r in added:
        collected.add(case_change(None, r, policy))
    for r in removed:
        collected.add(case_change(r, None, policy))
    lists = collected.ids()
    changes = collected.cases()

    table: PairedCounts = paired_counts([(b.passed, h.passed) for b, h in pairs])
    repeated = any(r.repeats > 1 for b, h in pairs for r in (b, h))
    fractions = [(fraction(b), fraction(h)) for b, h in pairs] if repeated else None
    stats = significance(table, policy.alpha, fractions)
    delta = points(table.head_passed, table.base_passed, table.n)
    base_totals = totals(base.results, base.meta.repeats)
    head_totals = totals(head.results, head.meta.repeats)
    verdict, reasons, notes = decide(base_totals, head_totals, delta, stats, lists, changes, policy)
    return Comparison(
        verdict=verdict,
        reasons=reasons,
        notes=notes + _notes(base, head, len(added), len(removed)),
        suite=head.meta.suite or base.meta.suite or "default",
        policy=policy,
        base_pass_rate=rate(table.base_passed, table.n),
        head_pass_rate=rate(table.head_passed, table.n),
        delta_points=delta,
        paired=table.n,
        p_value=stats.p_value,
        ci_low_points=stats.ci_low_points,
        ci_high_points=stats.ci_high_points,
        significant=stats.significant,
        statistics=stats,
        tasks=task_deltas(pairs, added, removed),
        base=base_totals,
        head=head_totals,
        base_usage=usage(b for b, _ in pairs),
        head_usage=usage(h for _, h in pairs),
        cases=changes,
        base_meta=base.meta,
        head_meta=head.meta,
        **lists,
    )
