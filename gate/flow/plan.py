"""The flow's plan: what every suite of one flow shares, computed once from its request.

`plan_flow` reads the base commit's gate.yml from the commit's objects, at the path the
request names (`gate.flow.baseline`), and parses it once, as it will lie in the base checkout
the flow makes; builds from it the policy
that judges the PR (the base's, with the request's overrides where they tighten it,
`gate.flow.overrides`) and the notes on it for the comment, decides per suite whether it runs
(change detection: every mode decides it the same way), lists the base's suites the head
removes or renames (they fail), and takes the comments' templates from the base commit's
`templates:` folder (the head's only when the base has no gate.yml). The full flow, `gate
check`, `gate demo` and the Action's shard and finish modes each start from one plan; nothing
after it reads a gate.yml or builds a policy again. The response cache is the base's
(`cache.dir`) or the workflow's (`$GATE_CACHE_DIR`), never the head's.

Planning also validates what the PR brings before any side runs (`validate_head`): the head's
config, the case files of every suite that runs, the system files it names, its prompt
templates (and what they include) and the comment templates. Bad input the PR brings is
then always exit 2 naming the PR's file and line, whichever side would have read it first.
So is a response cache that holds answers committed to the repository (`refuse_planted_answers`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gate.compare.models import Finding
from gate.errors import InputError
from gate.flow.baseline import Baseline, flow_policy, policy_findings, read_baseline
from gate.flow.git import FileChange
from gate.flow.overrides import tightened
from gate.flow.request import FlowRequest
from gate.flow.submodules import require_submodules
from gate.flow.triggers import base_watch, relevant_changes, suite_triggers
from gate.inputs.config import AnthropicSystem, LoadedConfig, OpenAISystem
from gate.inputs.paths import relative_posix
from gate.inputs.policy import Policy
from gate.inputs.templates import TemplateSet, read_template_folder, template_set
from gate.providers.cache import resolve_cache_dir
from gate.providers.prompts import ChatPrompt
from gate.render import check_templates
from gate.run.cases import checked_cases
from gate.run.endpoint_keys import located, system_key_problem
from gate.run.preflight import case_files_problems, pythonpath_problems, system_files_problems
from gate.systems.chat_provider import chat_config


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
    it, each suite's plan, the response cache, and the comments' templates (the base's)."""

    request: FlowRequest
    baseline: Baseline
    policy: Policy
    notes: tuple[Finding, ...]
    suites: tuple[SuitePlan, ...]
    head_policy: Policy
    cache: Path  # the one response cache of every side of the flow
    templates: TemplateSet | None = None  # None: the built-in ones
    # The PR's own comment templates when others render its comment: rendered as well by
    # the caller, their output thrown away, so that a template that breaks is the PR's bad
    # input now (exit 2), not every later PR's after the merge.
    head_templates: TemplateSet | None = None

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

    @property
    def base_root(self) -> Path:
        """Where the base commit is checked out while the flow runs (`GitRepo.worktree`)."""
        assert self.baseline.root is not None
        return self.baseline.root


def plan_flow(request: FlowRequest) -> FlowPlan:
    revisions, head = request.revisions, request.config
    base_root = revisions.repo.worktree_path()
    baseline = read_baseline(revisions.repo, revisions.base_sha, request.config_at, head, base_root)
    if baseline.root is None:
        baseline = replace(baseline, root=base_root)
    policy, overridden = flow_policy(baseline, head, request.overrides)
    templates = comment_templates(head, revisions.repo.root)
    shown = base_templates(request, baseline, templates)
    cache = cache_dir(request, baseline)
    suites = plan_suites(request, baseline, cache)
    if any(s.runs for s in suites):  # answers are read: none may be the repository's
        refuse_planted_answers(request, cache)
        require_submodules(request, baseline.loaded, [s.name for s in suites if s.runs])
    validate_head(request, [s for s in suites if s.runs], templates)
    return FlowPlan(
        request=request,
        baseline=baseline,
        policy=policy,
        notes=(*overridden, *policy_findings(baseline, head)),
        suites=tuple(suites),
        head_policy=tightened(head.config, request.overrides)[0],
        cache=cache,
        templates=shown,
        head_templates=templates if templates is not None and templates != shown else None,
    )


def comment_templates(loaded: LoadedConfig, root: Path) -> TemplateSet | None:
    """The comment templates the folder `templates:` of `loaded` names, read from `root` as
    data (nothing outside the repository); None: the built-in ones."""
    if not loaded.config.templates:
        return None
    folder = loaded.base_dir / loaded.config.templates
    shown = relative_posix(folder, root) or str(folder)
    return read_template_folder(folder, shown, within=root)


def base_templates(
    request: FlowRequest, baseline: Baseline, head: TemplateSet | None
) -> TemplateSet | None:
    """The templates that render the comments: the base commit's `templates:` folder (a PR's
    own render comments once it is merged); the head's (`head`) when the base has no gate.yml
    or one config outside the repository serves both; the built-in ones when the base's
    gate.yml cannot be read."""
    if baseline.loaded is None or baseline.shared:
        return None if baseline.problem else head
    folder = baseline.loaded.config.templates
    if not folder or baseline.relative is None:
        return None
    where = (Path(baseline.relative).parent / folder).as_posix()
    files = request.revisions.repo.files_below(request.revisions.base_sha, where)
    shown = f"{where} (base {request.revisions.base_sha[:12]})"
    return template_set(shown, ((name, text.encode("utf-8")) for name, text in files))


def validate_head(
    request: FlowRequest, suites: Sequence[SuitePlan], templates: TemplateSet | None
) -> None:
    """What the head's runner would reject at its start, found before any side runs: the
    cases, the system's files, prompts and model config, the API key it needs, the
    pythonpath, the comment templates; each named at the PR's file and line. The head's code
    is not run here (the gate's process holds the secrets)."""
    head, root = request.config, request.revisions.repo.root
    for plan in suites:
        suite = head.config.suite(plan.name)
        if suite.framework is not None:  # its tests and task: the base's instrument files
            continue
        escapes = case_files_problems(head, suite, root)
        if escapes:
            raise escapes[0]
        checked_cases(head, suite)
        problems = system_files_problems(head, suite, root) + pythonpath_problems(head, root)
        if problems:
            raise problems[0]
        if isinstance(suite.system, OpenAISystem | AnthropicSystem):
            try:
                chat_config(suite.system, root)
            except InputError as exc:  # the model config's `provider:`, named at its line
                raise located(exc, head, suite) from None
            ChatPrompt(root, suite.system.model_config_file, suite.system.prompt, "system")
        key = system_key_problem(head, suite, root, request.io.environ)
        if key is not None:
            raise key
    if templates is not None:
        check_templates(templates)


def plan_suites(request: FlowRequest, baseline: Baseline, cache: Path) -> list[SuitePlan]:
    """Change detection: which suites run (the head's triggers or the base's `watch`), and
    which of them the base's gate.yml has; then the base's suites the head's lacks."""
    changes = _changes(request, cache)
    root = request.revisions.repo.root
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, root)
        relevant = relevant_changes(changes, patterns, base_watch(baseline.loaded, suite.name))
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


def cache_dir(request: FlowRequest, baseline: Baseline) -> Path:
    """The one response cache of both sides: the base's `cache.dir`, else the workflow's
    (`$GATE_CACHE_DIR`, else the default). The head's `cache.dir` never decides it: a PR
    could point it at answers it placed there itself."""
    configured = baseline.loaded.config.cache.dir if baseline.loaded is not None else None
    return resolve_cache_dir(configured, request.io.environ, request.revisions.repo.root)


def refuse_planted_answers(request: FlowRequest, cache: Path) -> None:
    """A response cache inside the repository that holds files git tracks stops a flow that
    runs a suite (exit 2) before anything runs: a PR could commit answers there for its own
    requests, which the head side would then take for its system's. (A flow that runs
    nothing reads no answer: committed ones are no change, and it is skipped.)"""
    repo = request.revisions.repo
    folder = relative_posix(cache, repo.root)
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


def _changes(request: FlowRequest, cache: Path) -> list[FileChange]:
    revisions = request.revisions
    repo = revisions.repo
    head = revisions.head_sha
    since = repo.merge_base(revisions.base_sha, head or "HEAD", fetch=revisions.fetch)
    changes = repo.changed_files(since, head)
    # Our own reports and the response cache are never a change, even when committed or not
    # ignored (gate check runs in the working tree).
    own = [relative_posix(path, repo.root) for path in (request.io.out_dir, cache)]
    for rel in filter(None, own):
        changes = [c for c in changes if not any(p.startswith(rel + "/") for p in c.paths)]
    return changes
