"""Suites of a noisy model through the PR flow's own rules, in memory: each case of a suite
passes on a side with its own probability, drawn from a seeded generator. The rounds are the
flow's (`gate.flow.adaptive`), the comparison is `gate compare`'s at the suite's share of the
PR's false-block rate, and the split over the suites is the flow's (Holm); only the `gate run`
processes are replaced by appending drawn attempts to the reports in memory, as
`gate run --append` would. Shared by the trust tests and `benchmarks/suites_sim.py`."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.droptest import split_levels
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.flow.adaptive import auto_record, start
from gate.inputs.policy import Policy
from gate.report.models import Attempt, CaseResult, Report, RunMeta
from gate.report.plan import AutoRecord, Plan
from gate.run.spec import auto_plan

Probabilities = list[float]
Suite = tuple[Probabilities, Probabilities]  # (base, head)


def _issue(n: int) -> tuple[Probabilities, Probabilities]:
    base = [0.97] * (7 * n // 10) + [0.5] * (2 * n // 10) + [0.05] * (n // 10)
    return base, [0.5] * (n // 10) + base[n // 10 :]


def scenarios() -> dict[str, tuple[list[Suite], list[Suite]]]:
    """Each scenario's suites for a no-op PR and for the PR with the real drop."""
    small, small_drop = _issue(100)
    large, large_drop = _issue(200)
    steady = [1.0] * 200 + [0.0] * 40 + [0.85] * 45 + [0.3] * 15
    steady_drop = steady[:240] + [0.35] * 30 + [0.85] * 15 + [0.3] * 15
    return {
        "4x100": ([(small, small)] * 4, [(small, small_drop)] + [(small, small)] * 3),
        "issue": ([(large, large)], [(large, large_drop)]),
        "steady": ([(steady, steady)], [(steady, steady_drop)]),
    }


_PASS = Attempt(repeat=0, status="pass")
_FAIL = Attempt(repeat=0, status="fail")


def _attempt(repeat: int, passed: bool) -> Attempt:
    return (_PASS if passed else _FAIL).model_copy(update={"repeat": repeat})


@dataclass
class Side:
    """One side of one suite: its cases' probabilities and the runs drawn so far, as the
    report `gate run` would have written (its results updated in place, as `--append`)."""

    label: str
    probabilities: Probabilities
    rng: random.Random
    plan: Plan

    def __post_init__(self) -> None:
        meta = RunMeta(label=self.label, suite="noisy", auto=AutoRecord(plan=self.plan))
        results = [
            CaseResult(id=f"c{i:03d}", task="noisy", status="fail", passed=False, index=i)
            for i in range(len(self.probabilities))
        ]
        self.report = Report(meta=meta, results=results, path=Path(f"{self.label}.jsonl"))
        self.by_id = {r.id: r for r in results}

    def draw(self, ids: Sequence[str], repeats: int) -> None:
        for i in ids:
            result, p = self.by_id[i], self.probabilities[int(i[1:])]
            start = len(result.attempts)
            result.attempts += [_attempt(start + k, self.rng.random() < p) for k in range(repeats)]
            passes = sum(a.status == "pass" for a in result.attempts)
            result.repeats = len(result.attempts)
            result.pass_fraction = passes / result.repeats
            result.passed = 2 * passes > result.repeats
            result.status = "pass" if result.passed else "fail"
            result.flaky = 0 < passes < result.repeats


def run_suite(policy: Policy, level: float, suite: Suite, rng: random.Random) -> Comparison:
    """One suite of one PR: round 0, the flow's rounds, the comparison at `level`."""
    plan = auto_plan(policy)
    sides = [Side("base", suite[0], rng, plan), Side("head", suite[1], rng, plan)]
    for side in sides:
        side.draw(list(side.by_id), plan.first)
    base, head = (side.report for side in sides)
    state = start(policy, level, base, head)
    while True:
        ids, size = state.next(base, head)
        if not ids:
            break
        for side in sides:
            side.draw(ids, size)
        state.rounds += 1
    for report in (base, head):
        report.meta = report.meta.model_copy(
            update={"auto": auto_record(state, base, head, report)}
        )
        for result in report.results:
            result.auto_end = "flow" if result.id in state.active else "rule"
    return compare(base, head, policy, level)


def run_pr(policy: Policy, suites: list[Suite], rng: random.Random) -> list[Comparison]:
    """One PR: every suite at its Bonferroni share, then Holm's steps (as the flow does)."""
    level = policy.false_block_rate / len(suites)
    judged = [run_suite(policy, level, suite, rng) for suite in suites]
    # a raised level changes only the drop test's verdict: judged again from the same data
    tests = [(c.drop_test, c.delta_points) for c in judged]
    for index, raised in split_levels(tests, policy.false_block_rate, policy.threshold).items():
        if raised > level and judged[index].verdict != "fail" and judged[index].drop_test:
            judged[index] = _at_level(judged[index], raised)
    return judged


def _at_level(comparison: Comparison, level: float) -> Comparison:
    drop = comparison.drop_test
    assert drop is not None
    significant = drop.at(level).significant
    verdict = "fail" if significant and comparison.verdict in ("pass", "inconclusive") else None
    return comparison.model_copy(update={"verdict": verdict or comparison.verdict})
