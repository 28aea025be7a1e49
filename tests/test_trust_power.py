"""The power line: one case's weight and the drop the fail rule catches 9 times in 10 at the
suite's level (checked against scipy and by seeded simulation of the rule), and the plain note
when the suite cannot enforce its threshold."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from helpers.reports import case, repeated, write_report
from scipy import stats as scipy_stats

from gate.compare.estimates import delta_estimate, plain_moments
from gate.compare.pairing import compare
from gate.compare.power import resolution
from gate.compare.sequential import detectable
from gate.inputs.policy import Policy
from gate.render import RenderContext, render_comment
from gate.render.reasons import worded
from gate.report.io import read_report


@pytest.mark.parametrize("se,level", [(1.0, 0.02), (1.5, 0.005), (0.5, 0.05)])
def test_the_detectable_drop_is_caught_90_percent_of_the_time_by_scipy(
    se: float, level: float
) -> None:
    """The fail rule at standard error se: the estimate below −3 and below the test's bar
    z(1 − level) · se; the detectable drop is caught with probability .9 (scipy's normal)."""
    drop = detectable(se, 3.0, level)
    bar = max(3.0, scipy_stats.norm.ppf(1 - level) * se)
    assert scipy_stats.norm.cdf((drop - bar) / se) == pytest.approx(0.9, abs=1e-9)


def test_the_detectable_drop_is_caught_9_times_in_10_by_simulation() -> None:
    """Seeded simulation against known truth: 200 cases of 3 runs a side, 60 of them at p = .5
    (the rest .95); the true drop is the detectable one computed from one pilot sample; the
    fail rule (estimate below −3 and the one-sided t-test at .02) catches it about 90%."""
    rng = random.Random(3)
    n, runs, level = 200, 3, 0.02

    def sample(drop: float) -> list:
        pairs = []
        for i in range(n):
            p = 0.5 if i < 60 else 0.95
            q = max(0.0, p - drop) if i < 60 else p
            b = sum(rng.random() < p for _ in range(runs))
            h = sum(rng.random() < q for _ in range(runs))
            pairs.append((plain_moments(b, runs), plain_moments(h, runs)))
        return pairs

    pilot = delta_estimate(sample(0.0))
    assert pilot is not None
    power = resolution(pilot, [0.0] * n, runs_per_case=runs, threshold=3.0, level=level)
    assert power is not None
    per_noisy_case = power.detectable_points / 100 * n / 60
    caught, trials = 0, 400
    for _ in range(trials):
        estimate = delta_estimate(sample(per_noisy_case))
        assert estimate is not None
        p = scipy_stats.t.cdf(estimate.delta_points / estimate.se_points, estimate.df)
        caught += estimate.delta_points < -3 and p <= level
    assert 0.85 < caught / trials < 0.95


def test_an_11_case_suite_cannot_enforce_3_points(tmp_path: Path) -> None:
    base = write_report(tmp_path, "b", [case(f"c{i}", "pass") for i in range(11)])
    head = write_report(tmp_path, "h", [case(f"c{i}", "pass") for i in range(11)])
    c = worded(compare(read_report(base), read_report(head), Policy.from_config()))
    assert c.verdict == "pass" and c.power is not None
    assert c.power.case_weight_points == pytest.approx(100 / 11)
    assert c.power.detectable_points > 100 / 11
    # a property of the suite: said in Statistics; among the notes only where it decides
    assert any("cannot enforce a 3-point threshold" in note for note in c.resolution)
    assert any("one case is 9.1 points" in note for note in c.resolution)
    assert not any("enforce" in note for note in c.notes)
    markdown = render_comment(c, RenderContext())
    assert "Resolution:" in markdown and "one case is 9.1 pts" in markdown
    assert "catches a drop of" in markdown


def test_a_large_suite_has_no_note_and_a_small_one_is_told(tmp_path: Path) -> None:
    rows = [
        repeated(f"c{i}", ["pass", "fail"] if i % 7 == 0 else ["pass"] * 2) for i in range(2000)
    ]
    base, head = (
        write_report(tmp_path, "b", rows, repeats=2),
        write_report(tmp_path, "h", rows, repeats=2),
    )
    c = worded(compare(read_report(base), read_report(head), Policy.from_config()))
    assert c.power is not None and c.power.detectable_points < 4.5
    assert c.power.se_points == pytest.approx(
        100 * math.sqrt((2000 // 7 + 1) * 2 * 0.25) / 2000, rel=1e-6
    )  # each flaky case: 1/2 on each side, whose variance estimate is (1/2)(1/2) / (2 - 1)
    said = c.notes + c.resolution
    assert not any("catches only" in note or "enforce" in note for note in said)
    few = rows[:300]
    base, head = (
        write_report(tmp_path, "b2", few, repeats=2),
        write_report(tmp_path, "h2", few, repeats=2),
    )
    small = worded(compare(read_report(base), read_report(head), Policy.from_config()))
    assert small.power is not None and small.power.detectable_points > 4.5
    # fixed repeats fail on the threshold alone: the note is of the false blocks noise makes
    noise = scipy_stats.norm.cdf(-3 / small.power.se_points)
    assert noise > 0.02
    said = small.resolution  # a pass: in Statistics, not among the notes
    assert any(f"in about {100 * noise:.3g}% of PRs that change nothing" in n for n in said)
    tested = compare(read_report(base), read_report(head), Policy(require_significance=True))
    assert any("catches only drops of" in note for note in worded(tested).resolution)
