"""What the head's own instrument would say of this PR: the verdict once it is merged.

When the PR changes what judges (cases, checks and their code, the judge, prices, the
sandbox's limits), both sides' answers of round 0, recorded as they ran (in a private folder:
held-out answers never reach the reports folder), are judged again with the head's gate.yml,
cases and check code: the same answers, so no system is called and only a changed rubric or
judge asks the judge anew (the response cache answers the rest). Cases whose input the PR
changes (or, for an agent, its tools, turns or simulated user) were never asked with the new
input: they are left out and named. The two re-judged
reports are compared by the head's policy, and the comment shows the verdict beside the
base's (`HeadInstrument`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from gate.compare.findings import Finding, HeadInstrument, HeadInstrumentUnknown
from gate.compare.pairing import compare
from gate.flow.instrument import Rejudge
from gate.flow.sides import SideProcess, SideStatus, ended, run_round, start_sides
from gate.inputs.policy import Policy
from gate.report.models import Report
from gate.run.protocol import RunMore
from gate.run.spec import SideSpec

FOLDER = "head-instrument"  # under the suite's reports folder


def rejudge_specs(sides: Sequence[SideSpec], rejudge: Rejudge) -> list[SideSpec]:
    """Both sides again, on their recorded answers, measured by the head's instrument; each
    side keeps its own SDK (the base's from its own gate.yml)."""
    assert rejudge.measure is not None
    return [
        spec.model_copy(update={"measure": rejudge.measure, "record": None, "answers": spec.record})
        for spec in sides
    ]


def run_rejudge(
    specs: Sequence[SideSpec], rejudge: Rejudge, env: Mapping[str, str], out: Path, stream: TextIO
) -> tuple[tuple[SideStatus, ...], dict[str, Report]]:
    """Re-judge both sides' recorded answers: how each run ended and its report."""
    assert rejudge.measure is not None
    with ended(start_sides(rejudge_specs(specs, rejudge), env, stream)) as sides:
        run_round(sides, RunMore(repeats=rejudge.measure.repeats), first=True)
    return tuple(s.status() for s in sides), _reports(sides, out)


def _reports(sides: Sequence[SideProcess], out: Path) -> dict[str, Report]:
    from gate.flow.reports import write_side_report

    return {
        side.name: write_side_report(
            side.report(), out / FOLDER, side.spec.label, duration_s=side.seconds, http=side.http
        )[0]
        for side in sides
        if side.complete
    }


def head_instrument(
    rejudge: Rejudge,
    statuses: Sequence[SideStatus],
    reports: Mapping[str, Report],
    policy: Policy,
) -> Finding:
    """The head instrument's verdict of the re-judged reports, or why it is unknown."""
    if rejudge.problem is not None:
        return HeadInstrumentUnknown(reason=rejudge.problem)
    failed = next((s for s in statuses if s.fatal), None)
    if failed is not None:
        return HeadInstrumentUnknown(
            reason=f"re-judging {failed.who} could not run (exit {failed.returncode}): "
            f"{failed.error}"
        )
    if "base" not in reports or "head" not in reports:
        return HeadInstrumentUnknown(reason="the re-judged reports are missing")
    c = compare(reports["base"], reports["head"], policy)
    return HeadInstrument(
        verdict="pass" if c.verdict == "skipped" else c.verdict,
        delta_points=c.delta_points,
        base_pass_rate=c.base_pass_rate,
        head_pass_rate=c.head_pass_rate,
        paired=c.paired,
        decisive=[f for f in c.findings if f.outcome in ("fail", "error")],
        left_out=list(rejudge.left_out),
        judge_calls=c.base_usage.judge_calls + c.head_usage.judge_calls,
        judge_cached=c.base_usage.judge_cached + c.head_usage.judge_cached,
    )
