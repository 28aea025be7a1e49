"""The PR flow: changed files -> which suites to run -> base and head runs -> verdicts.

Both sides use the head's config and cases; each side's system reads that side's own files.
A side is `gate run` in its own Python process (`-P`, so the checkout's folder is never put on
the import path by accident): a `python` system imports a module of the same name from two
checkouts, which one process cannot hold. The two sides of a suite run at the same time and
share the response cache; their progress is streamed with the side as prefix.

`gate check` and `gate demo` call `run_check`; `gate action` calls `run_flow` with what the
GitHub event names (see `gate.commands.action`). The flow's steps (`plan_suites`, `run_planned`,
`judge`, `outcomes`) are shared with the sharded modes of the action (`gate.flow.sharded`).

"""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

from gate.compare.models import EXIT_CODES, Comparison, skipped_comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.flow.git import FileChange, GitRepo
from gate.flow.sides import SIDES, Side, SideStatus, run_sides, side_env
from gate.flow.triggers import relevant_changes, suite_triggers
from gate.inputs.config import (
    LoadedConfig,
    load_config,
)
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.inputs.shard import Shard
from gate.providers.cache import default_cache_dir
from gate.render import RenderContext, render_comment, render_summary
from gate.render.reasons import explain
from gate.report.io import read_report
from gate.report.models import Report, RunMeta

VERDICT_ORDER = ("error", "fail", "pass", "skipped")


@dataclass(frozen=True)
class SuiteOutcome:
    """One suite of the flow: its comparison and the rendered comment and summary."""

    suite: str
    comparison: Comparison
    markdown: str
    summary: str
    changes: tuple[str, ...] = ()
    reports: dict[str, Path] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as `(suite, comparison, markdown)`."""
        return iter((self.suite, self.comparison, self.markdown))


@dataclass
class FlowRequest:
    repo: GitRepo
    config: LoadedConfig
    base_sha: str
    head_sha: str | None  # None: the working tree (gate check)
    out_dir: Path
    fetch: bool = False
    threshold: float | None = None
    block_severities: list[str] | None = None
    repository: str | None = None
    server_url: str = "https://github.com"
    display_head_sha: str | None = None
    run_url: str | None = None
    report_hint: str | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    stream: TextIO = field(default_factory=lambda: sys.stderr)


def exit_on_sigterm() -> None:
    """A cancelled job or a killed `gate check` still stops the runs and removes the base
    worktree: SIGTERM becomes SystemExit, which runs every `finally` on the way out."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def combined_verdict(outcomes: Sequence[SuiteOutcome]) -> str:
    verdicts = {o.comparison.verdict for o in outcomes}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def exit_code(outcomes: Sequence[SuiteOutcome]) -> int:
    return EXIT_CODES[combined_verdict(outcomes)]


# --- judging what the sides left ---------------------------------------------------------------


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
    reasons = [f"{s.who} could not run (exit {s.returncode}): {s.error}" for s in first]
    return Comparison(verdict="error", reasons=reasons, suite=suite)


def unrunnable_base(statuses: Sequence[SideStatus]) -> SideStatus | None:
    """The base run that could not take the head's configuration, if any."""
    return next((s for s in statuses if s.side == "base" and s.returncode != 0), None)


def _base_report(run: SuiteRun, suite: str) -> tuple[Report, list[str]]:
    """The base's report; an empty one (every case counts as added) when the base checkout
    lacks what the head's config needs."""
    base = unrunnable_base(run.statuses)
    if base is None:
        return read_report(run.reports["base"], fold_attempts=True), []
    note = (
        f"the base could not run the head's configuration ({base.error}); "
        "its cases count as added, so only the head's own failures can fail this PR"
    )
    empty = Report(meta=RunMeta(label="base", suite=suite), results=[], path=run.reports["base"])
    return empty, [note]


def judge(run: SuiteRun, suite: str, policy: Policy) -> Comparison:
    failed = failed_comparison(run.statuses, suite)
    if failed is not None:
        return failed
    base, notes = _base_report(run, suite)
    head = read_report(run.reports["head"], fold_attempts=True)
    comparison = explain(compare(base, head, policy))
    return comparison.model_copy(update={"notes": notes + comparison.notes})


# --- the flow --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuitePlan:
    """Whether a suite runs: the changes that touch it, or why it is skipped."""

    name: str
    changes: tuple[FileChange, ...]
    skip_reason: str | None

    @property
    def runs(self) -> bool:
        return self.skip_reason is None


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


def _render(request: FlowRequest, comparison: Comparison, suite: str) -> tuple[str, str]:
    config = request.config
    templates = config.base_dir / config.config.templates if config.config.templates else None
    ctx = RenderContext(
        suite=suite,
        repository=request.repository,
        server_url=request.server_url,
        head_sha=request.display_head_sha or request.head_sha,
        base_sha=request.base_sha,
        run_url=request.run_url,
        report_hint=request.report_hint,
        template_dir=templates.resolve() if templates else None,
    )
    return render_comment(comparison, ctx), render_summary(comparison, ctx)


def _skip_reason(changes: Sequence[FileChange], patterns: Sequence[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in patterns[:8]) + (" …" if len(patterns) > 8 else "")
    if not changes:
        return "no file changed between the base and the head"
    return f"no watched file changed ({len(changes)} changed; watching {shown})"


def _changes(request: FlowRequest) -> list[FileChange]:
    repo = request.repo
    since = repo.merge_base(request.base_sha, request.head_sha or "HEAD", fetch=request.fetch)
    changes = repo.changed_files(since, request.head_sha)
    out_rel = relative_posix(request.out_dir, repo.root)
    if out_rel:  # our own reports are never a change (gate check runs in the working tree)
        changes = [c for c in changes if not any(p.startswith(out_rel + "/") for p in c.paths)]
    return changes


def plan_suites(request: FlowRequest) -> list[SuitePlan]:
    """Change detection: which suites run (every mode decides this the same way)."""
    changes = _changes(request)
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, request.repo.root)
        relevant = relevant_changes(changes, patterns)
        skip = None if relevant else _skip_reason(changes, patterns)
        plans.append(SuitePlan(suite.name, tuple(relevant), skip))
    return plans


def flow_policy(request: FlowRequest) -> Policy:
    return Policy.from_config(
        request.config.config,
        threshold=request.threshold,
        block_severities=request.block_severities,
    )


def run_planned(
    request: FlowRequest,
    plans: Sequence[SuitePlan],
    then: Callable[[SuitePlan, SuiteRun], T],
    *,
    shard: Shard | None = None,
) -> dict[str, T]:
    """Run both sides (or `shard` of them) of every suite that needs it, in one base worktree;
    `then` takes each suite's runs as they end, so a bad head config stops at the first suite."""
    runnable = [p for p in plans if p.runs]
    if not runnable:
        return {}
    with request.repo.worktree(request.base_sha) as base_root:
        env = side_env(request.repo.subprocess_env(), default_cache_dir(request.environ))
        return {
            plan.name: then(plan, _run_suite(request, plan.name, base_root, env, shard))
            for plan in runnable
        }


def _run_suite(
    request: FlowRequest,
    suite: str,
    base_root: Path,
    env: Mapping[str, str],
    shard: Shard | None,
) -> SuiteRun:
    folder = request.out_dir.resolve() / suite_folder(suite)
    roots = {"base": base_root, "head": request.repo.root}
    sides = [Side(n, roots[n], folder / f"{report_label(n, shard)}.jsonl") for n in SIDES]
    what = f"shard {shard} of base and head" if shard else "base and head"
    print(f"[gate] suite {suite}: running {what}", file=request.stream, flush=True)
    run_sides(sides, request.config.path, suite, env, request.stream, shard=shard)
    return SuiteRun(tuple(s.status(shard) for s in sides), {s.name: s.report for s in sides})


def outcomes(
    request: FlowRequest, plans: Sequence[SuitePlan], judged: Mapping[str, Judged]
) -> list[SuiteOutcome]:
    """Every suite's verdict rendered as its comment and job summary; skipped ones too."""
    result = []
    for plan in plans:
        if plan.runs:
            comparison, reports = judged[plan.name]
        else:
            comparison, reports = skipped_comparison(plan.skip_reason or "", suite=plan.name), {}
        markdown, summary = _render(request, comparison, plan.name)
        changed = tuple(str(c) for c in plan.changes)
        result.append(SuiteOutcome(plan.name, comparison, markdown, summary, changed, reports))
    return result


def run_flow(request: FlowRequest) -> list[SuiteOutcome]:
    """Decide per suite whether it runs, run base and head where needed, compare, render."""
    plans = plan_suites(request)
    policy = flow_policy(request)

    def judged(plan: SuitePlan, run: SuiteRun) -> Judged:
        return judge(run, plan.name, policy), run.reports

    return outcomes(request, plans, run_planned(request, plans, judged))


# --- gate check ------------------------------------------------------------------------------


def run_check(
    repo: Path,
    config: Path,
    base_ref: str | None,
    out_dir: Path,
    *,
    threshold: float | None = None,
    block_severities: list[str] | None = None,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[SuiteOutcome]:
    """The PR flow on a local repository: the working tree against `base_ref` (default: the
    remote's default branch). Nothing is fetched or posted."""
    env = dict(os.environ if environ is None else environ)
    git_repo = GitRepo(repo, environ=env)
    try:
        loaded = load_config(config)
        base_sha = git_repo.resolve_ref(base_ref or git_repo.default_base(), fetch=False)
        request = FlowRequest(
            repo=git_repo,
            config=loaded,
            base_sha=base_sha,
            head_sha=None,
            out_dir=out_dir,
            threshold=threshold,
            block_severities=block_severities,
            display_head_sha=git_repo.head_sha(),
            report_hint=str(out_dir),
            environ=env,
            stream=stream or sys.stderr,
        )
        return run_flow(request)
    finally:
        git_repo.close()
