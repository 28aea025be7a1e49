"""The flow's plan: what every suite of one flow shares, computed once from its request.

`plan_flow` reads the base commit's gate.yml (`gate.flow.baseline`), builds from it the policy
that judges the PR (the base's, with the request's overrides) and the notes on it for the
comment, decides per suite whether it runs (change detection: every mode decides it the same
way), and sets where the comments' templates come from. The full flow, `gate check`,
`gate demo` and the Action's shard and finish modes each start from one plan; nothing after it
reads the base's gate.yml or builds a policy again.

Planning also validates what the PR brings before any side runs (`validate_head`): the head's
config, the case files of every suite that runs, the system files it names, its prompt
templates (and what they include) and the comment templates. Bad input the PR brings is
then always exit 2 naming the PR's file and line, whichever side would have read it first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.models import Finding
from gate.flow.baseline import Baseline, flow_policy, policy_findings, read_baseline
from gate.flow.git import FileChange
from gate.flow.request import FlowRequest
from gate.flow.triggers import base_watch, relevant_changes, suite_triggers
from gate.inputs.config import AnthropicSystem, LoadedConfig, OpenAISystem
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.inputs.templates import TemplateSet, read_template_folder
from gate.providers.cache import resolve_cache_dir
from gate.providers.prompts import ChatPrompt
from gate.render import RenderContext, check_templates
from gate.run.preflight import pythonpath_problems, system_files_problems
from gate.run.side import suite_cases


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


@dataclass(frozen=True)
class FlowPlan:
    """One flow's request and what its suites share: the base's gate.yml, the policy that
    judges every suite, the flow's notes on it, each suite's plan, and the comments'
    render context (the request's `display`, with the config's templates)."""

    request: FlowRequest
    baseline: Baseline
    policy: Policy
    notes: tuple[Finding, ...]
    suites: tuple[SuitePlan, ...]
    render: RenderContext

    @property
    def runnable(self) -> list[SuitePlan]:
        return [s for s in self.suites if s.runs]


def plan_flow(request: FlowRequest) -> FlowPlan:
    revisions, head = request.revisions, request.config
    baseline = read_baseline(revisions.repo, revisions.base_sha, head)
    overrides = request.overrides
    policy = flow_policy(
        baseline, head, threshold=overrides.threshold, block_severities=overrides.block_severities
    )
    templates = comment_templates(head, revisions.repo.root)
    render = request.display.model_copy(update={"templates": templates})
    suites = plan_suites(request, baseline)
    validate_head(request, [s for s in suites if s.runs], templates)
    return FlowPlan(
        request=request,
        baseline=baseline,
        policy=policy,
        notes=tuple(policy_findings(baseline, head)),
        suites=tuple(suites),
        render=render,
    )


def comment_templates(loaded: LoadedConfig, root: Path) -> TemplateSet | None:
    """The comment templates the folder `templates:` of `loaded` names, read from `root` as
    data (nothing outside the repository); None: the built-in ones."""
    if not loaded.config.templates:
        return None
    folder = loaded.base_dir / loaded.config.templates
    shown = relative_posix(folder, root) or str(folder)
    return read_template_folder(folder, shown, within=root)


def validate_head(
    request: FlowRequest, suites: Sequence[SuitePlan], templates: TemplateSet | None
) -> None:
    """What `gate run` of the head would reject at its start, found before any side runs:
    the cases, the system's files and prompts, the pythonpath, the comment templates. The
    head's code is not run here (the gate's process holds the secrets)."""
    head, root = request.config, request.revisions.repo.root
    for plan in suites:
        suite = head.config.suite(plan.name)
        suite_cases(head, suite)
        problems = system_files_problems(head, suite, root) + pythonpath_problems(head, root)
        if problems:
            raise problems[0]
        if isinstance(suite.system, OpenAISystem | AnthropicSystem):
            ChatPrompt(root, suite.system.model_config_file, suite.system.prompt, "system")
    if templates is not None:
        check_templates(templates)


def plan_suites(request: FlowRequest, baseline: Baseline) -> list[SuitePlan]:
    """Change detection: which suites run (the head's triggers or the base's `watch`), and
    which of them the base's gate.yml has."""
    changes = _changes(request)
    root = request.revisions.repo.root
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, root)
        relevant = relevant_changes(changes, patterns, base_watch(baseline.loaded, suite.name))
        skip = None if relevant else _skip_reason(changes, patterns)
        plans.append(SuitePlan(suite.name, tuple(relevant), skip, baseline.has_suite(suite.name)))
    return plans


def _skip_reason(changes: Sequence[FileChange], patterns: Sequence[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in patterns[:8]) + (" …" if len(patterns) > 8 else "")
    if not changes:
        return "no file changed between the base and the head"
    return f"no watched file changed ({len(changes)} changed; watching {shown})"


def cache_dir(request: FlowRequest) -> Path:
    """The one response cache of both sides (handed to them as $GATE_CACHE_DIR)."""
    root = request.revisions.repo.root
    return resolve_cache_dir(request.config.config.cache.dir, request.io.environ, root)


def _changes(request: FlowRequest) -> list[FileChange]:
    revisions = request.revisions
    repo = revisions.repo
    head = revisions.head_sha
    since = repo.merge_base(revisions.base_sha, head or "HEAD", fetch=revisions.fetch)
    changes = repo.changed_files(since, head)
    # Our own reports and the response cache are never a change, even when committed or not
    # ignored (gate check runs in the working tree).
    own = [relative_posix(path, repo.root) for path in (request.io.out_dir, cache_dir(request))]
    for rel in filter(None, own):
        changes = [c for c in changes if not any(p.startswith(rel + "/") for p in c.paths)]
    return changes
