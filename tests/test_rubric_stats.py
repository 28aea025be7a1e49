"""The paired test of rubric scores: exact sign-flip permutation test of the per-case score
differences, checked against scipy and by a seeded simulation; and what `compare` makes of
the judge's scores."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from gate.compare.rubric import compare_rubric, sign_flip_p_value
from gate.report.models import CaseResult


def scipy_sign_flip(differences: list[int]) -> float:
    """scipy's exact paired permutation test (every sign pattern) of the summed differences."""
    result = stats.permutation_test(
        (np.array(differences),),
        lambda x, axis: np.sum(x, axis=axis),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


@pytest.mark.parametrize("seed", range(12))
def test_p_value_matches_scipys_exact_permutation_test(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 13)  # scipy needs two observations
    differences = [rng.choice([-2, -1, -1, 0, 0, 1, 1, 2]) for _ in range(n)]
    assert sign_flip_p_value(differences) == pytest.approx(scipy_sign_flip(differences), abs=1e-12)


def test_unit_differences_reduce_to_the_sign_test() -> None:
    # all |d| = 1: the sign-flip test is the exact binomial (sign) test
    for down, up in [(7, 1), (10, 3), (30, 18), (0, 5)]:
        expected = stats.binomtest(down, down + up, 0.5).pvalue
        assert sign_flip_p_value([-1] * down + [1] * up + [0] * 4) == pytest.approx(expected)


def test_large_samples_agree_with_the_normal_limit() -> None:
    # 3,000 cases: far beyond enumeration; the exact value is near the normal approximation
    rng = random.Random(7)
    differences = [rng.choice([-2, -1, 0, 0, 1, 1, 2]) for _ in range(3000)]
    z = abs(sum(differences)) / math.sqrt(sum(d * d for d in differences))
    normal = 2 * stats.norm.sf(z)
    assert sign_flip_p_value(differences) == pytest.approx(normal, rel=0.08, abs=1e-3)


def test_no_change_is_p_one() -> None:
    assert sign_flip_p_value([]) == 1.0
    assert sign_flip_p_value([0, 0, 0]) == 1.0
    assert sign_flip_p_value([1, -1, 2, -2]) == 1.0


def test_simulation_holds_its_level_and_finds_real_drops() -> None:
    """Seeded: judge scores of 100 cases; under no change the test rejects at most about
    alpha of the time; when head loses a point on a third of the cases it almost always does."""
    rng = np.random.default_rng(1)
    alpha, runs, n = 0.05, 600, 100
    scores = np.array([0, 1, 2])

    def p_values(shift: float) -> np.ndarray:
        out = []
        for _ in range(runs):
            quality = rng.choice(scores, size=n, p=[0.15, 0.35, 0.5])
            noise_b = rng.choice([-1, 0, 1], size=n, p=[0.15, 0.7, 0.15])
            noise_h = rng.choice([-1, 0, 1], size=n, p=[0.15, 0.7, 0.15])
            drop = (rng.random(n) < shift).astype(int)
            base = np.clip(quality + noise_b, 0, 2)
            head = np.clip(quality + noise_h - drop, 0, 2)
            out.append(sign_flip_p_value((head - base).tolist()))
        return np.array(out)

    null = p_values(0.0)
    rejected = float((null < alpha).mean())
    # the exact test of discrete data is conservative; allow 3 standard errors of noise
    assert rejected <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / runs)
    assert rejected > 0.015  # but not useless (discrete data: about 0.03 here)
    power = float((p_values(0.33) < alpha).mean())
    assert power > 0.8


def judged_result(id: str, scores: dict[str, int], *, heldout: bool = False) -> CaseResult:
    return CaseResult(id=id, task="t", status="pass", passed=True, scores=scores, heldout=heldout)


def test_compare_rubric_pairs_scores_per_dimension() -> None:
    pairs = [
        (
            judged_result("a", {"correctness": 2, "citation": 1}),
            judged_result("a", {"correctness": 0, "citation": 1}),
        ),
        (
            judged_result("b", {"correctness": 2, "citation": 0}),
            judged_result("b", {"correctness": 1, "citation": 2}),
        ),
        (judged_result("c", {"correctness": 1}), judged_result("c", {"correctness": 1})),
        (judged_result("d", {"correctness": 2}), judged_result("d", {})),  # head not judged
        (
            judged_result("e", {"correctness": 0}, heldout=True),
            judged_result("e", {"correctness": 2}, heldout=True),
        ),
        (judged_result("f", {}), judged_result("f", {})),  # not a judged case
    ]
    rubric = compare_rubric(pairs)
    assert rubric is not None
    by = {d.dimension: d for d in rubric.dimensions}
    assert [d.dimension for d in rubric.dimensions] == ["correctness", "citation"]  # worst first
    c = by["correctness"]
    assert (c.n, c.lower, c.higher) == (3, 2, 0)
    assert (c.base_mean, c.head_mean) == (pytest.approx(5 / 3), pytest.approx(2 / 3))
    assert c.delta == pytest.approx(-1.0)
    assert c.p_value == pytest.approx(scipy_sign_flip([-2, -1, 0]))
    assert (by["citation"].n, by["citation"].delta) == (2, 1.0)
    assert rubric.heldout_left_out == 1 and rubric.judged_one_side == 1
    assert compare_rubric([(judged_result("x", {}), judged_result("x", {}))]) is None
