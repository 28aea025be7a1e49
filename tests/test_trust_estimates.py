"""Repeats: the pass rate is the mean of per-case pass fractions, and under `repeats: auto` the
per-case estimate stays unbiased although runs were allocated by the outcomes (checked exactly,
by enumeration, and by seeded simulation against the true probabilities)."""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest
from helpers.reports import case, repeated, write_report

from gate.compare.estimates import rao_blackwell
from gate.compare.pairing import compare
from gate.inputs.policy import Policy
from gate.report.io import read_report
from gate.report.plan import AutoRecord, Plan, boundaries, continues, spread


def _rows(rng: random.Random, probs: list[float], repeats: int) -> list[dict]:
    rows = []
    for i, p in enumerate(probs):
        outcomes = ["pass" if rng.random() < p else "fail" for _ in range(repeats)]
        rows.append(repeated(f"c{i}", outcomes) if repeats > 1 else case(f"c{i}", outcomes[0]))
    return rows


def test_mean_of_fractions_is_unbiased_where_majorities_are_not(tmp_path: Path) -> None:
    """40 cases at p = .7 on base and .4 on head: a true drop of 30 points. The majority of 3
    runs passes with probability .784 and .352: a drop of 43 points, which repeats hide."""
    rng = random.Random(7)
    deltas, majority = [], []
    for trial in range(40):
        base = write_report(tmp_path, f"b{trial}", _rows(rng, [0.7] * 40, 3), repeats=3)
        head = write_report(tmp_path, f"h{trial}", _rows(rng, [0.4] * 40, 3), repeats=3)
        c = compare(read_report(base, fold_attempts=True), read_report(head), Policy())
        assert c.delta_points is not None and c.statistics is not None
        deltas.append(c.delta_points)
        counts = c.statistics.counts
        majority.append(100 * (counts.head_passed - counts.base_passed) / counts.n)
    mean = sum(deltas) / len(deltas)
    spread = (sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1)) ** 0.5
    standard_error = spread / len(deltas) ** 0.5
    assert abs(mean - -30.0) < 3 * standard_error + 0.5
    assert sum(majority) / len(majority) < -38  # what the majority outcomes would have said


def test_repeats_1_keeps_the_pass_rate_of_outcomes(tmp_path: Path) -> None:
    base = write_report(tmp_path, "b", [case(f"c{i}", "pass") for i in range(10)])
    head_rows = [case(f"c{i}", "fail" if i < 2 else "pass") for i in range(10)]
    head = write_report(tmp_path, "h", head_rows)
    c = compare(read_report(base), read_report(head), Policy())
    assert (c.base_pass_rate, c.head_pass_rate, c.delta_points) == (100.0, 80.0, -20.0)
    assert c.regressions == ["c0", "c1"]
    assert c.statistics is not None and c.statistics.ci_method.startswith("Newcombe")


def test_regressions_with_repeats_are_fractions_that_fell_by_half(tmp_path: Path) -> None:
    base = [repeated("fell", ["pass"] * 3), repeated("slipped", ["pass", "pass", "fail"])]
    head = [
        repeated("fell", ["pass", "fail", "fail"]),
        repeated("slipped", ["pass", "fail", "fail"]),
    ]
    base += [repeated("rose", ["fail", "fail", "pass"])]
    head += [repeated("rose", ["pass", "pass", "pass"])]
    c = compare(
        read_report(write_report(tmp_path, "b", base, repeats=3)),
        read_report(write_report(tmp_path, "h", head, repeats=3)),
        Policy(),
    )
    assert c.regressions == ["fell"] and c.fixes == ["rose"]
    assert "slipped" in c.flaky and "slipped" not in c.regressions  # 2/3 -> 1/3 is noise
    fell = c.cases["fell"]
    assert fell.base is not None and fell.head is not None
    assert (fell.base.passes, fell.base.repeats, fell.head.passes) == (3, 3, 1)
    expected = 100 * ((1 / 3 - 1) + (1 / 3 - 2 / 3) + (1 - 1 / 3)) / 3
    assert c.delta_points == pytest.approx(expected, abs=0.01)


def _run_plan(
    plan: Plan, base: tuple[bool, ...], head: tuple[bool, ...], end: int, targets: list
) -> tuple:
    """Where a case ends under `plan` when the flow stops after round `end` (or earlier, when
    no case continues): its runs and whether its own rule stopped it."""
    marks = boundaries(plan, plan.max_repeats)
    for j, runs in enumerate(marks):
        last = j == len(marks) - 1
        target = targets[j] if j < len(targets) else None
        if not continues(plan, sum(base[:runs]), sum(head[:runs]), runs, j, target) or last:
            return runs, True
        if j == end:
            return runs, False
    raise AssertionError


def _moments(plan: Plan, own: list, other: list, by_rule: bool, targets: list) -> tuple:
    m = rao_blackwell(plan, own, other, stopped_by_rule=by_rule, targets=targets)
    return m.mean, m.variance


PLANS = [
    (Plan(first=2, uniform=1, step=2, max_repeats=7, minority=0.2), []),
    # the spread rule with a target per round (as the flow records them), one run a round
    (Plan(rule="spread", first=2, uniform=1, step=1, max_repeats=7), [None, 9.0, 14.0, 7.5, 20.0]),
]


@pytest.mark.parametrize("plan,targets", PLANS, ids=["minority", "spread"])
@pytest.mark.parametrize("end", [0, 1, 2, 99])
@pytest.mark.parametrize("p_base,p_head", [(0.97, 0.97), (0.97, 0.5), (0.5, 0.5), (0.05, 0.3)])
def test_adaptive_estimate_is_exactly_unbiased(
    plan: Plan, targets: list, end: int, p_base: float, p_head: float
) -> None:
    """Every outcome sequence enumerated with its probability: E[estimate] = p, exactly, for a
    plan that spends runs on uncertain cases, and E[variance estimate] = Var(estimate), exactly
    (the drop test's standard error is their sum); the plain fraction of the same runs is
    biased."""
    n = plan.max_repeats
    mean, square, variance, naive = [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]
    for base in itertools.product((True, False), repeat=n):
        weight_b = p_base ** sum(base) * (1 - p_base) ** (n - sum(base))
        for head in itertools.product((True, False), repeat=n):
            weight = weight_b * p_head ** sum(head) * (1 - p_head) ** (n - sum(head))
            runs, by_rule = _run_plan(plan, base, head, end, targets)
            b, h = list(base[:runs]), list(head[:runs])
            for side, (own, other) in enumerate(((b, h), (h, b))):
                estimate, var = _moments(plan, own, other, by_rule, targets)
                mean[side] += weight * estimate
                square[side] += weight * estimate * estimate
                variance[side] += weight * var
                naive[side] += weight * sum(own) / runs
    assert mean == pytest.approx([p_base, p_head], abs=1e-9)
    true_variance = [square[i] - mean[i] ** 2 for i in range(2)]
    assert variance == pytest.approx(true_variance, abs=1e-9)
    biased = {"minority": (2, 0.005), "spread": (99, 0.003)}[plan.rule]
    if end >= biased[0] and (p_base, p_head) == (0.97, 0.5):  # rounds that choose
        assert max(abs(naive[0] - p_base), abs(naive[1] - p_head)) > biased[1]


def test_adaptive_estimate_follows_the_plan() -> None:
    plan = Plan(first=2, uniform=0, step=2, max_repeats=6, minority=0.1)
    # a case extended only because its first two runs held a failure: 5 of 6 passes
    runs = [False, True, True, True, True, True]
    estimate = rao_blackwell(plan, runs, [True] * 6, stopped_by_rule=False)
    assert estimate.mean == pytest.approx(0.5)
    assert rao_blackwell(plan, [True, True], [True, True], stopped_by_rule=True).mean == 1.0
    with pytest.raises(ValueError, match="would have continued"):
        rao_blackwell(plan, [True, False], [True, False], stopped_by_rule=True)
    with pytest.raises(ValueError, match="do not end a round"):
        rao_blackwell(plan, [True] * 3, [True] * 3, stopped_by_rule=False)


def test_the_spread_rule_runs_cases_in_proportion_to_their_spread() -> None:
    """Under a target of 10, a case that always passed stops where its spread (shrunk by the
    prior) allows, a mixed one goes on: the calls go to the cases whose runs disagree."""
    plan = Plan(rule="spread", step=1, max_repeats=30)
    assert spread(plan, 3, 3, 3) == pytest.approx(0.246, abs=1e-3)
    assert spread(plan, 1, 1, 2) == pytest.approx(0.707, abs=1e-3)
    assert continues(plan, 3, 3, 3, 1, 10.0) is False  # 3 runs >= 10 x 0.25
    assert continues(plan, 2, 1, 3, 1, 10.0) is True  # mixed: 10 x 0.62 = 6.2 runs
    assert continues(plan, 5, 3, 7, 1, 10.0) is False  # ... until it has them
    assert continues(plan, 3, 3, 3, 0, 10.0) is True  # round 1 is uniform: every case runs
    assert continues(plan, 1, 1, 30, 5, 1e6) is False  # max_repeats


def test_auto_counts_an_errored_run_as_not_passed_also_in_round_0(tmp_path: Path) -> None:
    """Under repeats: auto the rounds' interval counts an errored run as not passed; the
    comparison must too, also for the cases that got no run beyond round 0 (the flow stopped
    as clear), or its delta is not the one the flow stopped on."""
    plan = Plan()
    base_rows = [repeated("e", ["pass", "error"]), repeated("x", ["pass", "pass"])]
    head_rows = [repeated("e", ["pass", "pass"]), repeated("x", ["pass", "pass"])]
    reports = []
    for label, rows in (("b", base_rows), ("h", head_rows)):
        report = read_report(write_report(tmp_path, label, rows, repeats=2))
        report.meta = report.meta.model_copy(update={"auto": AutoRecord(plan=plan)})
        reports.append(report)
    c = compare(reports[0], reports[1], Policy())
    flow = rao_blackwell(plan, [True, False], [True, True], stopped_by_rule=False).mean
    assert c.base_pass_rate == pytest.approx(100 * (flow + 1) / 2) == pytest.approx(75.0)
    assert c.delta_points == pytest.approx(25.0)
