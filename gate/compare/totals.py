"""A side's totals over the paired cases: counts and rates, calls, tokens, cost and latency,
and the per-task table. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gate.compare.lists import CaseLists
from gate.compare.models import (
    SideTotals,
    SideUsage,
    TaskDelta,
)
from gate.report.models import (
    CaseResult,
    JudgeUsage,
    rate,
    total_judge,
)
from gate.report.summary import calls_of, percentile

Estimates = dict[str, tuple[float, float]]


def points(gained: int, lost: int, n: int) -> float | None:
    """Delta of pass rate in points, exact for integer counts (no float noise at the edge)."""
    return round(100.0 * (gained - lost) / n, 9) if n else None


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
    prompt = completion = calls = cached = 0
    cost: float | None = None
    judges: list[JudgeUsage | None] = []
    for result in results:
        judges.append(result.judge)
        for source in calls_of(result):
            calls += 1
            cached += int(source.cached)
            prompt += source.prompt_tokens
            completion += source.completion_tokens
            if source.cost_usd is not None:
                cost = (cost or 0.0) + source.cost_usd
            if source.latency_ms is not None:
                latencies.append(source.latency_ms)
    judge = total_judge(judges) or JudgeUsage()
    return SideUsage(
        calls=calls,
        cached_calls=cached,
        tokens_prompt=prompt,
        tokens_completion=completion,
        tokens_total=prompt + completion,
        cost_usd=round(cost, 8) if cost is not None else None,
        latency_p50_ms=percentile(latencies, 50),
        latency_p95_ms=percentile(latencies, 95),
        judge_calls=judge.calls,
        judge_tokens=judge.tokens.total,
        judge_cost_usd=judge.cost_usd,
        judge_cached=judge.cached,
    )


@dataclass
class _TaskCounts:
    """One task's paired cases and their outcomes, and its unpaired cases."""

    n: int = 0
    base_passed: int = 0
    head_passed: int = 0
    regressions: int = 0
    fixes: int = 0
    added: int = 0
    removed: int = 0
    base_fractions: float = 0.0  # the sums of the pass fractions, with repeats
    head_fractions: float = 0.0


def _task_counts(
    pairs: list[tuple[CaseResult, CaseResult]],
    added: list[CaseResult],
    removed: list[CaseResult],
    lists: CaseLists,
    estimates: Estimates | None,
) -> dict[str, _TaskCounts]:
    counts: dict[str, _TaskCounts] = {}
    regressed, fixed = set(lists.regressions), set(lists.fixes)
    for base, head in pairs:
        task = counts.setdefault(head.task, _TaskCounts())
        task.n += 1
        task.base_passed += int(base.passed)
        task.head_passed += int(head.passed)
        task.regressions += int(head.id in regressed)
        task.fixes += int(head.id in fixed)
        if estimates is not None:
            b, h = estimates[head.id]
            task.base_fractions += b
            task.head_fractions += h
    for result in added:
        counts.setdefault(result.task, _TaskCounts()).added += 1
    for result in removed:
        counts.setdefault(result.task, _TaskCounts()).removed += 1
    return counts


def _task_delta(task: str, counts: _TaskCounts, *, fractions: bool) -> TaskDelta:
    """With `fractions` (repeats) the rates are the mean pass fractions."""
    n = counts.n
    rates: tuple[float | None, float | None, float | None]
    if fractions and n:
        b, h = counts.base_fractions, counts.head_fractions
        rates = (100.0 * b / n, 100.0 * h / n, round(100.0 * (h - b) / n, 9))
    else:
        bp, hp = counts.base_passed, counts.head_passed
        rates = (rate(bp, n), rate(hp, n), points(hp, bp, n))
    return TaskDelta(
        task=task,
        n=n,
        base_passed=counts.base_passed,
        head_passed=counts.head_passed,
        regressions=counts.regressions,
        fixes=counts.fixes,
        added=counts.added,
        removed=counts.removed,
        base_pass_rate=rates[0],
        head_pass_rate=rates[1],
        delta_points=rates[2],
    )


def task_deltas(
    pairs: list[tuple[CaseResult, CaseResult]],
    added: list[CaseResult],
    removed: list[CaseResult],
    lists: CaseLists,
    estimates: Estimates | None = None,
) -> list[TaskDelta]:
    """Per task, over its paired cases; worst delta first. With `estimates` (repeats) the
    rates are the mean pass fractions, as for the whole suite."""
    counts = _task_counts(pairs, added, removed, lists, estimates)
    fractions = estimates is not None
    tasks = [_task_delta(task, c, fractions=fractions) for task, c in counts.items()]
    return sorted(tasks, key=lambda t: (t.delta_points is None, t.delta_points or 0.0, t.task))
