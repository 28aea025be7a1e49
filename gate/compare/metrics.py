"""The checks' `metric` names compared: per metric, the share of cases that pass it on base and
on head, over the cases that have it on both sides. Pure.

A case passes a metric when every one of its assertions of that metric passed (a test's
`threshold` judges the whole case; a metric's own rate still counts its assertions). Held-out
cases carry no checks in their reports, so they never enter the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from gate.report.checks import AssertionResult
from gate.report.models import CaseResult


class MetricRate(BaseModel):
    metric: str
    n: int = Field(description="paired cases with this metric on both sides")
    base_passed: int
    head_passed: int
    base_pass_rate: float
    head_pass_rate: float
    delta_points: float


def metric_outcomes(result: CaseResult) -> dict[str, bool]:
    """Each metric of the case's checks: whether all of its results passed."""
    outcomes: dict[str, bool] = {}
    for check in result.checks:
        if isinstance(check, AssertionResult) and check.metric is not None:
            outcomes[check.metric] = outcomes.get(check.metric, True) and check.passed is True
    return outcomes


def metric_rates(pairs: Sequence[tuple[CaseResult, CaseResult]]) -> list[MetricRate]:
    """The metrics of the paired cases, the largest drop first."""
    counts: dict[str, list[int]] = {}
    for base, head in pairs:
        before, after = metric_outcomes(base), metric_outcomes(head)
        for metric in before.keys() & after.keys():
            row = counts.setdefault(metric, [0, 0, 0])
            row[0] += 1
            row[1] += before[metric]
            row[2] += after[metric]
    rates = [
        MetricRate(
            metric=metric,
            n=n,
            base_passed=b,
            head_passed=h,
            base_pass_rate=100.0 * b / n,
            head_pass_rate=100.0 * h / n,
            delta_points=round(100.0 * (h - b) / n, 9),
        )
        for metric, (n, b, h) in counts.items()
    ]
    return sorted(rates, key=lambda r: (r.delta_points, r.metric))
