"""The drop test: is a drop significant against "no change", at the suite's share of the PR's
false-block rate? A drop past the threshold fails a suite only when it is.

Pure. The test's statistic is the delta over its standard error (`gate.compare.estimates`:
the noise of these runs of these cases), one-sided:

- `t`: fixed repeats of two or more, and reports of `repeats: auto` written before the drop
  test: Student's t with Satterthwaite's degrees of freedom, at one look;
- `mcnemar`: one run per case (no case's noise can be estimated from its own runs): the exact
  one-sided McNemar test of the regressions against the fixes;
- `sequential`: `repeats: auto`, which looked after every round: each look's t statistic
  against its boundary from the spending of the level over the looks
  (`gate.compare.sequential`), at the looks the flow recorded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from statistics import NormalDist
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gate.compare.estimates import DeltaEstimate, Moments
from gate.compare.sequential import boundaries, holm
from gate.compare.stats import PairedCounts, mcnemar_drop
from gate.compare.tdist import t_cdf, t_quantile
from gate.report.plan import Look

Method = Literal["t", "mcnemar", "sequential"]
METHODS: dict[Method, str] = {
    "t": "one-sided t-test of the mean per-case difference (Satterthwaite's degrees of freedom)",
    "mcnemar": "one-sided exact McNemar test of the regressions against the fixes",
    "sequential": "group-sequential one-sided t-test, its level spent over the rounds "
    "(Lan-DeMets, α·t)",
}

_normal = NormalDist()


class DropTest(BaseModel):
    """The drop test of one comparison: against "no change", one-sided, at `level`."""

    model_config = ConfigDict(frozen=True)

    method: Method
    level: float = Field(description="one-sided: this suite's share of the PR's false-block rate")
    threshold: float = Field(description="a look counts only where the estimate is past it")
    p_value: float = Field(description="one-sided; sequential: of the deciding (or last) look")
    bar: float = Field(description="the p-value it had to reach (its look's, if sequential)")
    regressed: int = 0
    fixed: int = 0
    looks: list[Look] = Field(default_factory=list, description="sequential: every round's look")
    significant: bool
    decides: bool = Field(
        True,
        description="the test decides the threshold rule (repeats: auto, require_significance); "
        "false: fixed repeats, where a drop past the threshold fails on its own",
    )

    def at(self, level: float) -> DropTest:
        """The same evidence judged at another level (Holm's step to the next suite)."""
        if self.method == "sequential":
            return sequential_test(self.looks, self.threshold, level)
        if not self.decides:
            return self.model_copy(update={"level": level, "bar": level})
        return self.model_copy(
            update={"level": level, "bar": level, "significant": self.p_value <= level}
        )


def look_p(delta_points: float, se_points: float, df: float) -> float:
    """The one-sided p-value of a drop this large at this standard error."""
    if se_points <= 0:
        return 0.0 if delta_points < 0 else 1.0
    return t_cdf(delta_points / se_points, df)


def fixed_test(
    estimate: DeltaEstimate | None, counts: PairedCounts, threshold: float, level: float
) -> DropTest:
    """One look: the t-test of the estimate, or McNemar's where no case has two runs."""
    if estimate is None:
        p = mcnemar_drop(counts.regressed, counts.fixed)
        return DropTest(
            method="mcnemar",
            level=level,
            threshold=threshold,
            p_value=p,
            bar=level,
            regressed=counts.regressed,
            fixed=counts.fixed,
            significant=p <= level,
        )
    p = look_p(estimate.delta_points, estimate.se_points, estimate.df)
    return DropTest(
        method="t", level=level, threshold=threshold, p_value=p, bar=level, significant=p <= level
    )


def sequential_test(looks: Sequence[Look], threshold: float, level: float) -> DropTest:
    """The looks against the spending boundaries of `level`: significant at the first look
    whose estimate is past −threshold and whose p-value reaches its boundary's level."""
    if not looks:
        raise ValueError("a sequential test needs its looks")
    bars = [_normal.cdf(-c) for c in boundaries([look.info for look in looks], level)]
    for look, bar in zip(looks, bars, strict=True):
        p = look_p(look.delta_points, look.se_points, look.df)
        if look.delta_points < -threshold and p <= bar:
            return _sequential(looks, threshold, level, p, bar, significant=True)
    last = looks[-1]
    p = look_p(last.delta_points, last.se_points, last.df)
    return _sequential(looks, threshold, level, p, bars[-1], significant=False)


def _sequential(
    looks: Sequence[Look],
    threshold: float,
    level: float,
    p: float,
    bar: float,
    *,
    significant: bool,
) -> DropTest:
    return DropTest(
        method="sequential",
        level=level,
        threshold=threshold,
        p_value=p,
        bar=bar,
        looks=list(looks),
        significant=significant,
    )


def interval(estimate: DeltaEstimate, confidence: float) -> tuple[float, float]:
    """The two-sided t interval of the delta at `confidence` (points)."""
    half = t_quantile(1 - (1 - confidence) / 2, estimate.df) * estimate.se_points
    return estimate.delta_points - half, estimate.delta_points + half


def to_decide(
    pairs: Sequence[tuple[Moments, Moments]] | None,
    estimate: DeltaEstimate | None,
    threshold: float,
    bars: tuple[float, float],
) -> tuple[int, int] | None:
    """About how many more runs per side, of the cases whose runs disagree, would decide the
    threshold rule if the estimate stayed where it is, and how many such cases there are:
    a drop past the threshold until it is significant at `bars[0]` (one-sided), any other
    delta until its interval at `bars[1]` (two-sided) clears −threshold. None: one run per
    case (no case's noise is known), nothing to decide, or more runs of these cases cannot
    (the others' noise alone is too much)."""
    if estimate is None or pairs is None:
        return None
    disagree = [p for p in pairs if any((m.variance or 0.0) > 0 for m in p)]
    variances = [sum(max(m.variance or 0.0, 0.0) for m in p) for p in disagree]
    rest = sum(max(m.variance or 0.0, 0.0) for p in pairs for m in p) - sum(variances)
    delta = estimate.delta_points
    if delta < -threshold:
        needed = -delta / _normal.inv_cdf(1 - bars[0])
    else:
        needed = (delta + threshold) / _normal.inv_cdf(1 - bars[1] / 2)
    goal = (needed * len(pairs) / 100.0) ** 2
    noisy = sum(variances)
    if not variances or needed <= 0 or goal <= rest or noisy <= 0:
        return None
    factor = noisy / (goal - rest)
    if factor <= 1:
        return None
    runs = sum(max(m.runs for m in p) for p in disagree)
    return math.ceil(runs * (factor - 1)), len(variances)


def split_levels(
    suites: Sequence[tuple[DropTest | None, float | None]], rate: float, threshold: float
) -> dict[int, float]:
    """Holm's procedure over the PR's compared suites, each given by its drop test and delta
    (a suite without a drop test, or whose delta is within the threshold, never rejects but
    counts): the suites it rejects, each with the level it rejected them at."""

    def rejects(drop: DropTest | None, delta: float | None) -> Callable[[float], bool]:
        if drop is None or not drop.decides or delta is None or delta >= -threshold:
            return lambda level: False
        return lambda level: drop.at(level).significant

    return holm([rejects(drop, delta) for drop, delta in suites], rate)
