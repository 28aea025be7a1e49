"""What a comparison can resolve: one case's weight, and the drop it catches 9 times in 10.

Pure. The fail rule blocks a drop when the estimate is past −threshold and the drop test
rejects "no change" at the suite's level (its share of the PR's false-block rate). At
standard error se a true drop of D points is caught with probability Φ((D − bar) / se), where
bar = max(threshold, z(1 − level) · se), so the drop caught 9 times in 10 is bar + z(0.9) · se
(`gate.compare.sequential.detectable`; the power analysis of Evan Miller, "Adding Error Bars
to Evals", 2024, for this rule). se is the comparison's own standard error (the noise of its
runs, `gate.compare.estimates`); with one run per case, whose noise cannot be told from the
cases' differences, it is the case-level standard error of the per-case differences. It is
never taken below one flipped case (so a suite with no discordance is not claimed to resolve
everything), and nothing below one case's weight (100 / n points) can be seen at all. Under
`repeats: auto` the rounds aimed at the precision that catches `design_points` (the policy's
`detect`) within the budget; the advice says what they reached.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from gate.compare.estimates import DeltaEstimate
from gate.compare.sequential import POWER, detectable

METHOD = (
    'power analysis (Miller, "Adding Error Bars to Evals", 2024) of the fail rule: the estimate '
    "past −threshold and the one-sided drop test at the suite's level"
)


class Power(BaseModel):
    """The resolution of the comparison that was made."""

    model_config = ConfigDict(frozen=True)

    n: int
    runs_per_case: float
    level: float
    power: float = POWER
    case_weight_points: float
    se_points: float
    detectable_points: float
    design_points: float | None = None
    method: str = METHOD


def case_level_se(diffs: Sequence[float]) -> float:
    """The standard error (points) of the mean of `diffs` (per-case head − base fractions),
    its spread floored at one flipped case's (s² = 1/n)."""
    n = len(diffs)
    mean = sum(diffs) / n
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    return 100.0 * math.sqrt(max(variance, 1.0 / n) / n)


def resolution(
    estimate: DeltaEstimate | None,
    diffs: Sequence[float],
    *,
    runs_per_case: float,
    threshold: float,
    level: float,
    design_points: float | None = None,
) -> Power | None:
    """The power line of a comparison: `estimate` when its runs measure their own noise,
    else the case-level error of `diffs`."""
    n = len(diffs)
    if n < 2:
        return None
    floor = 100.0 / n if estimate is None else 0.0
    se = estimate.se_points if estimate is not None else case_level_se(diffs)
    weight = 100.0 / n
    return Power(
        n=n,
        runs_per_case=round(runs_per_case, 3),
        level=level,
        case_weight_points=weight,
        se_points=se,
        detectable_points=max(detectable(se, threshold, level), weight, floor),
        design_points=design_points,
    )
