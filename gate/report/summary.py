"""A run's totals: pass rate overall and by task, latency percentiles, tokens, cost."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gate.report.models import (
    Call,
    CaseResult,
    JudgeUsage,
    RunMeta,
    Summary,
    TaskSummary,
    rate,
    total_judge,
)


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    value = ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
    return round(value, 3)


def _shown(value: float | None) -> float | None:
    """A summary's rates are rounded to 0.01 points; the comparison keeps them exact."""
    return None if value is None else round(value, 2)


def case_fraction(result: CaseResult) -> float:
    """The share of a case's runs that passed (one run: 1 or 0). A side's pass rate is the mean
    of these, as the comparison's is: with repeats, a case at 2 of 3 runs counts 0.67."""
    return result.pass_fraction if result.repeats > 1 else float(result.passed)


def calls_of(result: CaseResult) -> Sequence[Call]:
    """Every call of the system for a case: its attempts with repeats, else the case itself."""
    if result.folded_calls is not None:
        return result.folded_calls
    return [Call.of(a) for a in result.attempts] if result.attempts else [Call.of(result)]


@dataclass
class SummaryBuilder:
    """Accumulates totals case by case so no run has to keep its results in memory."""

    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("pass", "fail", "error", "needs_review"), 0)
    )
    tasks: dict[str, list[float]] = field(default_factory=dict)  # [cases, passed, fractions]
    latencies: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    hits: int = 0
    misses: int = 0
    judge: JudgeUsage | None = None
    flaky: int = 0

    def add(self, result: CaseResult) -> None:
        self.counts[result.status] += 1
        task = self.tasks.setdefault(result.task, [0, 0, 0.0])
        task[0] += 1
        task[1] += int(result.passed)
        task[2] += case_fraction(result)
        for source in calls_of(result):
            if source.latency_ms is not None:
                self.latencies.append(source.latency_ms)
            self.prompt_tokens += source.prompt_tokens
            self.completion_tokens += source.completion_tokens
            if source.cost_usd is not None:
                self.cost = (self.cost or 0.0) + source.cost_usd
            self.hits += int(source.cached)
            self.misses += int(not source.cached)
        self.judge = total_judge([self.judge, result.judge])
        self.flaky += int(result.flaky)

    def build(
        self,
        meta: RunMeta,
        duration_s: float | None = None,
        http: dict[str, dict[str, int]] | None = None,
    ) -> Summary:
        n = sum(self.counts.values())
        fractions = sum(t[2] for t in self.tasks.values())
        return Summary(
            n=n,
            passed=self.counts["pass"],
            failed=self.counts["fail"],
            errors=self.counts["error"],
            needs_review=self.counts["needs_review"],
            pass_rate=_shown(rate(fractions, n)),
            by_task={
                name: TaskSummary(
                    n=int(t[0]), passed=int(t[1]), pass_rate=_shown(rate(t[2], int(t[0])))
                )
                for name, t in sorted(self.tasks.items())
            },
            latency_p50_ms=percentile(self.latencies, 50),
            latency_p95_ms=percentile(self.latencies, 95),
            tokens={
                "prompt": self.prompt_tokens,
                "completion": self.completion_tokens,
                "total": self.prompt_tokens + self.completion_tokens,
            },
            cost_usd=round(self.cost, 6) if self.cost is not None else None,
            cache={"hits": self.hits, "misses": self.misses},
            judge=self.judge,
            http=http or {},
            flaky=self.flaky,
            duration_s=round(duration_s, 3) if duration_s is not None else None,
            meta=meta,
        )


def summarise(meta: RunMeta, results: Iterable[CaseResult]) -> Summary:
    builder = SummaryBuilder()
    for result in results:
        builder.add(result)
    return builder.build(meta)
