"""The PR flow: changed files -> which suites to run -> base and head runs -> verdicts.

Every mode plans the flow once (`gate.flow.plan.plan_flow`: the base's gate.yml, the policy,
which suites run, the cache). Then, per suite that runs, in one checkout of the base:
1. the instrument (`gate.flow.instrument`): the base's cases and checks measure both sides,
   each side runs its own system;
2. one runner process per side (`gate.flow.sides`), alive for the whole suite: round 0, then
   `repeats: auto`'s rounds (`gate.flow.adaptive`), the reports held in memory;
3. each side's report written once (`gate.flow.reports`); the head's own instrument asked
   about the same answers when the PR changes what judges (`gate.flow.rejudge`);
4. the comparison by the plan's policy (`gate.flow.judging`), Holm's split over the suites,
   the accept label, the prompt and config diffs.
The flow returns typed outcomes; its callers render them (`gate check`, `gate demo`, the
Action's `gate.github.publish`). The sharded modes of the Action share these steps
(`gate.flow.sharded`).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypedDict, TypeVar, Unpack

from gate.compare.acceptance import accept
from gate.compare.findings import SuiteRemoved
from gate.compare.models import (
    VERDICT_ORDER,
    Comparison,
    Verdict,
    exit_code_of,
    skipped_comparison,
)
from gate.flow.baseline import config_path
from gate.flow.git import GitRepo
from gate.flow.instrument import SuiteInstrument, suite_instrument
from gate.flow.judging import Judged, SuiteRun, judge_planned, split_false_blocks
from gate.flow.plan import FlowPlan, SuitePlan, plan_flow
from gate.flow.reports import write_side_report
from gate.flow.request import FlowIO, FlowRequest, PolicyOverrides, Revisions
from gate.flow.sides import SideProcess, SideStatus, ended, run_round, side_env, start_sides
from gate.flow.system_diff import with_system_diff
from gate.flow.triggers import case_globs
from gate.inputs.config import load_config
from gate.inputs.shard import Shard
from gate.inputs.templates import TemplateSet
from gate.report.models import Report
from gate.run.protocol import RunMore
from gate.run.spec import SideSpec
from gate.run.summary_line import describe

if TYPE_CHECKING:
    from gate.flow.preview import FlowPreview


@dataclass(frozen=True)
class SuiteOutcome:
    """One suite of the flow: its comparison, the changes that made it run, and where its
    reports were written (by side)."""

    suite: str
    comparison: Comparison
    changes: tuple[str, ...] = ()
    reports: dict[str, Path] = field(default_factory=dict)


@dataclass(frozen=True)
class FlowOutcome:
    """What a flow found: each suite's outcome, the commits compared, and the templates its
    comments render with (the base's; `head_templates`: the PR's own, which must render too)."""

    suites: tuple[SuiteOutcome, ...]
    base_sha: str
    head_sha: str  # the head commit (gate check: the working tree's HEAD)
    templates: TemplateSet | None = None
    head_templates: TemplateSet | None = None

    @property
    def verdict(self) -> Verdict:
        return combined_verdict(self.suites)

    @property
    def exit_code(self) -> int:
        return exit_code(self.suites)


def exit_on_sigterm() -> None:
    """A cancelled job or a killed `gate check` still stops the runs and removes the base
    worktree: SIGTERM becomes SystemExit, which runs every `finally` on the way out."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def combined_verdict(outcomes: Sequence[SuiteOutcome]) -> Verdict:
    verdicts = {o.comparison.verdict for o in outcomes}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def exit_code(outcomes: Sequence[SuiteOutcome]) -> int:
    """The combined verdict's exit code under the flow's policy (an inconclusive suite blocks
    only with `inconclusive: block`)."""
    verdict = combined_verdict(outcomes)
    policies = [o.comparison.policy for o in outcomes if o.comparison.verdict == verdict]
    return exit_code_of(verdict, policies[0]) if policies else 0


# --- the flow --------------------------------------------------------------------------------


T = TypeVar("T")


def suite_folder(name: str) -> str:
    """The suite's folder under the reports folder (suite names may hold any character)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def shard_name(shard: Shard) -> str:
    return f"shard-{shard.index}-of-{shard.total}"


def report_label(side: str, shard: Shard | None) -> str:
    """`base`, or `base.shard-2-of-4` for a shard: distinct per shard, so the folders of all
    shard jobs can be joined into one (download-artifact's `merge-multiple`)."""
    return f"{side}.{shard_name(shard)}" if shard else side


@dataclass(frozen=True)
class SuiteSetting:
    """Where a suite's sides run: the base checkout, their environment, the shard, and the
    private folder of their recorded answers."""

    base_root: Path
    env: Mapping[str, str]
    shard: Shard | None
    answers: Path


def run_planned(
    plan: FlowPlan, then: Callable[[SuitePlan, SuiteRun], T], *, shard: Shard | None = None
) -> dict[str, T]:
    """Run both sides (or `shard` of them) of every suite that needs it, in one base worktree;
    `then` takes each suite's runs as they end, so a bad head config stops at the first suite.
    Answers recorded for re-judging stay in a private folder, removed with the worktree."""
    runnable = plan.runnable
    if not runnable:
        return {}
    repo = plan.request.revisions.repo
    with (
        repo.worktree(plan.request.revisions.base_sha, plan.base_root) as base_root,
        tempfile.TemporaryDirectory(prefix="gate-answers-") as answers,
    ):
        env = side_env(repo.subprocess_env())
        where = SuiteSetting(base_root, env, shard, Path(answers))
        return {s.name: then(s, run_suite(plan, s, where)) for s in runnable}


def side_specs(
    plan: FlowPlan, suite: SuitePlan, inst: SuiteInstrument, at: SuiteSetting
) -> list[SideSpec]:
    """The head with its own system, measured by the suite's instrument (the base's), and the
    base with its own when the base has the suite and can run it."""
    assert inst.measure is not None and inst.head_own is not None
    folder, request = suite_folder(suite.name), plan.request

    def spec(side: str, root: Path, own: object) -> SideSpec:
        label = report_label(side, at.shard)
        record = at.answers / folder / f"{label}.answers.jsonl" if inst.rejudge else None
        return SideSpec.model_validate(
            {
                "label": label,
                "suite": suite.name,
                "side": side,
                "root": root,
                "measure": inst.measure,
                "own": own,
                "cache_dir": plan.cache,
                "use_cache": request.io.use_cache and _cache_enabled(plan),
                "shard": str(at.shard) if at.shard else None,
                "record": record,
            }
        )

    specs = [spec("head", request.revisions.repo.root, inst.head_own)]
    if inst.base_own is not None and inst.base_problem is None:
        specs.insert(0, spec("base", at.base_root, inst.base_own))
    return specs


def _cache_enabled(plan: FlowPlan) -> bool:
    """The base's `cache.enabled` (the head's only where the base has no gate.yml)."""
    loaded = plan.baseline.loaded or plan.request.config
    return loaded.config.cache.enabled


def run_suite(plan: FlowPlan, suite: SuitePlan, at: SuiteSetting) -> SuiteRun:
    inst = suite_instrument(plan, suite, at.base_root)
    if inst.problem is not None:
        return SuiteRun((), {}, problem=inst.problem)
    specs = side_specs(plan, suite, inst, at)
    stream = plan.request.io.stream
    names = " and ".join(s.side or "" for s in specs) + ("" if suite.baseline else " (a new suite)")
    what = f"shard {at.shard} of {names}" if at.shard else names
    print(f"[gate] suite {suite.name}: running {what}", file=stream, flush=True)
    # the gate's folder, made before any system runs: none can plant files there first
    (plan.request.io.out_dir / suite_folder(suite.name)).mkdir(parents=True, exist_ok=True)
    with ended(start_sides(specs, at.env, stream)) as sides:
        run_round(sides, RunMore(repeats=specs[0].measure.repeats), first=True)
        if inst.auto and len(sides) == 2 and all(s.complete for s in sides):
            from gate.flow.adaptive import spend

            spend(plan, sides)
    statuses = [s.status() for s in sides]
    if inst.base_problem is not None:
        statuses.insert(0, SideStatus(side="base", returncode=2, error=inst.base_problem))
    run = SuiteRun(tuple(statuses), _written(plan, suite, sides), inst.changes)
    return _rejudged(plan, suite, inst, specs, run)


def _written(plan: FlowPlan, suite: SuitePlan, sides: Sequence[SideProcess]) -> dict[str, Report]:
    """Each side's report that answered round 0, written once into the suite's folder, and
    the line that sums it up in the side's log."""
    folder = suite_folder(suite.name)
    private = plan.request.io.heldout_detail
    written: dict[str, Report] = {}
    for side in sides:
        if not side.complete:
            continue
        report, summary = write_side_report(
            side.report(),
            plan.request.io.out_dir.resolve() / folder,
            side.spec.label,
            duration_s=side.seconds,
            http=side.http,
            heldout_detail=private / folder if private else None,
        )
        print(f"[{side.name}] {describe(summary, report.path)}", file=plan.request.io.stream)
        written[side.name] = report
    return written


def _rejudged(
    plan: FlowPlan, suite: SuitePlan, inst: SuiteInstrument, specs: list[SideSpec], run: SuiteRun
) -> SuiteRun:
    """The run, with what the head's own instrument says of the same answers (when the PR
    changes what judges and both sides ran)."""
    from gate.flow.rejudge import head_instrument, run_rejudge

    if inst.rejudge is None or len(specs) < 2 or any(s.fatal for s in run.statuses):
        return run
    stream = plan.request.io.stream
    if inst.rejudge.measure is None:
        found = head_instrument(inst.rejudge, (), {}, plan.head_policy)
        return replace(run, head_instrument=found)
    print(f"[gate] suite {suite.name}: judging again with the head's instrument", file=stream)
    env = side_env(plan.request.revisions.repo.subprocess_env())
    out = plan.request.io.out_dir.resolve() / suite_folder(suite.name)
    statuses, reports = run_rejudge(specs, inst.rejudge, env, out, stream)
    found = head_instrument(inst.rejudge, statuses, reports, plan.head_policy)
    return replace(run, head_instrument=found, rejudged=statuses)


def removed_comparison(plan: FlowPlan, suite: SuitePlan) -> Comparison:
    """A suite of the base's that the head's gate.yml lacks: a fail naming it."""
    new = [s.name for s in plan.suites if not s.baseline and not s.removed]
    finding = SuiteRemoved(suite=suite.name, head_suites=new)
    return Comparison(verdict="fail", findings=[finding, *plan.notes], suite=suite.name)


def outcomes(plan: FlowPlan, judged: Mapping[str, Judged]) -> FlowOutcome:
    """Every suite's verdict, after Holm's steps over the suites (`split_false_blocks`),
    accepted when the PR carries the base's accept label; skipped and removed ones too."""
    judged = split_false_blocks(plan, judged)
    revisions = plan.request.revisions
    return FlowOutcome(
        suites=tuple(_outcome(plan, suite, judged) for suite in plan.suites),
        base_sha=revisions.base_sha,
        head_sha=revisions.head_sha or revisions.repo.head_sha(),
        templates=plan.templates,
        head_templates=plan.head_templates,
    )


def _outcome(plan: FlowPlan, suite: SuitePlan, judged: Mapping[str, Judged]) -> SuiteOutcome:
    request, revisions = plan.request, plan.request.revisions
    reports: dict[str, Path] = {}
    if suite.runs:
        comparison, run = judged[suite.name]
        reports = {side: report.path for side, report in run.reports.items()}
        config = request.config.config.suite(suite.name)
        cases = case_globs(request.config, config, revisions.repo.root)
        comparison = with_system_diff(
            revisions.repo, revisions.base_sha, revisions.head_sha, comparison, cases
        )
    elif suite.removed:
        comparison = removed_comparison(plan, suite)
    else:
        comparison = skipped_comparison(suite.skip_reason or "", suite=suite.name)
    comparison = accept(comparison, plan.policy.accept_label, request.labels)
    changed = tuple(str(c) for c in suite.changes)
    return SuiteOutcome(suite.name, comparison, changed, reports)


def run_flow(plan: FlowPlan) -> FlowOutcome:
    """Run base and head of the suites that run, compare them by the plan's policy."""

    def judged(suite: SuitePlan, run: SuiteRun) -> Judged:
        return judge_planned(plan, suite, run), run

    return outcomes(plan, run_planned(plan, judged))


# --- gate check ------------------------------------------------------------------------------


class CheckOptions(TypedDict, total=False):
    """What `gate check` may set: a tighter threshold, the progress stream, the environment,
    a folder for held-out detail, whether the response cache is used, the PR's labels."""

    threshold: float | None
    stream: TextIO | None
    environ: Mapping[str, str] | None
    heldout_detail: Path | None
    use_cache: bool
    labels: Sequence[str]


def check_request(
    repo: GitRepo, config: Path, base_sha: str, out_dir: Path, **options: Unpack[CheckOptions]
) -> FlowRequest:
    """`gate check`'s request: the working tree of `repo` against `base_sha`, as a PR with
    `labels`."""
    environ, heldout_detail = options.get("environ"), options.get("heldout_detail")
    return FlowRequest(
        revisions=Revisions(repo, base_sha),
        config=load_config(config),
        config_at=config_path(repo.root, config),
        io=FlowIO(
            out_dir,
            environ=dict(repo.environ if environ is None else environ),
            stream=options.get("stream") or sys.stderr,
            heldout_detail=heldout_detail.resolve() if heldout_detail else None,
            use_cache=options.get("use_cache", True),
        ),
        overrides=PolicyOverrides(threshold=options.get("threshold")),
        labels=tuple(options.get("labels", ())),
    )


def run_check(
    repo: Path, config: Path, base_ref: str | None, out_dir: Path, **options: Unpack[CheckOptions]
) -> FlowOutcome:
    """The PR flow on a local repository: the working tree against `base_ref` (default: the
    remote's default branch). Nothing is fetched or posted. `options`: `check_request`'s."""
    with _local(repo, options.get("environ")) as git_repo:
        base_sha = git_repo.resolve_ref(base_ref or git_repo.default_base(), fetch=False)
        request = check_request(git_repo, config, base_sha, out_dir, **options)
        return run_flow(plan_flow(request))


def plan_check(
    repo: Path, config: Path, base_ref: str | None, out_dir: Path, **options: Unpack[CheckOptions]
) -> FlowPreview:
    """What `run_check` would run, without running it."""
    from gate.flow.preview import preview

    with _local(repo, options.get("environ")) as git_repo:
        base_sha = git_repo.resolve_ref(base_ref or git_repo.default_base(), fetch=False)
        return preview(plan_flow(check_request(git_repo, config, base_sha, out_dir, **options)))


@contextmanager
def _local(repo: Path, environ: Mapping[str, str] | None) -> Iterator[GitRepo]:
    git_repo = GitRepo(repo, environ=dict(os.environ if environ is None else environ))
    try:
        yield git_repo
    finally:
        git_repo.close()
