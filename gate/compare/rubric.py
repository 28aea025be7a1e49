"""Rubric scores compared: per judged dimension, the mean score of base and head over the cases
the judge scored on both sides, the mean difference and an exact paired test.

Pure: case results in, a `RubricComparison` out.

The test is the **paired sign-flip permutation test** of the mean score difference, computed
exactly. Under the null hypothesis (the PR changes nothing a dimension measures) each case's
difference `head - base` is as likely to have either sign, so the p-value is the share of the
2^m sign patterns of the m non-zero differences whose sum is at least as far from zero as the
observed one. Scores are integers 0-2, so the differences take five values and their sum's
null distribution is a convolution of a few binomials: exact for any number of cases, no
sampling, no seed. Why not the alternatives: Wilcoxon's signed-rank test ranks the |differences|,
which here are nearly all tied (1 or 2), so its exact table does not apply and libraries fall
back to a normal approximation; the sign test would count a 2 -> 0 drop like a 2 -> 1 one. The
sign-flip test uses the magnitudes, needs no approximation and, with repeats, is the test the
pass fractions already get (`gate.compare.stats.sign_flip_test`).
Held-out cases are left out of the table: a dimension's name and scores are expectations.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from gate.report.models import CaseResult

TEST = "exact paired sign-flip permutation test"


class DimensionScores(BaseModel):
    """One rubric dimension over the cases judged on both sides."""

    dimension: str
    n: int = Field(description="cases with a score for this dimension on both sides")
    base_mean: float
    head_mean: float
    delta: float = Field(description="head mean - base mean, in score points (0-2 scale)")
    lower: int = Field(0, description="cases scored lower on head")
    higher: int = Field(0, description="cases scored higher on head")
    p_value: float = Field(1.0, description=f"two-sided, {TEST}")


class RubricComparison(BaseModel):
    dimensions: list[DimensionScores] = Field(default_factory=list)
    test: str = TEST
    heldout_left_out: int = Field(0, description="held-out judged cases not in the table")
    judged_one_side: int = Field(0, description="cases judged on one side only")


def sign_flip_p_value(differences: Iterable[int]) -> float:
    """Exact two-sided p-value of the paired sign-flip test of integer differences:
    P(|S| >= |s|) over the 2^m equally likely sign patterns of the m non-zero ones."""
    values = [int(d) for d in differences]
    magnitudes = Counter(abs(d) for d in values if d)
    observed = abs(sum(values))
    if not magnitudes or observed == 0:
        return 1.0
    # S = 2T - M with T = sum over magnitudes k of k * Binomial(count_k, 1/2)
    distribution = np.ones(1)
    for k, count in sorted(magnitudes.items()):
        pmf = _binomial_half(count)
        spread = np.zeros(k * count + 1)
        spread[::k] = pmf
        distribution = np.convolve(distribution, spread)
    total = sum(k * c for k, c in magnitudes.items())
    sums = 2 * np.arange(distribution.size) - total
    p = float(distribution[np.abs(sums) >= observed].sum())
    return min(1.0, p)


def _binomial_half(n: int) -> NDArray[np.float64]:
    k = np.arange(n + 1)
    lgamma = np.vectorize(math.lgamma)
    log_pmf = lgamma(n + 1) - lgamma(k + 1) - lgamma(n - k + 1) - n * math.log(2)
    return np.asarray(np.exp(log_pmf))


def dimension_scores(dimension: str, pairs: Sequence[tuple[int, int]]) -> DimensionScores:
    differences = [h - b for b, h in pairs]
    n = len(pairs)
    base_mean = sum(b for b, _ in pairs) / n
    head_mean = sum(h for _, h in pairs) / n
    return DimensionScores(
        dimension=dimension,
        n=n,
        base_mean=round(base_mean, 9),
        head_mean=round(head_mean, 9),
        delta=round(head_mean - base_mean, 9),
        lower=sum(d < 0 for d in differences),
        higher=sum(d > 0 for d in differences),
        p_value=sign_flip_p_value(differences),
    )


def compare_rubric(pairs: Iterable[tuple[CaseResult, CaseResult]]) -> RubricComparison | None:
    """None when the judge scored no case on either side."""
    by_dimension: dict[str, list[tuple[int, int]]] = {}
    heldout = one_side = 0
    judged = False
    for base, head in pairs:
        if not (base.scores or head.scores):
            continue
        judged = True
        if base.heldout or head.heldout:
            heldout += 1
            continue
        shared = base.scores.keys() & head.scores.keys()
        if set(base.scores) != set(head.scores):
            one_side += 1
        for dimension in shared:
            by_dimension.setdefault(dimension, []).append(
                (base.scores[dimension], head.scores[dimension])
            )
    if not judged:
        return None
    dimensions = [dimension_scores(d, by_dimension[d]) for d in sorted(by_dimension)]
    # the dimensions that fell most first
    dimensions.sort(key=lambda s: (s.delta, s.dimension))
    return RubricComparison(
        dimensions=dimensions, heldout_left_out=heldout, judged_one_side=one_side
    )
