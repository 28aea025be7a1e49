"""The PR flow spread over GitHub Actions matrix jobs (the action's `mode` input).

- `mode: shard` (`run_shard_flow`): change detection as usual; for each suite that runs, shard
  I/N of both sides (`gate run --shard I/N`) into the reports folder, with a record of the
  commits compared and of how each side's run ended. Nothing is compared or posted.
- `mode: finish` (`run_finish_flow`): change detection again (same commits, same answer); for
  each suite that runs, the records found under the downloaded folder must cover every shard
  exactly once and name the commits this job compares; each side's shards are merged into the
  suite's report (`gate.report.merge`) and the flow goes on as the unsharded one
  (`gate.flow.pr`). Anything missing is an `error` verdict naming it, never a smaller suite.

A shard job writes `OUT/<suite>/base.shard-I-of-N.jsonl`, `head.shard-I-of-N.jsonl` (each with
its summary) and `shard-I-of-N.json` (the record). Names differ per shard, so the artifacts of
all shard jobs can be downloaded into one folder (`merge-multiple: true`) or one folder each:
the finish job looks for records at any depth and finds each record's reports beside it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from gate import __version__
from gate.compare.error_findings import ShardFile
from gate.compare.findings import (
    Finding,
    HeadInstrumentUnknown,
    NoBaseResults,
    ShardsIncomplete,
    ShardsMissing,
    ShardsStale,
    ShardsUnmerged,
    Skipped,
)
from gate.compare.models import Comparison
from gate.errors import GateError, InputError
from gate.flow.instrument import SuiteInstrument, suite_instrument
from gate.flow.judging import Judged, SuiteRun, failed_comparison, judge_planned
from gate.flow.plan import FlowPlan, SuitePlan
from gate.flow.pr import (
    FlowOutcome,
    outcomes,
    report_label,
    run_planned,
    shard_name,
    suite_folder,
)
from gate.flow.rejudge import FOLDER as REJUDGED
from gate.flow.rejudge import head_instrument
from gate.flow.request import Revisions
from gate.flow.sides import SIDES, SideStatus
from gate.inputs.paths import display_path
from gate.inputs.shard import Shard
from gate.report.files import atomic_write
from gate.report.io import read_report
from gate.report.merge import check_shards, merge_reports
from gate.report.models import Report, RunMeta

RECORD_GLOB = "shard-*-of-*.json"
NOTHING_RAN = SuiteRun((), {})  # a suite judged an error before its merged reports exist
ShardVerdict = Literal["partial", "error", "skipped"]
SHARD_VERDICT_ORDER: tuple[ShardVerdict, ...] = ("error", "partial", "skipped")


class ShardRecord(BaseModel):
    """`shard-I-of-N.json`: what one shard job compared and how each side's run ended."""

    model_config = ConfigDict(frozen=True)

    type: Literal["eval-gate-shard"] = "eval-gate-shard"
    gate_version: str = __version__
    suite: str
    shard: str
    base_sha: str
    head_sha: str
    sides: tuple[SideStatus, ...]
    rejudged: tuple[SideStatus, ...] = Field(
        (), description="the re-judging with the head's instrument (none: not asked)"
    )

    @field_validator("shard")
    @classmethod
    def _is_a_shard(cls, value: str) -> str:
        try:
            return str(Shard.parse(value))
        except InputError as exc:
            raise ValueError(exc.message) from None

    def report(self, folder: Path, side: str) -> Path:
        return folder / f"{report_label(side, Shard.parse(self.shard))}.jsonl"


@dataclass(frozen=True)
class ShardOutcome:
    """What a shard job did for one suite: the findings of an error, or why it skipped."""

    suite: str
    shard: Shard
    verdict: ShardVerdict
    findings: list[Finding] = field(default_factory=list)


# --- mode: shard -----------------------------------------------------------------------------


def run_shard_flow(plan: FlowPlan, shard: Shard) -> list[ShardOutcome]:
    """Shard `shard` of both sides of every suite that runs; partial reports and records only."""
    revisions = plan.request.revisions

    def record(suite: SuitePlan, run: SuiteRun) -> ShardOutcome:
        folder = plan.request.io.out_dir.resolve() / suite_folder(suite.name)
        if run.problem is not None:  # the base cannot measure: nothing ran
            return ShardOutcome(suite.name, shard, "error", [run.problem, NoBaseResults()])
        entry = ShardRecord(
            suite=suite.name,
            shard=str(shard),
            base_sha=revisions.base_sha,
            head_sha=revisions.head_sha or "",
            sides=run.statuses,
            rejudged=run.rejudged,
        )
        atomic_write(folder / f"{shard_name(shard)}.json", entry.model_dump_json(indent=2) + "\n")
        failed = failed_comparison(run.statuses, suite.name)  # a bad head config: exit 2
        if failed is not None:
            return ShardOutcome(suite.name, shard, "error", failed.findings)
        return ShardOutcome(suite.name, shard, "partial")

    ran = run_planned(plan, record, shard=shard)
    return [
        ran[p.name]
        if p.runs
        else ShardOutcome(p.name, shard, "skipped", [Skipped(reason=p.skip_reason or "")])
        for p in plan.suites
        if not p.removed  # the finish job fails it: nothing runs
    ]


def shard_verdict(ran: Sequence[ShardOutcome]) -> ShardVerdict:
    verdicts = {o.verdict for o in ran}
    return next((v for v in SHARD_VERDICT_ORDER if v in verdicts), "skipped")


# --- mode: finish ----------------------------------------------------------------------------


Found = list[tuple[Path, ShardRecord]]


def read_record(path: Path) -> ShardRecord:
    try:
        return ShardRecord.model_validate_json(path.read_bytes())
    except OSError as exc:
        raise GateError(f"{path}: cannot read the shard record: {exc.strerror}") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise GateError(f"{path}: not a shard record: {where}: {first['msg']}") from None


def find_records(folder: Path) -> dict[str, Found]:
    """Every shard record under `folder` at any depth, by suite."""
    found: dict[str, Found] = defaultdict(list)
    if folder.is_dir():
        for path in sorted(folder.rglob(RECORD_GLOB)):
            record = read_record(path)
            found[record.suite].append((path, record))
    return found


def shard_problem(suite: str, found: Found, revisions: Revisions, folder: str) -> Finding | None:
    """Why the shards of a suite cannot make its whole report: none, some missing or
    duplicated, or of other commits. None when every shard is there once."""
    if not found:
        return ShardsMissing(suite=suite, folder=folder)
    root, base, head = revisions.repo.root, revisions.base_sha, revisions.head_sha
    stale = [
        ShardFile(shard=r.shard, path=display_path(p, root))
        for p, r in found
        if (r.base_sha, r.head_sha) != (base, head)
    ]
    if stale:
        return ShardsStale(base_sha=base, head_sha=head or "", stale=stale)
    try:
        check_shards(
            [(Path(display_path(p, root)), RunMeta(suite=suite, shard=r.shard)) for p, r in found]
        )
    except InputError as exc:
        return ShardsIncomplete(problem=exc.message)
    return None


def _merge_sides(found: Found, statuses: Sequence[SideStatus], out: Path) -> Finding | None:
    """Each side's shards into `out/<side>.jsonl`; why not, if they do not merge."""
    for side in sorted({s.side for s in statuses}):  # base, then head
        try:
            merge_reports([r.report(p.parent, side) for p, r in found], out, side)
        except InputError as exc:
            return ShardsUnmerged(side=side, problem=str(exc))
    return None


def _finish_suite(
    plan: FlowPlan, planned: SuitePlan, found: Found, folder: str, base_root: Path
) -> Judged:
    suite = planned.name
    inst = suite_instrument(plan, planned, base_root)
    if inst.problem is not None:  # the base cannot measure: nothing ran
        cannot: list[Finding] = [inst.problem, NoBaseResults()]
        return Comparison(verdict="error", findings=cannot, suite=suite), NOTHING_RAN
    problem = shard_problem(suite, found, plan.request.revisions, folder)
    if problem is not None:
        return Comparison(verdict="error", findings=[problem], suite=suite), NOTHING_RAN
    statuses = tuple(s for _, r in found for s in r.sides)
    failed = failed_comparison(statuses, suite)
    if failed is not None:
        return failed, NOTHING_RAN
    out = plan.request.io.out_dir.resolve() / suite_folder(suite)
    print(
        f"[gate] suite {suite}: merging {len(found)} shards of base and head",
        file=plan.request.io.stream,
        flush=True,
    )
    problem = _merge_sides(found, statuses, out)
    if problem is not None:
        return Comparison(verdict="error", findings=[problem], suite=suite), NOTHING_RAN
    ran = sorted({s.side for s in statuses})
    reports: dict[str, Report] = {side: read_report(out / f"{side}.jsonl") for side in ran}
    run = SuiteRun(statuses, reports, inst.changes, _head_instrument(plan, inst, found, out))
    return judge_planned(plan, planned, run), run


def _head_instrument(
    plan: FlowPlan, inst: SuiteInstrument, found: Found, out: Path
) -> Finding | None:
    """What the head's instrument says of the shards re-judged with it, merged; None when it
    was not asked (nothing that judges changed)."""
    if inst.rejudge is None:
        return None
    if inst.rejudge.measure is None:
        return head_instrument(inst.rejudge, (), {}, plan.head_policy)
    if not all(r.rejudged for _, r in found):
        return HeadInstrumentUnknown(reason="not every shard job re-judged its answers")
    statuses = tuple(s for _, r in found for s in r.rejudged)
    target = out / REJUDGED
    for side in SIDES:
        paths = [r.report(p.parent / REJUDGED, side) for p, r in found]
        try:
            merge_reports(paths, target, side)
        except InputError as exc:
            return HeadInstrumentUnknown(reason=f"the re-judged {side} shards do not merge: {exc}")
    reports = {side: read_report(target / f"{side}.jsonl") for side in SIDES}
    return head_instrument(inst.rejudge, statuses, reports, plan.head_policy)


def run_finish_flow(plan: FlowPlan, folder: Path) -> FlowOutcome:
    """Merge the shard jobs' reports found under `folder`, then judge and render as the
    unsharded flow does (the instrument read again in a checkout of the base)."""
    runnable = plan.runnable
    if not runnable:
        return outcomes(plan, {})
    found = find_records(folder)
    shown = display_path(folder, plan.request.revisions.repo.root)
    revisions = plan.request.revisions
    with revisions.repo.worktree(revisions.base_sha, plan.base_root) as base_root:
        judged = {
            p.name: _finish_suite(plan, p, found.get(p.name, []), shown, base_root)
            for p in runnable
        }
    return outcomes(plan, judged)
