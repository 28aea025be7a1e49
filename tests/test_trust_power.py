"""The power line: one case's weight and the smallest drop a suite would catch with 80% power
(checked against scipy and by seeded simulation), and the plain note when the threshold is
finer than that."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from helpers.reports import case, write_report
from scipy import stats as scipy_stats

from gate.compare.pairing import compare
from gate.compare.power import mde_points, resolution
from gate.inputs.policy import Policy
from gate.render import RenderContext, render_comment
from gate.render.reasons import worded
from gate.report.io import read_report


def test_mde_has_80_percent_power_by_scipy() -> None:
    n, sd, alpha = 200, 0.3, 0.05
    mde = mde_points(n, sd, alpha) / 100
    se = sd / math.sqrt(n)
    z = scipy_stats.norm.ppf(1 - alpha / 2)
    power = scipy_stats.norm.cdf(mde / se - z) + scipy_stats.norm.cdf(-mde / se - z)
    assert power == pytest.approx(0.8, abs=1e-3)


def test_a_drop_of_the_mde_is_caught_80_percent_of_the_time() -> None:
    """Seeded simulation: 200 cases, per-case differences of fractions of 3 runs; the true drop
    is the MDE computed from one pilot sample; a paired z-test at .05 catches it ~80%."""
    rng = random.Random(3)
    n, runs = 200, 3

    def sample(drop: float) -> list[float]:
        out = []
        for i in range(n):
            p = 0.5 if i < 60 else 0.95
            q = max(0.0, p - drop) if i < 60 else p
            b = sum(rng.random() < p for _ in range(runs)) / runs
            h = sum(rng.random() < q for _ in range(runs)) / runs
            out.append(h - b)
        return out

    pilot = resolution(sample(0.0), 0.05, runs)
    assert pilot is not None
    drop_per_noisy_case = pilot.mde_points / 100 * n / 60
    caught = 0
    trials = 400
    for _ in range(trials):
        d = sample(drop_per_noisy_case)
        mean = sum(d) / n
        se = (sum((x - mean) ** 2 for x in d) / (n - 1) / n) ** 0.5
        caught += mean / se < -1.959964
    assert 0.7 < caught / trials < 0.9


def test_an_11_case_suite_cannot_enforce_3_points(tmp_path: Path) -> None:
    base = write_report(tmp_path, "b", [case(f"c{i}", "pass") for i in range(11)])
    head = write_report(tmp_path, "h", [case(f"c{i}", "pass") for i in range(11)])
    c = worded(compare(read_report(base), read_report(head), Policy(threshold=3)))
    assert c.verdict == "pass" and c.power is not None
    assert c.power.case_weight_points == pytest.approx(100 / 11)
    assert c.power.mde_points > 100 / 11
    assert any("cannot enforce a 3-point threshold" in note for note in c.notes)
    assert any("one case is 9.1 points" in note for note in c.notes)
    markdown = render_comment(c, RenderContext())
    assert "Resolution:" in markdown and "one case is 9.1 pts" in markdown


def test_a_large_suite_has_no_note_and_a_fine_one_is_told(tmp_path: Path) -> None:
    rows = [case(f"c{i}", "pass" if i % 7 else "fail") for i in range(2000)]
    flipped = [case(f"c{i}", "fail" if i % 13 == 0 else "pass") for i in range(2000)]
    base, head = write_report(tmp_path, "b", rows), write_report(tmp_path, "h", flipped)
    c = worded(compare(read_report(base), read_report(head), Policy(threshold=3)))
    assert c.power is not None and c.power.mde_points < 3
    assert not any("resolve" in note or "enforce" in note for note in c.notes)
    fine = worded(compare(read_report(base), read_report(head), Policy(threshold=0.5)))
    assert any("below what this suite can resolve" in note for note in fine.notes)
