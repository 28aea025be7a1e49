"""The flow's plan: what every suite of one flow shares, computed once from its request.

`plan_flow` reads the base commit's gate.yml (`gate.flow.baseline`), builds from it the policy
that judges the PR (the base's, with the request's overrides) and the notes on it for the
comment, decides per suite whether it runs (change detection: every mode decides it the same
way), and sets where the comments' templates come from. The full flow, `gate check`,
`gate demo` and the Action's shard and finish modes each start from one plan; nothing after it
reads the base's gate.yml or builds a policy again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.models import Finding
from gate.flow.baseline import Baseline, flow_policy, policy_findings, read_baseline
from gate.flow.git import FileChange
from gate.flow.request import FlowRequest
from gate.flow.triggers import relevant_changes, suite_triggers
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.providers.cache import resolve_cache_dir
from gate.render import RenderContext


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

    @property
    def compared(self) -> list[SuitePlan]:
        """The suites whose drop test counts against the PR's false-block rate: the ones
        that run and have a baseline."""
        return [s for s in self.runnable if s.baseline]

    @property
    def drop_level(self) -> float:
        """Each suite's share of the PR's false-block rate before Holm's steps (Bonferroni):
        what `repeats: auto` spends over its looks."""
        return self.policy.false_block_rate / max(1, len(self.compared))


def plan_flow(request: FlowRequest) -> FlowPlan:
    revisions, head = request.revisions, request.config
    baseline = read_baseline(revisions.repo, revisions.base_sha, head)
    overrides = request.overrides
    policy = flow_policy(
        baseline, head, threshold=overrides.threshold, block_severities=overrides.block_severities
    )
    templates = head.base_dir / head.config.templates if head.config.templates else None
    render = request.display
    if templates is not None:
        render = render.model_copy(update={"template_dir": templates.resolve()})
    return FlowPlan(
        request=request,
        baseline=baseline,
        policy=policy,
        notes=tuple(policy_findings(baseline, head)),
        suites=tuple(plan_suites(request, baseline)),
        render=render,
    )


def plan_suites(request: FlowRequest, baseline: Baseline) -> list[SuitePlan]:
    """Change detection: which suites run, and which of them the base's gate.yml has."""
    changes = _changes(request)
    root = request.revisions.repo.root
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, root)
        relevant = relevant_changes(changes, patterns)
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
