"""Judging what the sides of a suite left: their reports compared, or why they cannot be.

Never a pass on nothing: a side that could not run (either side) makes the verdict `error`
with its reason; a head whose configuration is broken is the user's to fix (exit 2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.droptest import split_levels
from gate.compare.findings import Finding, NoBaseResults, SideFailed
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.flow.plan import FlowPlan, SuitePlan
from gate.flow.sides import SideStatus
from gate.inputs.policy import Policy
from gate.report.io import read_report


@dataclass(frozen=True)
class SuiteRun:
    """What the sides of a suite left: how each run ended (one per side, or per side and
    shard) and where each side's whole report is."""

    statuses: tuple[SideStatus, ...]
    reports: dict[str, Path]


def failed_comparison(statuses: Sequence[SideStatus], suite: str) -> Comparison | None:
    """The error verdict when a side failed for good; None when a comparison can be made."""
    head_input = next((s for s in statuses if s.side == "head" and s.input_error), None)
    if head_input is not None:  # the head's configuration is the user's to fix
        raise InputError(head_input.error or "the head's configuration cannot run")
    failed = [s for s in statuses if s.fatal]
    if not failed:
        return None
    first = [s for s in failed if s.returncode and s.returncode > 0] or failed
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
    `findings` are the flow's own notes (e.g. what the head's policy would change); `level`
    the drop test's (the suite's share of the PR's false-block rate)."""
    failed = failed_comparison(run.statuses, suite)
    if failed is not None:
        return failed
    head = read_report(run.reports["head"], fold_attempts=True)
    base = read_report(run.reports["base"], fold_attempts=True) if baseline else None
    comparison = compare(base, head, policy, level)
    return comparison.model_copy(update={"findings": [*comparison.findings, *findings]})


def judge_planned(plan: FlowPlan, suite: SuitePlan, run: SuiteRun) -> Comparison:
    """A suite of the flow judged by the flow's policy, at its first share of the PR's
    false-block rate (Holm's first step, `split_false_blocks`, may raise it)."""
    return judge(
        run,
        suite.name,
        plan.policy,
        baseline=suite.baseline,
        findings=plan.notes,
        level=plan.drop_level,
    )


def split_false_blocks(
    plan: FlowPlan, judged: Mapping[str, tuple[Comparison, dict[str, Path]]]
) -> dict[str, tuple[Comparison, dict[str, Path]]]:
    """Holm's procedure over the flow's compared suites (`gate.compare.sequential.holm`): a
    suite whose drop test rejects only at a later step's larger share is judged again at it.
    A compared suite without a drop test (an error, nothing paired) counts but never rejects,
    so the PR's false-block rate holds whatever happened to the others."""
    names = [s.name for s in plan.compared]
    shown = [judged.get(name, (None, {}))[0] for name in names]
    tests = [(c.drop_test, c.delta_points) if c else (None, None) for c in shown]
    levels = split_levels(tests, plan.policy.false_block_rate, plan.policy.threshold)
    result = dict(judged)
    for index, level in levels.items():
        comparison, reports = judged[names[index]]
        if level > plan.drop_level and comparison.verdict != "fail" and reports:
            suite = plan.compared[index]
            result[suite.name] = (judge_planned_at(plan, suite, reports, level), reports)
    return result


def judge_planned_at(
    plan: FlowPlan, suite: SuitePlan, reports: dict[str, Path], level: float
) -> Comparison:
    """A suite judged again from its reports, at a level Holm's step raised."""
    run = SuiteRun((), reports)
    return judge(run, suite.name, plan.policy, findings=plan.notes, level=level)
