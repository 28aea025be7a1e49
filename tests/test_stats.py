"""Statistics of paired comparisons, checked against scipy and published examples."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from scipy.stats import binom, binomtest, bootstrap, permutation_test

from gate.compare.stats import (
    MCNEMAR,
    SIGN_FLIP,
    PairedCounts,
    bootstrap_mean_interval,
    mcnemar_exact,
    mcnemar_mid_p,
    newcombe_paired_interval,
    paired_counts,
    sign_flip_test,
    significance,
    wilson_interval,
)


def table(both_pass: int, regressed: int, fixed: int, both_fail: int) -> PairedCounts:
    return PairedCounts(both_pass=both_pass, regressed=regressed, fixed=fixed, both_fail=both_fail)


# Published: Newcombe (1998), "Two-sided confidence intervals for the single proportion",
# Stat Med 17:857-872, Table I, method 3 (Wilson score, no continuity correction).
@pytest.mark.parametrize(
    ("successes", "n", "low", "high"),
    [(81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611)],
)
def test_wilson_interval_matches_published_values(successes, n, low, high) -> None:
    got = wilson_interval(successes, n, 0.95)
    assert got == pytest.approx((low, high), abs=6e-5)


def test_wilson_interval_equals_scipys() -> None:
    for n in (1, 2, 7, 30, 250, 10_000):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            for confidence in (0.9, 0.95, 0.99):
                ci = binomtest(k, n).proportion_ci(confidence, method="wilson")
                assert wilson_interval(k, n, confidence) == pytest.approx(
                    (ci.low, ci.high), abs=1e-12
                )


def test_newcombe_matches_the_published_paired_example() -> None:
    # Cavo et al. (2012) as analysed in Fagerland, Lydersen & Laake, "Statistical Analysis of
    # Contingency Tables" (2017), ch. 8: rows before, columns after, [[59, 6], [16, 80]];
    # Newcombe square-and-add interval for p1+ - p+1: -0.0621 (-0.1186 to -0.0046).
    # Our rows are base and columns head, and we report head - base: the mirror image.
    cavo = table(both_pass=59, regressed=6, fixed=16, both_fail=80)
    low, high = newcombe_paired_interval(cavo, 0.95)
    assert (cavo.head_passed - cavo.base_passed) / cavo.n == pytest.approx(0.0621, abs=5e-5)
    assert low == pytest.approx(0.0046, abs=5e-5)
    assert high == pytest.approx(0.1186, abs=5e-5)


def test_newcombe_is_built_from_scipys_wilson_intervals() -> None:
    # With no correlation (phi = 0) the interval is the plain square-and-add of the two
    # Wilson intervals; recompute that from scipy directly.
    # ad - bc = 16 - 12 = 4 <= n/2: the correction sets phi to 0
    t = table(both_pass=4, regressed=3, fixed=4, both_fail=4)
    n = t.n
    base = binomtest(t.base_passed, n).proportion_ci(0.95, method="wilson")
    head = binomtest(t.head_passed, n).proportion_ci(0.95, method="wilson")
    p_base, p_head = t.base_passed / n, t.head_passed / n
    expected_low = (p_head - p_base) - np.hypot(p_head - head.low, base.high - p_base)
    expected_high = (p_head - p_base) + np.hypot(head.high - p_head, p_base - base.low)
    assert newcombe_paired_interval(t, 0.95) == pytest.approx((expected_low, expected_high))


def test_newcombe_mirrors_when_base_and_head_swap() -> None:
    rng = random.Random(7)
    for _ in range(200):
        a, b, c, d = (rng.randint(0, 40) for _ in range(4))
        if a + b + c + d == 0:
            continue
        low, high = newcombe_paired_interval(table(a, b, c, d), 0.95)
        swapped = newcombe_paired_interval(table(a, c, b, d), 0.95)
        assert swapped == pytest.approx((-high, -low), abs=1e-12)
        estimate = (c - b) / (a + b + c + d)
        assert -1 <= low <= estimate <= high <= 1


def test_newcombe_narrows_as_evidence_grows_and_widens_with_confidence() -> None:
    small = newcombe_paired_interval(table(40, 6, 2, 2), 0.95)
    large = newcombe_paired_interval(table(400, 60, 20, 20), 0.95)
    wider = newcombe_paired_interval(table(400, 60, 20, 20), 0.99)
    assert large[1] - large[0] < small[1] - small[0]
    assert wider[0] < large[0] and wider[1] > large[1]
    assert large[1] < 0  # 60 regressions against 20 fixes: a real drop


def test_degenerate_tables_give_finite_intervals() -> None:
    low, high = newcombe_paired_interval(table(50, 0, 0, 0), 0.95)
    assert low < 0 < high  # no change seen, but 50 cases cannot rule out a small one
    low, high = newcombe_paired_interval(table(0, 3, 0, 0), 0.95)
    assert -1 <= low < high < 0
    assert newcombe_paired_interval(table(0, 0, 0, 0), 0.95) == (-1.0, 1.0)


# Published: Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, the McNemar exact
# conditional and mid-p tests on Bentur et al. (2009) and Cavo et al. (2012).
@pytest.mark.parametrize(
    ("regressed", "fixed", "exact", "mid_p"),
    [(1, 7, 0.070, 0.039), (6, 16, 0.052, 0.035)],
)
def test_mcnemar_matches_published_p_values(regressed, fixed, exact, mid_p) -> None:
    assert mcnemar_exact(regressed, fixed) == pytest.approx(exact, abs=5e-4)
    assert mcnemar_mid_p(regressed, fixed) == pytest.approx(mid_p, abs=5e-4)


def test_mcnemar_equals_scipys_binomial_test_on_the_discordant_pairs() -> None:
    for b, c in itertools.product(range(0, 25, 3), range(0, 25, 4)):
        if b + c == 0:
            assert mcnemar_exact(b, c) == 1.0
            continue
        reference = binomtest(b, b + c, 0.5, alternative="two-sided").pvalue
        assert mcnemar_exact(b, c) == pytest.approx(reference, rel=1e-12)
        assert mcnemar_exact(c, b) == pytest.approx(reference, rel=1e-12)
        k = min(b, c)
        direct_mid = 2 * (binom.cdf(k, b + c, 0.5) - 0.5 * binom.pmf(k, b + c, 0.5))
        assert mcnemar_mid_p(b, c) == pytest.approx(min(1.0, direct_mid), rel=1e-12)
        assert mcnemar_mid_p(b, c) <= mcnemar_exact(b, c)


@pytest.mark.parametrize(("b", "c"), [(4000, 5000), (10_000, 10_000), (9_990, 10_010), (10, 3000)])
def test_mcnemar_stays_exact_for_large_tables(b: int, c: int) -> None:
    reference = binomtest(min(b, c), b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(reference, rel=1e-9, abs=1e-300)


def test_mcnemar_uses_only_discordant_pairs() -> None:
    few = significance(table(5, 10, 1, 5), 0.05)
    many = significance(table(5000, 10, 1, 5000), 0.05)
    assert few.p_value == many.p_value
    assert many.ci_high_points - many.ci_low_points < few.ci_high_points - few.ci_low_points


def test_paired_counts_fill_the_table() -> None:
    pairs = [(True, True)] * 3 + [(True, False)] * 2 + [(False, True)] + [(False, False)] * 4
    t = paired_counts(pairs)
    assert (t.both_pass, t.regressed, t.fixed, t.both_fail, t.n) == (3, 2, 1, 4, 10)
    assert (t.base_passed, t.head_passed, t.discordant) == (5, 4, 3)


def _scipy_sign_flip(values: list[float], **kwargs) -> float:
    return permutation_test(
        (np.asarray(values),),
        lambda x, axis: np.sum(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        alternative="two-sided",
        **kwargs,
    ).pvalue


@pytest.mark.parametrize("m", [2, 4, 9, 13])
def test_sign_flip_exact_equals_scipys_permutation_test(m: int) -> None:
    rng = random.Random(m)
    values = [rng.choice([-1, -2 / 3, -1 / 3, 1 / 3, 2 / 3, 1]) for _ in range(m)]
    p_value, exact = sign_flip_test(values)
    assert exact
    assert p_value == pytest.approx(_scipy_sign_flip(values, n_resamples=9999))


def test_sign_flip_sampled_agrees_with_scipy_within_monte_carlo_error() -> None:
    rng = random.Random(3)
    values = [rng.choice([-1, -1 / 3, 1 / 3, 2 / 3]) for _ in range(60)]
    p_value, exact = sign_flip_test(values, seed=11)
    reference = _scipy_sign_flip(values, n_resamples=9999, rng=np.random.default_rng(5))
    assert not exact
    # two independent estimates of the same p, each with sd <= 0.005
    assert abs(p_value - reference) < 0.03
    assert sign_flip_test(values, seed=11) == (p_value, exact)  # seeded: reproducible


def test_sign_flip_ignores_zero_differences_and_detects_a_shift() -> None:
    values = [-1.0] * 12 + [1 / 3] * 2
    with_zeros = values + [0.0] * 500
    assert sign_flip_test(values) == sign_flip_test(with_zeros)
    assert sign_flip_test(values)[0] < 0.01
    assert sign_flip_test([0.0, 0.0]) == (1.0, True)
    assert sign_flip_test([0.5]) == (1.0, True)  # one case: both signs are as extreme


def test_bootstrap_interval_agrees_with_scipys_percentile_bootstrap() -> None:
    rng = random.Random(5)
    values = [rng.choice([-1, -1 / 3, 0, 0, 1 / 3]) for _ in range(80)]
    low, high = bootstrap_mean_interval(values, 0.95, seed=9)
    reference = bootstrap(
        (np.asarray(values),),
        lambda x, axis: np.mean(x, axis=axis),
        vectorized=True,
        n_resamples=20_000,
        confidence_level=0.95,
        method="percentile",
        rng=np.random.default_rng(1),
    ).confidence_interval
    # independent resamples: the endpoints agree up to Monte Carlo error (sd ~ 0.004)
    assert low == pytest.approx(reference.low, abs=0.015)
    assert high == pytest.approx(reference.high, abs=0.015)
    assert low <= float(np.mean(values)) <= high
    assert bootstrap_mean_interval(values, 0.95, seed=9) == (low, high)  # seeded
    assert bootstrap_mean_interval([0.5] * 10, 0.95) == (0.5, 0.5)


def test_significance_uses_mcnemar_without_repeats_and_resampling_with() -> None:
    t = table(20, 12, 1, 7)
    plain = significance(t, 0.05)
    assert plain.decision_test == MCNEMAR
    assert plain.decision_p_value == plain.p_value == mcnemar_exact(12, 1)
    assert plain.significant
    assert plain.ci_high_points < 0

    fractions = [(1.0, 1.0)] * 20 + [(1.0, 1 / 3)] * 12 + [(1 / 3, 2 / 3)] + [(0.0, 0.0)] * 7
    repeated = significance(t, 0.05, fractions)
    assert repeated.decision_test == SIGN_FLIP
    assert repeated.resampling is not None
    assert repeated.decision_p_value == repeated.resampling.p_value
    assert repeated.resampling.mean_delta_points == pytest.approx(
        100 * (12 * (1 / 3 - 1) + (2 / 3 - 1 / 3)) / 40, abs=1e-4
    )
    assert repeated.significant


def test_significance_of_an_empty_table_is_undefined_not_an_error() -> None:
    empty = significance(PairedCounts(), 0.05)
    assert empty.p_value is None and empty.ci_low_points is None and not empty.significant
