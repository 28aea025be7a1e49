"""Judging what the sides of a suite left: their reports compared, or why they cannot be.

Never a pass on nothing: a side that could not run (either side) makes the verdict `error`
with its reason; a head whose configuration is broken is the user's to fix (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gate.compare.droptest import split_levels
from gate.compare.findings import Finding, NoBaseResults, SideFailed
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.flow.plan import FlowPlan, SuitePlan
from gate.flow.sides import SideStatus
from gate.inputs.policy import Policy
from gate.report.models import Report


@dataclass(frozen=True)
class SuiteRun:
    """What the sides of a suite left: how each run ended (one per side, or per side and
    shard) and each side's whole report; what the PR changes in the instrument and
    what the head's would say (`gate.flow.instrument`, `gate.flow.rejudge`); or why the base
    cannot measure (`problem`: nothing ran)."""

    statuses: tuple[SideStatus, ...]
    reports: dict[str, Report]
    instrument: tuple[Finding, ...] = ()
    head_instrument: Finding | None = None
    rejudged: tuple[SideStatus, ...] = ()  # how re-judging with the head's instrument ended
    problem: Finding | None = None


def failed_comparison(statuses: Sequence[SideStatus], suite: str) -> Comparison | None:
    """The error verdict when a side failed for good; None when a comparison can be made."""
    head_input = next((s for s in statuses if s.side == "head" and s.input_error), None)
    if head_input is not None:  # the head's configuration is the user's to fix
        raise InputError(head_input.error or "the head's configuration cannot run")
    failed = [s for s in statuses if s.fatal]
    if not failed:
        return None
    # the side that failed on its own (an exit of its own), not one the gate then stopped
    own = [s for s in failed if not s.stopped]
    first = [s for s in own if s.returncode and s.returncode > 0] or own or failed
    findings: list[Finding] = [
        SideFailed(side=s.side, shard=s.shard, exit_code=s.returncode, error=s.error) for s in first
    ]
    if any(s.side == "base" for s in first):
        findings.append(NoBaseResults())
    return Comparison(verdict="error", findings=findings, suite=suite)


def judge(
    run: SuiteRun,
    suite: str,
    policy: Policy,
    *,
    baseline: bool = True,
    findings: Sequence[Finding] = (),
    level: float | None = None,
) -> Comparison:
    """The suite's comparison; `baseline` False: a new suite, the head judged alone.
    `findings` are the flow's own notes (e.g. what the head's policy would change), then come
    the instrument's changes and what the head's instrument would say; `level` the drop
    test's (the suite's share of the PR's false-block rate). An instrument change that fails
    (a head replaying recorded answers) fails a comparison that would pass or be inconclusive."""
    if run.problem is not None:
        return Comparison(verdict="error", findings=[run.problem, NoBaseResults()], suite=suite)
    failed = failed_comparison(run.statuses, suite)
    if failed is not None:
        return failed
    head = run.reports["head"]
    base = run.reports["base"] if baseline else None
    comparison = compare(base, head, policy, level)
    own = [run.head_instrument] if run.head_instrument is not None else []
    extra: list[Finding] = [*findings, *run.instrument, *own]
    failing = [f for f in extra if f.outcome == "fail"]
    rest = [f for f in extra if f.outcome != "fail"]
    if not failing:
        return comparison.model_copy(update={"findings": [*comparison.findings, *extra]})
    if comparison.verdict in ("pass", "inconclusive"):  # it measured the PR's own answers
        held = [f for f in comparison.findings if f.outcome == "note"]
        update = {"verdict": "fail", "findings": [*failing, *held, *rest]}
        return comparison.model_copy(update=update)
    return comparison.model_copy(update={"findings": [*comparison.findings, *failing, *rest]})


Judged = tuple[Comparison, SuiteRun]


def judge_planned(
    plan: FlowPlan, suite: SuitePlan, run: SuiteRun, level: float | None = None
) -> Comparison:
    """A suite of the flow judged by the flow's policy, at `level` (default: its first share
    of the PR's false-block rate; Holm's steps, `split_false_blocks`, may raise it)."""
    return judge(
        run,
        suite.name,
        plan.policy,
        baseline=suite.baseline,
        findings=plan.notes,
        level=plan.drop_level if level is None else level,
    )


def split_false_blocks(plan: FlowPlan, judged: Mapping[str, Judged]) -> dict[str, Judged]:
    """Holm's procedure over the flow's compared suites (`gate.compare.sequential.holm`): a
    suite whose drop test rejects only at a later step's larger share is judged again at it.
    A compared suite without a drop test (an error, nothing paired) counts but never rejects,
    so the PR's false-block rate holds whatever happened to the others."""
    compared = [s for s in plan.compared if s.name in judged]
    tests = [(judged[s.name][0].drop_test, judged[s.name][0].delta_points) for s in compared]
    missing = len(plan.compared) - len(compared)  # counted, never rejecting
    levels = split_levels(
        [*tests, *[(None, None)] * missing], plan.policy.false_block_rate, plan.policy.threshold
    )
    result = dict(judged)
    for index, level in levels.items():
        if index >= len(compared):
            continue
        suite = compared[index]
        comparison, run = judged[suite.name]
        if level > plan.drop_level and comparison.verdict != "fail" and run.reports:
            result[suite.name] = (judge_planned(plan, suite, run, level), run)
    return result
