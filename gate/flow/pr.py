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
from gate.flow.baseline import Baseline, flow_policy, policy_findings, read_baseline
from gate.flow.git import FileChange, GitRepo
from gate.flow.judging import SuiteRun, judge
from gate.flow.sides import Side, run_sides, side_env
from gate.flow.system_diff import with_system_diff
from gate.flow.triggers import case_globs, relevant_changes, suite_triggers
from gate.inputs.config import (
    LoadedConfig,
    load_config,
)
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.inputs.shard import Shard
from gate.providers.cache import resolve_cache_dir
from gate.render import RenderContext, render_comment, render_summary

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
    use_cache: bool = True  # False: fresh answers, the response cache neither read nor written
    threshold: float | None = None
    block_severities: list[str] | None = None
    repository: str | None = None
    server_url: str = "https://github.com"
    display_head_sha: str | None = None
    run_url: str | None = None
    report_hint: str | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    heldout_detail: Path | None = None  # a folder for full held-out reports (never uploaded)


def exit_on_sigterm() -> None:
    """A cancelled job or a killed `gate check` still stops the runs and removes the base
    worktree: SIGTERM becomes SystemExit, which runs every `finally` on the way out."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def combined_verdict(outcomes: Sequence[SuiteOutcome]) -> str:
    verdicts = {o.comparison.verdict for o in outcomes}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def exit_code(outcomes: Sequence[SuiteOutcome]) -> int:
    return EXIT_CODES[combined_verdict(outcomes)]


# --- the flow --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuitePlan:
    """Whether a suite runs: the changes that touch it, or why it is skipped; and whether the
    base has the suite (`baseline`: its own system runs on the base side) or it is new."""

    name: str
    changes: tuple[FileChange, ...]
    skip_reason: str | None
    baseline: bool = True

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


def cache_dir(request: FlowRequest) -> Path:
    """The one response cache of both sides (handed to them as $GATE_CACHE_DIR)."""
    config, root = request.config.config, request.repo.root
    return resolve_cache_dir(config.cache.dir, request.environ, root)


def _changes(request: FlowRequest) -> list[FileChange]:
    repo = request.repo
    since = repo.merge_base(request.base_sha, request.head_sha or "HEAD", fetch=request.fetch)
    changes = repo.changed_files(since, request.head_sha)
    # Our own reports and the response cache are never a change, even when committed or not
    # ignored (gate check runs in the working tree).
    own = [relative_posix(path, repo.root) for path in (request.out_dir, cache_dir(request))]
    for rel in filter(None, own):
        changes = [c for c in changes if not any(p.startswith(rel + "/") for p in c.paths)]
    return changes


def plan_suites(request: FlowRequest, baseline: Baseline) -> list[SuitePlan]:
    """Change detection: which suites run (every mode decides this the same way), and which
    of them the base's gate.yml has."""
    changes = _changes(request)
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, request.repo.root)
        relevant = relevant_changes(changes, patterns)
        skip = None if relevant else _skip_reason(changes, patterns)
        plans.append(SuitePlan(suite.name, tuple(relevant), skip, baseline.has_suite(suite.name)))
    return plans


def read_request_baseline(request: FlowRequest) -> Baseline:
    return read_baseline(request.repo, request.base_sha, request.config)


def request_policy(request: FlowRequest, baseline: Baseline) -> Policy:
    """The base's policy (the head's where the base has no gate.yml), with the command
    line's or the Action's overrides."""
    return flow_policy(
        baseline,
        request.config,
        threshold=request.threshold,
        block_severities=request.block_severities,
    )


def run_planned(
    request: FlowRequest,
    plans: Sequence[SuitePlan],
    baseline: Baseline,
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
        env = side_env(request.repo.subprocess_env(), cache_dir(request))
        return {
            plan.name: then(plan, _run_suite(request, plan, baseline, base_root, env, shard))
            for plan in runnable
        }


def _sides(
    request: FlowRequest, plan: SuitePlan, baseline: Baseline, base_root: Path, shard: Shard | None
) -> list[Side]:
    """The head, and the base with its own gate.yml's system, when the base has the suite."""
    folder = request.out_dir.resolve() / suite_folder(plan.name)
    private = request.heldout_detail
    detail = ("--heldout-detail", str(private / suite_folder(plan.name))) if private else ()
    own = baseline.config_in(base_root)
    base_args = ("--system-config", str(own)) if own is not None else ()
    head = Side("head", request.repo.root, folder / f"{report_label('head', shard)}.jsonl", detail)
    if not plan.baseline:
        return [head]
    base_report = folder / f"{report_label('base', shard)}.jsonl"
    return [Side("base", base_root, base_report, (*base_args, *detail)), head]


def _run_suite(
    request: FlowRequest,
    plan: SuitePlan,
    baseline: Baseline,
    base_root: Path,
    env: Mapping[str, str],
    shard: Shard | None,
) -> SuiteRun:
    sides = _sides(request, plan, baseline, base_root, shard)
    names = " and ".join(s.name for s in sides) + ("" if plan.baseline else " (a new suite)")
    what = f"shard {shard} of {names}" if shard else names
    print(f"[gate] suite {plan.name}: running {what}", file=request.stream, flush=True)
    extra = () if request.use_cache else ("--no-cache",)
    run_sides(sides, request.config.path, plan.name, env, request.stream, shard=shard, extra=extra)
    auto = request.config.config.repeats == "auto" and len(sides) == 2
    if auto and not any(s.returncode for s in sides):
        from gate.flow.adaptive import spend

        spend(
            request.config.config, request.config.path, plan.name, sides, env, request.stream,
            request_policy(request, baseline), shard=shard, extra=extra,
        )  # fmt: skip
    return SuiteRun(tuple(s.status(shard) for s in sides), {s.name: s.report for s in sides})


def outcomes(
    request: FlowRequest, plans: Sequence[SuitePlan], judged: Mapping[str, Judged]
) -> list[SuiteOutcome]:
    """Every suite's verdict rendered as its comment and job summary; skipped ones too."""
    result = []
    for plan in plans:
        if plan.runs:
            comparison, reports = judged[plan.name]
            suite = request.config.config.suite(plan.name)
            cases = case_globs(request.config, suite, request.repo.root)
            comparison = with_system_diff(
                request.repo, request.base_sha, request.head_sha, comparison, cases
            )
        else:
            comparison, reports = skipped_comparison(plan.skip_reason or "", suite=plan.name), {}
        markdown, summary = _render(request, comparison, plan.name)
        changed = tuple(str(c) for c in plan.changes)
        result.append(SuiteOutcome(plan.name, comparison, markdown, summary, changed, reports))
    return result


def run_flow(request: FlowRequest) -> list[SuiteOutcome]:
    """Decide per suite whether it runs, run base and head where needed, compare, render."""
    plans = plan_suites(request, baseline := read_request_baseline(request))
    policy = request_policy(request, baseline)
    notes = policy_findings(baseline, request.config)

    def judged(plan: SuitePlan, run: SuiteRun) -> Judged:
        return judge(run, plan.name, policy, baseline=plan.baseline, findings=notes), run.reports

    return outcomes(request, plans, run_planned(request, plans, baseline, judged))


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
            repo=git_repo,
            config=loaded,
            base_sha=base_sha,
            head_sha=None,
            out_dir=out_dir,
            use_cache=use_cache,
            threshold=threshold,
            block_severities=block_severities,
            display_head_sha=git_repo.head_sha(),
            report_hint=str(out_dir),
            environ=env,
            stream=stream or sys.stderr,
            heldout_detail=heldout_detail.resolve() if heldout_detail else None,
        )
        return run_flow(request)
    finally:
        git_repo.close()
