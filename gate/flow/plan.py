"""The flow's plan: what every suite of one flow shares, computed once from its request.

`plan_flow` reads the base commit's gate.yml (`gate.flow.baseline`), builds from it the policy
that judges the PR (the base's, with the request's overrides) and the notes on it for the
comment, decides per suite whether it runs (change detection: every mode decides it the same
way), lists the base's suites the head removes or renames (they fail), and takes the comments'
templates from the base commit's `templates:` folder (the head's only when the base has no
gate.yml). The full flow, `gate check`, `gate demo` and the Action's shard and finish modes
each start from one plan; nothing after it reads the base's gate.yml or builds a policy again.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.models import Finding
from gate.errors import InputError
from gate.flow.baseline import Baseline, flow_policy, policy_findings, read_baseline
from gate.flow.git import FileChange, GitRepo
from gate.flow.request import FlowRequest
from gate.flow.triggers import relevant_changes, suite_triggers
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.providers.cache import resolve_cache_dir
from gate.render import RenderContext


@dataclass(frozen=True)
class SuitePlan:
    """Whether a suite runs: the changes that touch it, or why it is skipped; whether the
    base has the suite (`baseline`: its instrument measures both sides) or it is new; and
    whether the head removed (or renamed) a suite of the base's (`removed`: it fails)."""

    name: str
    changes: tuple[FileChange, ...]
    skip_reason: str | None
    baseline: bool = True
    removed: bool = False

    @property
    def runs(self) -> bool:
        return self.skip_reason is None and not self.removed


@dataclass(frozen=True)
class FlowPlan:
    """One flow's request and what its suites share: the base's gate.yml, the policy that
    judges every suite, the head's (what its own instrument would say), the flow's notes on
    it, each suite's plan, and the comments' render context (the request's `display`, with
    the base's templates)."""

    request: FlowRequest
    baseline: Baseline
    policy: Policy
    notes: tuple[Finding, ...]
    suites: tuple[SuitePlan, ...]
    render: RenderContext
    head_policy: Policy

    @property
    def runnable(self) -> list[SuitePlan]:
        return [s for s in self.suites if s.runs]


def plan_flow(request: FlowRequest) -> FlowPlan:
    revisions, head = request.revisions, request.config
    refuse_planted_answers(request)
    baseline = read_baseline(revisions.repo, revisions.base_sha, head)
    overrides = request.overrides
    threshold, severities = overrides.threshold, overrides.block_severities
    return FlowPlan(
        request=request,
        baseline=baseline,
        policy=flow_policy(baseline, head, threshold=threshold, block_severities=severities),
        notes=tuple(policy_findings(baseline, head)),
        suites=tuple(plan_suites(request, baseline)),
        render=request.display.model_copy(update=comment_templates(request, baseline)),
        head_policy=Policy.from_config(
            head.config, threshold=threshold, block_severities=severities
        ),
    )


def comment_templates(request: FlowRequest, baseline: Baseline) -> dict[str, object]:
    """Where the comments' templates come from: the base commit's `templates:` folder (a
    PR's templates render its comment only once merged); the head's when the base has no
    gate.yml (or one config outside the repository serves both); the built-in ones when the
    base's gate.yml cannot be read."""
    head = request.config
    if baseline.loaded is None or baseline.shared:
        if baseline.problem or not head.config.templates:
            return {}
        return {"template_dir": (head.base_dir / head.config.templates).resolve()}
    folder = baseline.loaded.config.templates
    if not folder or baseline.relative is None:
        return {}
    repo: GitRepo = request.revisions.repo
    where = (Path(baseline.relative).parent / folder).as_posix()
    sha = request.revisions.base_sha
    return {"template_files": tuple(repo.files_below(sha, where)), "template_origin": where}


def plan_suites(request: FlowRequest, baseline: Baseline) -> list[SuitePlan]:
    """Change detection: which suites run, and which of them the base's gate.yml has; then
    the base's suites the head's lacks."""
    changes = _changes(request)
    root = request.revisions.repo.root
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, root)
        relevant = relevant_changes(changes, patterns)
        skip = None if relevant else _skip_reason(changes, patterns)
        plans.append(SuitePlan(suite.name, tuple(relevant), skip, baseline.has_suite(suite.name)))
    head = {suite.name for suite in request.config.config.suites}
    gone = [name for name in baseline.suites if name not in head]
    plans += [SuitePlan(name, (), None, removed=True) for name in gone]
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


def refuse_planted_answers(request: FlowRequest) -> None:
    """A response cache inside the repository that holds files git tracks stops the flow
    (exit 2) before anything runs: a PR could commit answers there for its own requests,
    which the head side would then take for its system's."""
    repo = request.revisions.repo
    folder = relative_posix(cache_dir(request), repo.root)
    if folder is None:
        return
    tracked = repo.tracked_below(folder)
    if tracked:
        raise InputError(
            f"the response cache holds {len(tracked):,} file{'s' if len(tracked) > 1 else ''} "
            f"committed to the repository (such as {tracked[0]}): committed answers would be "
            "taken for the system's; remove them from git (the cache writes a .gitignore of its "
            "own)",
            file=folder,
            key="cache.dir",
        )


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
