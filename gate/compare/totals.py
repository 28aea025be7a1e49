"""A side's totals over the paired cases: counts and rates, calls, tokens, cost and latency,
and the per-task table. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable

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


def task_deltas(
    pairs: list[tuple[CaseResult, CaseResult]],
    added: list[CaseResult],
    removed: list[CaseResult],
    lists: CaseLists,
    estimates: Estimates | None = None,
) -> list[TaskDelta]:
    """Per task, over its paired cases; worst delta first. With `estimates` (repeats) the
    rates are the mean pass fractions, as for the whole suite."""
    stats: dict[str, list[int]] = {}
    sums: dict[str, list[float]] = {}
    regressed, fixed = set(lists.regressions), set(lists.fixes)
    for base, head in pairs:
        row = stats.setdefault(head.task, [0] * 7)
        row[0] += 1
        row[1] += int(base.passed)
        row[2] += int(head.passed)
        row[3] += int(head.id in regressed)
        row[4] += int(head.id in fixed)
        if estimates is not None:
            b, h = estimates[head.id]
            total = sums.setdefault(head.task, [0.0, 0.0])
            total[0] += b
            total[1] += h
    for result in added:
        stats.setdefault(result.task, [0] * 7)[5] += 1
    for result in removed:
        stats.setdefault(result.task, [0] * 7)[6] += 1

    def rates(task: str, n: int, bp: int, hp: int) -> dict[str, float | None]:
        if estimates is None or not n:
            return {
                "base_pass_rate": rate(bp, n),
                "head_pass_rate": rate(hp, n),
                "delta_points": points(hp, bp, n),
            }
        b, h = sums[task]
        return {
            "base_pass_rate": 100.0 * b / n,
            "head_pass_rate": 100.0 * h / n,
            "delta_points": round(100.0 * (h - b) / n, 9),
        }

    tasks = [
        TaskDelta(
            task=task,
            n=n,
            base_passed=bp,
            head_passed=hp,
            regressions=reg,
            fixes=fix,
            added=add,
            removed=rem,
            **rates(task, n, bp, hp),
        )
        for task, (n, bp, hp, reg, fix, add, rem) in stats.items()
    ]
    return sorted(tasks, key=lambda t: (t.delta_points is None, t.delta_points or 0.0, t.task))
