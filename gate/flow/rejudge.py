"""What the head's own instrument would say of this PR: the verdict once it is merged.

When the PR changes what judges (cases, checks and their code, the judge, prices, the
sandbox's limits), both sides' answers of round 0, recorded as they ran (`gate run --record`,
in a private folder: held-out answers never reach the reports folder), are judged again with
the head's gate.yml, cases and check code (`gate run --answers`): the same answers, so no
system is called and only a changed rubric or judge asks the judge anew (the response cache
answers the rest). Cases whose input the PR changes were never asked with the new input:
they are left out and named. The two re-judged reports are compared by the head's policy,
and the comment shows the verdict beside the base's (`HeadInstrument`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from gate.compare.findings import Finding, HeadInstrument, HeadInstrumentUnknown
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.flow.instrument import Rejudge, SuiteInstrument
from gate.flow.sides import Side, SideStatus, run_sides
from gate.inputs.policy import Policy
from gate.report.io import read_report

FOLDER = "head-instrument"  # under the suite's reports folder


def rejudge_sides(sides: Sequence[Side], inst: SuiteInstrument, head: Path) -> list[Side]:
    """Both sides again, on their recorded answers, measured by the head's gate.yml (`head`)
    with the head's checkout judging; each side keeps its own SDK (the base's from its own
    gate.yml). Their reports go to the suite's `head-instrument` folder."""
    assert inst.rejudge is not None
    head_root = next(s.root for s in sides if s.name == "head")
    rejudged = []
    for side in sides:
        folder = side.report.parent / FOLDER
        listing = folder / f"{side.report.stem}.cases.txt"
        folder.mkdir(parents=True, exist_ok=True)
        listing.write_text("".join(f"{i}\n" for i in inst.rejudge.ids), encoding="utf-8")
        rejudged.append(
            replace(
                side,
                config=head,
                system_config=inst.measuring if side.name == "base" else None,
                report=folder / side.report.name,
                heldout_detail=None,
                checks_root=head_root,
                added_cases=None,
                record=None,
                answers=side.record,
                cases_from=listing,
                repeats=inst.rejudge.repeats,
            )
        )
    return rejudged


def run_rejudge(
    sides: Sequence[Side], inst: SuiteInstrument, head: Path, env: Mapping[str, str], out: TextIO
) -> tuple[tuple[SideStatus, ...], dict[str, Path]]:
    """Re-judge both sides' recorded answers; how each run ended and where its report is."""
    rejudged = rejudge_sides(sides, inst, head)
    run_sides(rejudged, env, out)
    return tuple(s.status() for s in rejudged), {s.name: s.report for s in rejudged}


def head_instrument(
    rejudge: Rejudge,
    statuses: Sequence[SideStatus],
    reports: Mapping[str, Path],
    policy: Policy,
) -> Finding:
    """The head instrument's verdict of the re-judged reports, or why it is unknown."""
    failed = next((s for s in statuses if s.fatal), None)
    if failed is not None:
        return HeadInstrumentUnknown(
            reason=f"re-judging {failed.who} could not run (exit {failed.returncode}): "
            f"{failed.error}"
        )
    try:
        base = read_report(reports["base"], fold_attempts=True)
        head = read_report(reports["head"], fold_attempts=True)
    except (InputError, KeyError) as exc:
        return HeadInstrumentUnknown(reason=f"the re-judged reports cannot be read: {exc}")
    c = compare(base, head, policy)
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
