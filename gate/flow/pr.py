"""The PR flow: changed files -> which suites to run -> base and head runs -> verdicts.

Both sides are measured by the base's instrument (its gate.yml, cases and check code, see
`gate.flow.instrument`); each side's own system runs and reads that side's own files.
A side is `gate run` in its own Python process (`-P`, so the checkout's folder is never put on
the import path by accident): a `python` system imports a module of the same name from two
checkouts, which one process cannot hold. The two sides of a suite run at the same time and
share the response cache; their progress is streamed with the side as prefix.

`gate check` and `gate demo` call `run_check`; `gate action` builds its `FlowRequest` from what
the GitHub event names (see `gate.github.action`). Every mode plans the flow once
(`gate.flow.plan.plan_flow`: the baseline, the policy, which suites run) and hands that plan
to the steps (`run_planned`, `judge`, `outcomes`), which the sharded modes of the action share
(`gate.flow.sharded`).
"""

from __future__ import annotations

import os
import re
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from gate.compare.acceptance import accept
from gate.compare.findings import SuiteRemoved
from gate.compare.models import (
    VERDICT_ORDER,
    Comparison,
    Verdict,
    exit_code_of,
    skipped_comparison,
)
from gate.flow.git import GitRepo
from gate.flow.instrument import SuiteInstrument, suite_instrument
from gate.flow.judging import Judged, SuiteRun, judge_planned, split_false_blocks
from gate.flow.plan import FlowPlan, SuitePlan, cache_dir, plan_flow
from gate.flow.rejudge import head_instrument, run_rejudge
from gate.flow.request import FlowIO, FlowRequest, PolicyOverrides, Revisions
from gate.flow.sides import Side, run_sides, side_env
from gate.flow.system_diff import with_system_diff
from gate.flow.triggers import case_globs
from gate.inputs.config import load_config
from gate.inputs.shard import Shard
from gate.render import RenderContext, render_comment, render_summary


@dataclass(frozen=True)
class SuiteOutcome:
    """One suite of the flow: its comparison, the rendered comment and summary, and where they
    are shown (`context`: for other formats of the same comparison, e.g. the terminal's)."""

    suite: str
    comparison: Comparison
    markdown: str
    summary: str
    changes: tuple[str, ...] = ()
    reports: dict[str, Path] = field(default_factory=dict)
    context: RenderContext = field(default_factory=RenderContext)

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as `(suite, comparison, markdown)`."""
        return iter((self.suite, self.comparison, self.markdown))


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
        repo.worktree(plan.request.revisions.base_sha) as base_root,
        tempfile.TemporaryDirectory(prefix="gate-answers-") as answers,
    ):
        env = side_env(repo.subprocess_env(), cache_dir(plan.request))
        where = SuiteSetting(base_root, env, shard, Path(answers))
        return {s.name: then(s, _run_suite(plan, s, where)) for s in runnable}


@dataclass(frozen=True)
class SuiteSetting:
    """Where a suite's sides run: the base checkout, their environment, the shard, and the
    private folder of their recorded answers."""

    base_root: Path
    env: Mapping[str, str]
    shard: Shard | None
    answers: Path


def _sides(plan: FlowPlan, suite: SuitePlan, inst: SuiteInstrument, at: SuiteSetting) -> list[Side]:
    """The head with its own system, measured by the suite's instrument (the base's), and the
    base when the base has the suite."""
    request, folder, shard = plan.request, suite_folder(suite.name), at.shard
    reports = request.io.out_dir.resolve() / folder
    private = request.io.heldout_detail
    label = report_label("head", shard)
    head = Side(
        "head",
        request.revisions.repo.root,
        inst.measuring,
        suite.name,
        reports / f"{label}.jsonl",
        system_config=inst.head_own,
        heldout_detail=private / folder if private else None,
        shard=shard,
        use_cache=request.io.use_cache,
        checks_root=inst.checks_root,
        added_cases=request.config.path if inst.adds_cases else None,
        cache_dir=cache_dir(request),
        record=at.answers / folder / f"{label}.answers.jsonl" if inst.rejudge else None,
    )
    if not suite.baseline:
        return [head]
    label = report_label("base", shard)
    base = replace(
        head,
        name="base",
        root=at.base_root,
        report=reports / f"{label}.jsonl",
        system_config=None,
        record=at.answers / folder / f"{label}.answers.jsonl" if inst.rejudge else None,
    )
    return [base, head]


def _run_suite(plan: FlowPlan, suite: SuitePlan, at: SuiteSetting) -> SuiteRun:
    inst = suite_instrument(plan, suite, at.base_root)
    if inst.problem is not None:
        return SuiteRun((), {}, problem=inst.problem)
    sides = _sides(plan, suite, inst, at)
    stream = plan.request.io.stream
    names = " and ".join(s.name for s in sides) + ("" if suite.baseline else " (a new suite)")
    what = f"shard {at.shard} of {names}" if at.shard else names
    print(f"[gate] suite {suite.name}: running {what}", file=stream, flush=True)
    run_sides(sides, at.env, stream)
    auto = inst.config.repeats == "auto" and len(sides) == 2
    if auto and not any(s.returncode for s in sides):
        from gate.flow.adaptive import spend

        spend(plan, sides, at.env)
    run = SuiteRun(
        tuple(s.status() for s in sides), {s.name: s.report for s in sides}, inst.changes
    )
    if inst.rejudge is None or any(s.status().fatal for s in sides):
        return run
    print(f"[gate] suite {suite.name}: judging again with the head's instrument", file=stream)
    statuses, reports = run_rejudge(sides, inst, plan.request.config.path, at.env, stream)
    found = head_instrument(inst.rejudge, statuses, reports, plan.head_policy)
    return replace(run, head_instrument=found, rejudged=statuses)


def removed_comparison(plan: FlowPlan, suite: SuitePlan) -> Comparison:
    """A suite of the base's that the head's gate.yml lacks: a fail naming it."""
    new = [s.name for s in plan.suites if not s.baseline and not s.removed]
    finding = SuiteRemoved(suite=suite.name, head_suites=new)
    return Comparison(verdict="fail", findings=[finding, *plan.notes], suite=suite.name)


def outcomes(plan: FlowPlan, judged: Mapping[str, Judged]) -> list[SuiteOutcome]:
    """Every suite's verdict, after Holm's steps over the suites (`split_false_blocks`),
    accepted when the PR carries the base's accept label, rendered as its comment and job
    summary; skipped and removed ones too."""
    request, revisions = plan.request, plan.request.revisions
    judged = split_false_blocks(plan, judged)
    result = []
    for suite in plan.suites:
        if suite.runs:
            comparison, run = judged[suite.name]
            reports = run.reports
            config = request.config.config.suite(suite.name)
            cases = case_globs(request.config, config, revisions.repo.root)
            comparison = with_system_diff(
                revisions.repo, revisions.base_sha, revisions.head_sha, comparison, cases
            )
        elif suite.removed:
            comparison, reports = removed_comparison(plan, suite), {}
        else:
            comparison, reports = skipped_comparison(suite.skip_reason or "", suite=suite.name), {}
        comparison = accept(comparison, plan.policy.accept_label, request.labels)
        ctx = plan.render.model_copy(update={"suite": suite.name})
        markdown, summary = render_comment(comparison, ctx), render_summary(comparison, ctx)
        if plan.head_templates is not None:  # the PR's own: they must render too (see plan)
            own = ctx.model_copy(update={"templates": plan.head_templates})
            render_comment(comparison, own), render_summary(comparison, own)
        changed = tuple(str(c) for c in suite.changes)
        result.append(
            SuiteOutcome(suite.name, comparison, markdown, summary, changed, reports, ctx)
        )
    return result


def run_flow(plan: FlowPlan) -> list[SuiteOutcome]:
    """Run base and head of the suites that run, compare them by the plan's policy, render."""

    def judged(suite: SuitePlan, run: SuiteRun) -> Judged:
        return judge_planned(plan, suite, run), run

    return outcomes(plan, run_planned(plan, judged))


# --- gate check ------------------------------------------------------------------------------


def run_check(
    repo: Path,
    config: Path,
    base_ref: str | None,
    out_dir: Path,
    *,
    threshold: float | None = None,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    heldout_detail: Path | None = None,
    use_cache: bool = True,
    labels: Sequence[str] = (),
) -> list[SuiteOutcome]:
    """The PR flow on a local repository: the working tree against `base_ref` (default: the
    remote's default branch), as a PR with `labels`. Nothing is fetched or posted."""
    env = dict(os.environ if environ is None else environ)
    git_repo = GitRepo(repo, environ=env)
    try:
        loaded = load_config(config)
        base_sha = git_repo.resolve_ref(base_ref or git_repo.default_base(), fetch=False)
        request = FlowRequest(
            revisions=Revisions(git_repo, base_sha),
            config=loaded,
            io=FlowIO(
                out_dir,
                environ=env,
                stream=stream or sys.stderr,
                heldout_detail=heldout_detail.resolve() if heldout_detail else None,
                use_cache=use_cache,
            ),
            display=RenderContext(
                head_sha=git_repo.head_sha(), base_sha=base_sha, report_hint=str(out_dir)
            ),
            overrides=PolicyOverrides(threshold=threshold),
            labels=tuple(labels),
        )
        return run_flow(plan_flow(request))
    finally:
        git_repo.close()
