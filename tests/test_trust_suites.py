"""The PR's false-block rate, split over its suites: Holm's procedure (against a textbook
step-down and hand-checked examples), the drop test's spending over the looks (against scipy
and Monte Carlo), Student's t (against scipy), and seeded simulations against known truth:
no-op PRs of several suites are blocked at most at the PR's rate, however many suites, where
each suite at the whole rate blocks far more of them."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from helpers.noisy_suites import run_pr, run_suite
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as scipy_stats

from gate.compare.droptest import fixed_test, sequential_test, split_levels
from gate.compare.estimates import delta_estimate, plain_moments
from gate.compare.sequential import boundaries, design_se, holm
from gate.compare.stats import PairedCounts, mcnemar_drop
from gate.compare.tdist import t_cdf, t_quantile
from gate.inputs.policy import Policy
from gate.render.reasons import worded
from gate.report.plan import Look


def _textbook_holm(p_values: list[float], alpha: float) -> set[int]:
    """Holm (1979): sort the p-values; reject the i-th smallest while p(i) <= alpha/(m-i+1)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected: set[int] = set()
    for rank, index in enumerate(order):
        if p_values[index] > alpha / (len(p_values) - rank):
            break
        rejected.add(index)
    return rejected


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=8), st.sampled_from([0.02, 0.05, 0.1]))
@settings(max_examples=300, deadline=None)
def test_holm_is_the_textbook_step_down(p_values: list[float], alpha: float) -> None:
    tests = [lambda level, p=p: p <= level for p in p_values]
    assert set(holm(tests, alpha)) == _textbook_holm(p_values, alpha)


def test_holm_by_hand() -> None:
    """Four suites at a 2% rate: 0.004 <= 0.02/4 is rejected at 0.005; then 0.0066 <= 0.02/3;
    then 0.012 > 0.02/2 stops, so 0.012 and 0.5 stand (Bonferroni would stop at the first)."""
    p = [0.012, 0.004, 0.5, 0.0066]
    levels = holm([lambda level, q=q: q <= level for q in p], 0.02)
    assert levels == {1: 0.005, 3: pytest.approx(0.02 / 3)}
    suites = [
        (fixed_test(None, PairedCounts(regressed=r, fixed=0, both_pass=90), 3.0, 0.005), -9.0)
        for r in (3, 9, 0)
    ]  # McNemar: 9 regressions and no fix is p = 0.002; 3 is 0.125; none is 1
    assert split_levels(suites, 0.02, 3.0) == {1: pytest.approx(0.02 / 3)}
    assert split_levels([(suites[1][0], -2.0)], 0.02, 3.0) == {}  # within the threshold


@pytest.mark.parametrize("level", [0.001, 0.005, 0.02, 0.3])
def test_one_look_is_the_fixed_test(level: float) -> None:
    assert boundaries([1.0], level)[0] == pytest.approx(scipy_stats.norm.isf(level), abs=1e-9)


@pytest.mark.parametrize("infos", [[0.2, 0.4, 0.6, 0.8, 1.0], [0.13, 0.21, 0.3, 0.55, 1.0]])
@pytest.mark.parametrize("alpha", [0.005, 0.05])
def test_the_looks_cross_their_boundaries_with_the_level_by_monte_carlo(
    infos: list[float], alpha: float
) -> None:
    """Brownian motion at the looks' information fractions (the looks' statistics under no
    change, numpy, seeded): the chance of crossing any boundary is the level spent in all."""
    rng = np.random.default_rng(7)
    t = np.array(infos)
    steps = rng.normal(size=(400_000, len(t))) * np.sqrt(np.diff(np.r_[0.0, t]))
    z = steps.cumsum(axis=1) / np.sqrt(t)
    crossed = (z < -np.array(boundaries(infos, alpha))).any(axis=1).mean()
    assert crossed == pytest.approx(alpha, rel=0.06 if alpha < 0.01 else 0.02)


def test_published_boundaries_of_the_linear_spending_function() -> None:
    """Kim & DeMets' α·t at one-sided .025, five equal looks (Jennison & Turnbull 2000,
    table 7.6 gives 2.576, 2.493, 2.412, 2.340, 2.276 for this family; tolerance of the grid)."""
    expected = [2.576, 2.493, 2.412, 2.340, 2.276]
    assert boundaries([0.2, 0.4, 0.6, 0.8, 1.0], 0.025) == pytest.approx(expected, abs=3e-3)


@pytest.mark.parametrize("df", [1, 2.5, 7, 30, 200])
@pytest.mark.parametrize("x", [-6.0, -2.6, -1.0, 0.4, 3.0])
def test_student_t_by_scipy(df: float, x: float) -> None:
    assert t_cdf(x, df) == pytest.approx(scipy_stats.t.cdf(x, df), rel=1e-8, abs=1e-12)
    p = scipy_stats.t.cdf(x, df)
    assert t_quantile(p, df) == pytest.approx(x, abs=1e-7)


def test_the_design_precision_catches_its_drop_9_times_in_10() -> None:
    """At the design's standard error a drop of `detect` points is past the threshold and past
    the last boundary of a five-look design 90% of the time (normal, scipy)."""
    for level in (0.005, 0.02):
        se = design_se(3.0, 4.5, level)
        bar = max(3.0, boundaries([0.2, 0.4, 0.6, 0.8, 1.0], level)[-1] * se)
        assert scipy_stats.norm.cdf((4.5 - bar) / se) == pytest.approx(0.9, abs=1e-9)


def test_a_sequential_test_fails_at_the_look_that_crosses_and_holm_may_raise_it() -> None:
    looks = [
        Look(round=0, info=0.2, delta_points=-6.0, se_points=2.6, df=80),
        Look(round=1, info=0.45, delta_points=-5.2, se_points=1.7, df=90),
    ]
    at_half_percent = sequential_test(looks, 3.0, 0.005)
    assert not at_half_percent.significant and at_half_percent.looks == looks
    raised = at_half_percent.at(0.02)  # Holm's next step: the suite's share grew to 2%
    assert raised.significant and raised.level == 0.02
    assert raised.p_value == pytest.approx(scipy_stats.t.cdf(-5.2 / 1.7, 90), rel=1e-6)
    within = [
        Look(round=0, info=0.2, delta_points=-2.9, se_points=0.3, df=80),
        Look(round=1, info=0.45, delta_points=-2.5, se_points=0.5, df=90),
    ]
    assert not sequential_test(within, 3.0, 0.3).significant  # never past the threshold


def _noop_fixed_suite(rng: random.Random, n: int, runs: int) -> tuple:
    """A no-op suite of fixed repeats: every case at its own p on both sides."""
    pairs = []
    for i in range(n):
        p = (0.5, 0.9, 0.97, 1.0)[i % 4]
        b = sum(rng.random() < p for _ in range(runs))
        h = sum(rng.random() < p for _ in range(runs))
        pairs.append((plain_moments(b, runs), plain_moments(h, runs)))
    estimate = delta_estimate(pairs)
    assert estimate is not None
    return estimate, PairedCounts()


@pytest.mark.parametrize("suites", [1, 2, 4])
def test_no_op_prs_are_blocked_at_most_at_the_pr_rate_however_many_suites(suites: int) -> None:
    """Seeded simulation against known truth (every PR changed nothing): at a 10% PR rate,
    Holm's split keeps the share of PRs whose threshold rule blocks within 10% for 1, 2 and 4
    suites (threshold 0, so the drop test alone decides); each suite at the whole 10% blocks
    about 1 − 0.9^4 = 34% of 4-suite PRs."""
    rng = random.Random(11)
    rate, prs = 0.1, 1500
    split = whole = 0
    for _ in range(prs):
        tests = []
        for _ in range(suites):
            estimate, counts = _noop_fixed_suite(rng, 60, 3)
            tests.append((fixed_test(estimate, counts, 0.0, rate / suites), estimate.delta_points))
        split += bool(split_levels(tests, rate, 0.0))
        whole += any(drop.at(rate).significant and delta < 0 for drop, delta in tests)
    sigma = math.sqrt(rate * (1 - rate) / prs)
    assert split / prs <= rate + 2.5 * sigma
    if suites == 4:
        assert whole / prs == pytest.approx(1 - (1 - rate) ** 4, abs=0.05)
        assert whole / prs > 2.5 * split / prs


@pytest.mark.parametrize("suites", [1, 2, 4])
def test_the_rounds_keep_the_pr_rate_however_many_suites(suites: int) -> None:
    """Seeded simulation of the flow's own rounds (`helpers.noisy_suites`: `repeats: auto`,
    the drop test's looks, Holm over the suites) on no-op PRs of 1, 2 and 4 suites of 30 noisy
    cases, at a 20% rate so that blocks are frequent enough to count: at most 20% of them are
    blocked."""
    policy = Policy.from_config(None, threshold=0.0)
    policy = policy.model_copy(update={"false_block_rate": 0.2, "max_calls_per_case": 6})
    rng = random.Random(5)
    probabilities = [0.5] * 8 + [0.9] * 8 + [0.97] * 14
    suite = (probabilities, probabilities)
    prs, blocked = 120, 0
    for _ in range(prs):
        judged = run_pr(policy, [suite] * suites, rng)
        blocked += any(c.verdict == "fail" for c in judged)
    assert blocked / prs <= 0.2 + 2.5 * math.sqrt(0.2 * 0.8 / prs)


@pytest.mark.parametrize(
    ("regressed", "fixed"), [(0, 0), (1, 0), (3, 1), (9, 0), (12, 7), (40, 25)]
)
def test_the_one_sided_mcnemar_test_is_scipys_binomial_test(regressed: int, fixed: int) -> None:
    """One run per case: the drop test is the exact one-sided test of the regressions among
    the discordant pairs against a fair coin (scipy's binomtest, alternative 'greater')."""
    n = regressed + fixed
    expected = scipy_stats.binomtest(regressed, n, 0.5, alternative="greater").pvalue if n else 1.0
    assert mcnemar_drop(regressed, fixed) == pytest.approx(expected, rel=1e-9)


def test_an_undecided_suite_is_inconclusive_and_says_what_would_decide_it() -> None:
    """Seeded runs of the flow's rounds on a suite whose head lost 5 easy cases to p = .5,
    with a budget of 4 paid calls per case: the rounds end at the budget undecided, and the
    verdict is inconclusive (exit 0 under the default policy, 1 under `inconclusive: block`)
    with the estimate, its interval and the runs that would decide it."""
    base = [0.97] * 70 + [0.5] * 20 + [0.05] * 10
    head = [0.5] * 5 + base[5:]
    policy = Policy(threshold=3).model_copy(update={"max_calls_per_case": 4})
    straddles = run_suite(policy, 0.02, (base, head), random.Random(3))
    assert straddles.verdict == "inconclusive" and straddles.exit_code == 0
    assert straddles.head_meta is not None and straddles.head_meta.auto is not None
    assert straddles.head_meta.auto.stop == "budget"
    (finding,) = [f for f in straddles.findings if f.outcome == "inconclusive"]
    assert finding.kind == "inconclusive" and finding.why == "budget"
    assert finding.ci_low_points < -3 < finding.ci_high_points
    said = worded(straddles).reasons[0]
    assert said.startswith("inconclusive: repeats: auto spent its budget before this suite")
    assert f"about {finding.more_runs:,} more runs on each side, over the {finding.cases}" in said
    past = run_suite(policy, 0.02, (base, head), random.Random(0))
    assert past.verdict == "inconclusive" and past.delta_points < -3
    assert "but the drop is not significant against no change" in worded(past).reasons[0]
    blocking = policy.model_copy(update={"inconclusive": "block"})
    assert run_suite(blocking, 0.02, (base, head), random.Random(3)).exit_code == 1
