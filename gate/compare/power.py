"""What a suite can resolve: one case's weight, and the smallest drop it would catch.

Pure. The power analysis of Evan Miller, "Adding Error Bars to Evals" (2024), section
"Power analysis", for the paired design: with n paired cases whose per-case differences
(head − base, in pass fraction) have variance s², the mean difference has standard error
s / √n, and a two-sided test at level α detects a true change of

    MDE = (z(1 − α/2) + z(power)) · s / √n

with probability `power` (80% here). `s` is the observed spread of the per-case differences,
so it reflects n, the repeats (more runs per case shrink each case's noise) and the observed
discordance (cases that differ between the sides). A suite with no discordance at all has
s = 0, which would claim infinite resolution; s is therefore never taken below the spread of
one flipped case (s² = 1/n; this also applies to a few small moves of fractions), and the MDE
is never below one case's weight (100 / n points): no drop smaller than one case can be seen
at all.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from pydantic import BaseModel, ConfigDict

POWER = 0.8
METHOD = 'power analysis of Miller, "Adding Error Bars to Evals" (2024), paired differences'


class Power(BaseModel):
    """The resolution of the comparison that was made."""

    model_config = ConfigDict(frozen=True)

    n: int
    runs_per_case: float
    alpha: float
    power: float = POWER
    case_weight_points: float
    sd_points: float
    discordant: int
    mde_points: float
    method: str = METHOD


def mde_points(n: int, sd: float, alpha: float, power: float = POWER) -> float:
    """Smallest true change (points) detected with probability `power` at two-sided `alpha`."""
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return 100.0 * z * sd / math.sqrt(n)


def resolution(
    diffs: Sequence[float], alpha: float, runs_per_case: float, power: float = POWER
) -> Power | None:
    """The power line of a comparison of `diffs` (per-case head − base pass fractions)."""
    n = len(diffs)
    if n < 2:
        return None
    mean = sum(diffs) / n
    variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    discordant = sum(1 for d in diffs if d != 0)
    floor = 1.0 / n  # the variance of n - 1 zeros and one flip: ((n - 1) / n) / (n - 1)
    sd = math.sqrt(max(variance, floor))
    weight = 100.0 / n
    return Power(
        n=n,
        runs_per_case=round(runs_per_case, 3),
        alpha=alpha,
        power=power,
        case_weight_points=weight,
        sd_points=100.0 * sd,
        discordant=discordant,
        mde_points=max(mde_points(n, sd, alpha, power), weight),
    )
