"""Judging what the sides of a suite left: their reports compared, or why they cannot be.

Never a pass on nothing: a side that could not run (either side) makes the verdict `error`
with its reason; a head whose configuration is broken is the user's to fix (exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.findings import Finding, NoBaseResults, SideFailed
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.flow.sides import SideStatus
from gate.inputs.policy import Policy
from gate.report.io import read_report


@dataclass(frozen=True)
class SuiteRun:
    """What the sides of a suite left: how each run ended (one per side, or per side and
    shard) and where each side's whole report is; what the PR changes in the instrument and
    what the head's would say (`gate.flow.instrument`, `gate.flow.rejudge`); or why the base
    cannot measure (`problem`: nothing ran)."""

    statuses: tuple[SideStatus, ...]
    reports: dict[str, Path]
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
) -> Comparison:
    """The suite's comparison; `baseline` False: a new suite, the head judged alone.
    `findings` are the flow's own notes (e.g. what the head's policy would change), then come
    the instrument's changes and what the head's instrument would say. An instrument change
    that fails (a head replaying recorded answers) fails a comparison that would pass."""
    if run.problem is not None:
        return Comparison(verdict="error", findings=[run.problem, NoBaseResults()], suite=suite)
    failed = failed_comparison(run.statuses, suite)
    if failed is not None:
        return failed
    head = read_report(run.reports["head"], fold_attempts=True)
    base = read_report(run.reports["base"], fold_attempts=True) if baseline else None
    comparison = compare(base, head, policy)
    own = [run.head_instrument] if run.head_instrument is not None else []
    extra: list[Finding] = [*findings, *run.instrument, *own]
    failing = [f for f in extra if f.outcome == "fail"]
    rest = [f for f in extra if f.outcome != "fail"]
    if not failing:
        return comparison.model_copy(update={"findings": [*comparison.findings, *extra]})
    if comparison.verdict == "pass":  # what passed it measured nothing (the PR's own answers)
        held = [f for f in comparison.findings if f.outcome == "note"]
        update = {"verdict": "fail", "findings": [*failing, *held, *rest]}
        return comparison.model_copy(update=update)
    return comparison.model_copy(update={"findings": [*comparison.findings, *failing, *rest]})
