"""The drop test's error control: spending its level over the looks, splitting the PR's level
over the suites, and the precision the rounds of `repeats: auto` aim at.

Pure. Three pieces:

- **Looks** (`boundaries`): `repeats: auto` tests for a drop after every round, so the test's
  level is spent over the looks by the Lan-DeMets alpha-spending function α·t^ρ (Lan & DeMets
  1983; Kim & DeMets 1987, ρ = 1 here), where t is the information fraction (the design's
  variance over the look's). The z boundary of each look follows from the recursive numerical
  integration of Armitage, McPherson & Rowe (1969) over the joint normal law of the looks'
  statistics (Jennison & Turnbull 2000, ch. 19), so that a PR that changed nothing crosses one
  of them with probability at most α, however many looks there were. A look's nominal level
  Φ(−c) is then applied to its t statistic (Satterthwaite's degrees of freedom), which keeps
  the test at its level where the variance is estimated from few noisy cases.
- **Suites** (`holm`): the PR's false-block rate is split over the suites that are compared
  by Holm's step-down procedure (Holm 1979), in its sequentially rejective form (Maurer &
  Bretz 2013, equal weights), which also holds for group-sequential tests: a PR that changed
  nothing is blocked by the threshold rule with probability at most the false-block rate,
  however many suites it has.
- **Precision** (`design_se`): the standard error at which the drop test catches a drop of
  `detect` points with probability `power`, given the last boundary of a five-look design.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy itself is imported where the boundaries are computed
    import numpy as np
    from numpy.typing import NDArray

POWER = 0.9
RHO = 1.0  # the spending function's exponent: α·t (Pocock-like: early looks can stop a drop)
DESIGN_LOOKS = 5  # the looks `design_se` assumes for the last boundary
GRID = 401  # points of the numerical integration
SPAN = 8.0  # the integration's range in standard deviations

_normal = NormalDist()


def spent(alpha: float, info: float, rho: float = RHO) -> float:
    """The level spent up to information fraction `info` (all of it from `info` = 1 on)."""
    return alpha * min(1.0, max(info, 0.0)) ** rho


def boundaries(infos: Sequence[float], alpha: float, rho: float = RHO) -> list[float]:
    """The z boundary of each look at the information fractions `infos` (increasing; a look at
    1 or more spends what is left): the look rejects when its statistic is below −c. A look
    that may spend nothing gets an infinite boundary."""
    return [_integrated(tuple(infos[: k + 1]), alpha, rho)[0] for k in range(len(infos))]


@lru_cache(maxsize=4096)
def _integrated(
    infos: tuple[float, ...], alpha: float, rho: float
) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """The last look's boundary, and the density of the statistic's paths that continue past
    it (on a grid, as trapezoid weights), from the looks before it."""
    import numpy as np

    t = infos[-1]
    previous_t = infos[-2] if len(infos) > 1 else 0.0
    if t <= previous_t:
        raise ValueError("the information fractions must increase")
    budget = spent(alpha, t, rho) - spent(alpha, previous_t, rho)
    if len(infos) == 1:
        sd = math.sqrt(t)
        c = _normal.inv_cdf(1 - budget) if budget > 0 else math.inf
        grid = np.linspace(-SPAN * sd, min(c * sd, SPAN * sd), GRID)
        density = np.exp(-0.5 * (grid / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    else:
        _, before, weights = _integrated(infos[:-1], alpha, rho)
        step = math.sqrt(t - previous_t)
        b = _boundary(before, weights, step, budget)
        c = b / math.sqrt(t) if math.isfinite(b) else math.inf
        top = min(b, float(before[-1]) + SPAN * step)
        grid = np.linspace(float(before[0]) - SPAN * step, top, GRID)
        kernel = np.exp(-0.5 * ((grid[:, None] - before[None, :]) / step) ** 2)
        density = kernel @ weights / (step * math.sqrt(2 * math.pi))
    gaps = np.diff(grid)
    trapezoid = np.zeros_like(grid)
    trapezoid[:-1] += gaps / 2
    trapezoid[1:] += gaps / 2
    return c, grid, density * trapezoid


_ERFC = (  # Numerical Recipes' erfcc: Chebyshev fit, fractional error below 1.2e-7
    -1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277,
)  # fmt: skip


def _erfc(x: object) -> object:
    import numpy as np

    z = np.abs(np.asarray(x, dtype=float))
    t = 1.0 / (1.0 + 0.5 * z)
    series = np.zeros_like(z)
    for coefficient in reversed(_ERFC[1:]):
        series = t * (coefficient + series)
    value = t * np.exp(-z * z + _ERFC[0] + series)
    return np.where(np.asarray(x) >= 0, value, 2.0 - value)


def _boundary(grid: object, weights: object, step: float, budget: float) -> float:
    """The score b above which the next look's continuing paths carry mass `budget`."""
    import numpy as np

    points = np.asarray(grid)
    mass = np.asarray(weights)

    def beyond(b: float) -> float:
        return float(np.dot(mass, 0.5 * np.asarray(_erfc((b - points) / (step * 2**0.5)))))

    if budget <= 0:
        return math.inf
    low, high = float(points[0]) - SPAN * step, float(points[-1]) + SPAN * step
    if beyond(low) <= budget:
        return low
    for _ in range(60):
        middle = 0.5 * (low + high)
        if beyond(middle) > budget:
            low = middle
        else:
            high = middle
    return high


def design_se(threshold: float, detect: float, level: float, power: float = POWER) -> float:
    """The standard error (points) at which a drop of `detect` points is caught with
    probability `power` by the fail rule: the estimate below −threshold and the drop test at
    `level` (its last boundary in a five-look design)."""
    last = boundaries([i / DESIGN_LOOKS for i in range(1, DESIGN_LOOKS + 1)], level)[-1]
    z_power = _normal.inv_cdf(power)
    se = (detect - threshold) / z_power
    if last * se > threshold:  # the test, not the threshold, is the bar at that precision
        se = detect / (last + z_power)
    return se


def detectable(se: float, threshold: float, level: float, power: float = POWER) -> float:
    """The drop (points) that the fail rule catches with probability `power` at standard error
    `se` and a fixed-sample test at `level`: what a comparison of this precision resolves."""
    bar = max(threshold, _normal.inv_cdf(1 - level) * se)
    return bar + _normal.inv_cdf(power) * se


def holm(rejects: Sequence[Callable[[float], bool]], alpha: float) -> dict[int, float]:
    """Holm's procedure over tests given as "rejects at this level" (monotone in the level):
    each remaining test at alpha / (tests remaining), until none more rejects. Returns the
    rejected tests, each with the level it was rejected at."""
    rejected: dict[int, float] = {}
    while len(rejected) < len(rejects):
        remaining = [i for i in range(len(rejects)) if i not in rejected]
        level = alpha / len(remaining)
        new = [i for i in remaining if rejects[i](level)]
        if not new:
            break
        rejected.update(dict.fromkeys(new, level))
    return rejected
