"""The PR flow: changed files -> which suites to run -> base and head runs -> verdicts.

Both sides use the head's config and cases; each side's system reads that side's own files.
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
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO, TypeVar

from gate.compare.models import VERDICT_ORDER, Comparison, exit_code_of, skipped_comparison
from gate.flow.git import GitRepo
from gate.flow.judging import SuiteRun, judge_planned, split_false_blocks
from gate.flow.plan import FlowPlan, SuitePlan, cache_dir, plan_flow
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


def combined_verdict(outcomes: Sequence[SuiteOutcome]) -> str:
    verdicts = {o.comparison.verdict for o in outcomes}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def exit_code(outcomes: Sequence[SuiteOutcome]) -> int:
    """The combined verdict's exit code under the flow's policy (an inconclusive suite blocks
    only with `inconclusive: block`)."""
    verdict = combined_verdict(outcomes)
    policies = [o.comparison.policy for o in outcomes if o.comparison.verdict == verdict]
    return exit_code_of(verdict, policies[0]) if policies else 0


# --- the flow --------------------------------------------------------------------------------


Judged = tuple[Comparison, dict[str, Path]]
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
    `then` takes each suite's runs as they end, so a bad head config stops at the first suite."""
    runnable = plan.runnable
    if not runnable:
        return {}
    repo = plan.request.revisions.repo
    with repo.worktree(plan.request.revisions.base_sha) as base_root:
        env = side_env(repo.subprocess_env(), cache_dir(plan.request))
        return {s.name: then(s, _run_suite(plan, s, base_root, env, shard)) for s in runnable}


def _sides(plan: FlowPlan, suite: SuitePlan, base_root: Path, shard: Shard | None) -> list[Side]:
    """The head, and the base with its own gate.yml's system, when the base has the suite."""
    request, folder = plan.request, suite_folder(suite.name)
    reports = request.io.out_dir.resolve() / folder
    private = request.io.heldout_detail
    head = Side(
        "head",
        request.revisions.repo.root,
        request.config.path,
        suite.name,
        reports / f"{report_label('head', shard)}.jsonl",
        heldout_detail=private / folder if private else None,
        shard=shard,
        use_cache=request.io.use_cache,
    )
    if not suite.baseline:
        return [head]
    base = replace(
        head,
        name="base",
        root=base_root,
        report=reports / f"{report_label('base', shard)}.jsonl",
        system_config=plan.baseline.config_in(base_root),
    )
    return [base, head]


def _run_suite(
    plan: FlowPlan, suite: SuitePlan, base_root: Path, env: Mapping[str, str], shard: Shard | None
) -> SuiteRun:
    sides = _sides(plan, suite, base_root, shard)
    stream = plan.request.io.stream
    names = " and ".join(s.name for s in sides) + ("" if suite.baseline else " (a new suite)")
    what = f"shard {shard} of {names}" if shard else names
    print(f"[gate] suite {suite.name}: running {what}", file=stream, flush=True)
    run_sides(sides, env, stream)
    auto = plan.request.config.config.repeats == "auto" and len(sides) == 2
    if auto and not any(s.returncode for s in sides):
        from gate.flow.adaptive import spend

        spend(plan, sides, env)
    return SuiteRun(tuple(s.status() for s in sides), {s.name: s.report for s in sides})


def outcomes(plan: FlowPlan, judged: Mapping[str, Judged]) -> list[SuiteOutcome]:
    """Every suite's verdict, after Holm's steps over the suites (`split_false_blocks`),
    rendered as its comment and job summary; skipped ones too."""
    request, revisions = plan.request, plan.request.revisions
    judged = split_false_blocks(plan, judged)
    result = []
    for suite in plan.suites:
        if suite.runs:
            comparison, reports = judged[suite.name]
            config = request.config.config.suite(suite.name)
            cases = case_globs(request.config, config, revisions.repo.root)
            comparison = with_system_diff(
                revisions.repo, revisions.base_sha, revisions.head_sha, comparison, cases
            )
        else:
            comparison, reports = skipped_comparison(suite.skip_reason or "", suite=suite.name), {}
        ctx = plan.render.model_copy(update={"suite": suite.name})
        markdown, summary = render_comment(comparison, ctx), render_summary(comparison, ctx)
        changed = tuple(str(c) for c in suite.changes)
        result.append(
            SuiteOutcome(suite.name, comparison, markdown, summary, changed, reports, ctx)
        )
    return result


def run_flow(plan: FlowPlan) -> list[SuiteOutcome]:
    """Run base and head of the suites that run, compare them by the plan's policy, render."""

    def judged(suite: SuitePlan, run: SuiteRun) -> Judged:
        return judge_planned(plan, suite, run), run.reports

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
) -> list[SuiteOutcome]:
    """The PR flow on a local repository: the working tree against `base_ref` (default: the
    remote's default branch). Nothing is fetched or posted."""
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
        )
        return run_flow(plan_flow(request))
    finally:
        git_repo.close()
