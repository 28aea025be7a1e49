"""Run one side of a comparison: config + cases + system -> report files.

This is `gate run`; the PR flow calls it once per side (each in its own process).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import __version__
from gate.checks import CheckContext
from gate.checks.base import PythonCheckRunner
from gate.errors import InputError
from gate.inputs.cases import Case, load_cases
from gate.inputs.config import GateConfig, LoadedConfig, SuiteConfig
from gate.inputs.paths import display_path
from gate.inputs.policy import PolicyKeys
from gate.inputs.shard import Shard, select_shard
from gate.providers.cache import resolve_cache_dir
from gate.report.io import ReportWriter
from gate.report.models import RunMeta, Summary
from gate.report.plan import AutoRecord, Plan
from gate.run.endpoint_keys import judge_key_problem, located, system_key_problem
from gate.run.own_system import own_sandbox, own_suite
from gate.run.preflight import (
    python_check_problems,
    pythonpath_problems,
    system_files_problems,
)
from gate.run.progress import Progress
from gate.run.provenance import find_repo_root, git_state, hash_files, now_iso
from gate.run.runner import RunOptions, run_cases
from gate.systems import SystemEnv, build_system
from gate.systems.base import System


@dataclass
class RunRequest:
    loaded: LoadedConfig
    suite: str | None = None
    root: Path = field(default_factory=Path.cwd)
    out_dir: Path = Path("reports")
    label: str = "run"
    use_cache: bool = True
    record: Path | None = None
    shard: Shard | None = None
    repeats: int | None = None
    concurrency: int | None = None
    cases_from: Path | None = None  # extend: run only these cases, adding to the report
    append: bool = False
    show_progress: bool = True
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    # The side's own gate.yml (the PR flow's head side): its system and SDK run, measured with
    # `loaded`'s cases, checks, judge, prices and sandbox limits (the base's instrument).
    system_config: LoadedConfig | None = None
    heldout_detail: Path | None = None  # a folder for full held-out lines (never uploaded)
    # The checkout whose code judges (`expect.python` checks): its modules and, with the
    # measuring config's `sandbox.pythonpath`, their SDK. None: `root`. In the PR flow the
    # base's checkout, for both sides.
    checks_root: Path | None = None
    # A gate.yml whose suite of the same name brings more cases (the PR's): those whose id
    # `loaded`'s suite lacks are asked too and marked `added` in the report.
    added_from: LoadedConfig | None = None
    cache_dir: Path | None = None  # the response cache (the PR flow's one folder of both sides)
    answers: Path | None = None  # recorded answers (a replay file) instead of the system

    @property
    def own(self) -> LoadedConfig:
        return self.system_config or self.loaded

    @property
    def judging_root(self) -> Path:
        return (self.checks_root or self.root).resolve()


def wanted_ids(path: Path) -> list[str]:
    """The case ids of a list file (`--cases-from`), one a line, in order, once each."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read the case list: {exc.strerror}", file=path) from None
    return list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))


def suite_cases(loaded: LoadedConfig, suite: SuiteConfig) -> list[Case]:
    """The suite's cases, read from the config's checkout (the base's, in the PR flow)."""
    return _checked(loaded, suite, read_suite_cases(loaded, suite))


def read_suite_cases(loaded: LoadedConfig, suite: SuiteConfig) -> list[Case]:
    """The cases of `suite` (its case files, or its promptfoo config's tests), shown by their
    path in the config's repository."""
    display_root = find_repo_root(loaded.base_dir) or loaded.base_dir
    if suite.promptfoo is not None:
        from gate.promptfoo.inputs.suites import suite_cases as promptfoo_suite_cases

        return promptfoo_suite_cases(loaded.path, suite)
    try:
        cases = load_cases(suite.cases or [], loaded.base_dir, display_root)
    except InputError as exc:
        if exc.key != "cases" or exc.line is not None:
            raise
        raise InputError(  # no file matched: named at the suite's `cases:` line
            f"suite {suite.name!r}: {exc.message}",
            file=display_path(loaded.path, display_root),
            line=loaded.suite_line(suite.name, "cases"),
            key="cases",
        ) from None
    return cases


def added_cases(
    new: list[Case], checks_root: Path, measuring: LoadedConfig
) -> tuple[list[Case], list[Case]]:
    """Cases the measuring suite lacks, marked `added`: those the measuring instrument can
    judge, and those left out because it cannot (their `expect.python` code is not in
    `checks_root`, or their `expect.rubric` needs a judge the measuring gate.yml lacks)."""
    marked = [c.model_copy(update={"added": True}) for c in new]
    no_judge = measuring.config.judge is None

    def judgeable(case: Case) -> bool:
        if no_judge and (case.expect.rubric or any(a.grader is None for a in case.graded)):
            return False
        return not python_check_problems(measuring, checks_root, [case])

    judged = [c for c in marked if judgeable(c)]
    return judged, [c for c in marked if c not in judged]


def measured_cases(request: RunRequest) -> list[Case]:
    """The suite's cases and those `added_from` brings (after them, so indexes stay)."""
    suite = request.loaded.config.suite(request.suite)
    cases = suite_cases(request.loaded, suite)
    source = request.added_from
    own = next((s for s in source.config.suites if s.name == suite.name), None) if source else None
    if source is not None and own is not None:
        known = {c.id for c in cases}
        new = [c for c in read_suite_cases(source, own) if c.id not in known]
        more, _ = added_cases(new, request.judging_root, request.loaded)
        _require_services(request.loaded, more)
        cases += more
    return cases


def _checked(loaded: LoadedConfig, suite: SuiteConfig, cases: list[Case]) -> list[Case]:
    if not cases:
        raise InputError(f"suite {suite.name!r} has no cases", file=loaded.path, key="cases")
    _require_services(loaded, cases)
    return cases


def _require_services(loaded: LoadedConfig, cases: list[Case]) -> None:
    if loaded.config.judge is None:
        needing = [c for c in cases if c.expect.rubric]
        if needing:
            raise InputError(
                f"case {needing[0].id!r} has `expect.rubric` but gate.yml has no `judge`",
                file=needing[0].file,
                line=needing[0].line,
                key="expect.rubric",
            )
        ungraded = [c for c in cases if any(a.grader is None for a in c.graded)]
        if ungraded:
            raise InputError(
                f"case {ungraded[0].id!r} has an `llm-rubric` assertion but no grader: name one "
                "in the promptfoo config (`defaultTest.options.provider`) or set `judge` in "
                "gate.yml",
                file=ungraded[0].file,
                line=ungraded[0].line,
                key="assert",
            )


def cache_dir(request: RunRequest) -> Path:
    """The response cache: the one given (the PR flow's, for both sides), else gate.yml's; a
    relative one lies in the repository of gate.yml (`-c`), whatever the side's `--root`."""
    if request.cache_dir is not None:
        return request.cache_dir.resolve()
    loaded = request.loaded
    root = find_repo_root(loaded.base_dir) or loaded.base_dir
    return resolve_cache_dir(loaded.config.cache.dir, request.environ, root)


def system_env(request: RunRequest) -> SystemEnv:
    config = request.loaded.config
    return SystemEnv(
        root=request.root.resolve(),
        config_dir=request.loaded.base_dir,
        environ=request.environ,
        cache_dir=cache_dir(request),
        use_cache=request.use_cache and config.cache.enabled,
        prices={name: price.model_dump() for name, price in config.prices.items()},
        concurrency=request.concurrency or config.concurrency,
    )


@contextmanager
def open_services(
    request: RunRequest, cases: list[Case], env: SystemEnv
) -> Iterator[tuple[System, CheckContext]]:
    """The system under test, and the sandbox and judge when some case needs them."""
    config = request.loaded.config
    suite = own_suite(request.loaded, request.system_config, request.suite)
    problems = [] if request.answers else system_files_problems(request.own, suite, env.root)
    problems += pythonpath_problems(request.own, env.root)
    problems += python_check_problems(request.loaded, request.judging_root, cases)
    keys = [judge_key_problem(request.loaded, cases, env.environ)]
    if not request.answers:
        keys.append(system_key_problem(request.own, suite, env.root, env.environ))
    problems += [p for p in keys if p is not None]
    if problems:
        raise problems[0]
    with ExitStack() as stack:
        try:
            system = _system(request, suite, env)
        except InputError as exc:  # a refusal of the system's, named at gate.yml's line
            raise located(exc, request.own, suite) from None
        stack.callback(system.close)
        if request.record is not None:
            from gate.systems.record import RecordingSystem

            system = RecordingSystem(system, request.record)
            stack.callback(system.close)
        ctx = CheckContext()
        if any(c.expect.has_code_checks for c in cases):
            from gate.sandbox import open_sandbox

            sandbox = own_sandbox(request.loaded, request.system_config)
            ctx.sandbox = stack.enter_context(open_sandbox(sandbox, env.root))
        targets = sorted({t for c in cases for t in c.python_targets})
        if targets:
            sources = {
                k: v for c in cases if c.assertions for k, v in c.assertions.python_sources.items()
            }
            ctx.python = stack.enter_context(python_checks_sandbox(request, env, targets, sources))
        open_judges(stack, ctx, config, cases, env)
        yield system, ctx


def _system(request: RunRequest, suite: SuiteConfig, env: SystemEnv) -> System:
    if request.answers is not None:
        from gate.systems.replay import RecordedAnswers

        return RecordedAnswers(request.answers, env)
    return build_system(suite.system, env)


def open_judges(
    stack: ExitStack, ctx: CheckContext, config: GateConfig, cases: list[Case], env: SystemEnv
) -> None:
    """gate.yml's judge when a case asks it, and each `llm-rubric` grader the cases name."""
    graded = [a for c in cases for a in c.graded]
    asked = any(c.expect.rubric for c in cases) or any(a.grader is None for a in graded)
    if not (asked or graded):
        return
    from gate.checks.judge import open_judge
    from gate.promptfoo.checks import grader_config

    if config.judge is not None and asked:
        ctx.judge = stack.enter_context(open_judge(config.judge, env))
    for assertion in graded:
        spec = assertion.grader
        if spec is not None and spec.key not in ctx.graders:
            judge = open_judge(grader_config(spec), env, role=f"grader {spec.model}")
            ctx.graders[spec.key] = stack.enter_context(judge)


def python_checks_sandbox(
    request: RunRequest, env: SystemEnv, targets: list[str], sources: dict[str, str] | None = None
) -> AbstractContextManager[PythonCheckRunner]:
    """The sandbox of the team's own checks: the measuring config's, whole (its limits and its
    `sandbox.pythonpath`, the checks' SDK) but with no prelude (that is for generated code),
    and the modules of `targets` from the checkout whose code judges."""
    from gate.sandbox import open_sandbox

    limits = request.loaded.config.sandbox.model_copy(update={"prelude": ""})
    modules = [target.partition(":")[0] for target in targets]
    return open_sandbox(limits, request.judging_root, modules, sources)


def build_meta(
    request: RunRequest,
    config: GateConfig,
    system: System,
    ctx: CheckContext,
    n: int,
    suite_size: int,
) -> RunMeta:
    root = request.root.resolve()
    sha, dirty = git_state(root)
    suite = config.suite(request.suite)
    watched = watched_files(root, [*config.watch, *suite.watch], skip=cache_dir(request))
    # The side's own gate.yml: with a --system-config it names the same path in its
    # checkout as the measuring one does in the base's, and is the one the side changed.
    files = [request.own.path, *system.files(), *watched]
    sandbox: dict[str, Any] | None = ctx.sandbox.protections() if ctx.sandbox else None
    return RunMeta(
        gate_version=__version__,
        label=request.label,
        suite=config.suite(request.suite).name,
        created_at=now_iso(),
        root=str(root),
        git_sha=sha,
        git_dirty=dirty,
        config_file=str(request.loaded.path),
        system_config_file=str(request.system_config.path) if request.system_config else None,
        files=hash_files(files, [root, request.loaded.base_dir]),
        system=system.describe(),
        repeats=run_repeats(request, config),
        concurrency=request.concurrency or config.concurrency,
        auto=AutoRecord(plan=auto_plan(config)) if adaptive(request, config) else None,
        n_cases=n,
        suite_size=suite_size,
        shard=str(request.shard) if request.shard else None,
        sandbox=sandbox,
    )


def watched_files(
    root: Path, patterns: list[str], limit: int = 200, *, skip: Path | None = None
) -> list[Path]:
    """Files of the checkout matched by `watch` (prompts, model configs): hashed into the
    report so a reader can tell which versions produced it. Nothing below `skip` (the
    response cache, which a workflow may keep in the workspace) counts."""
    found: dict[Path, None] = {}
    skipped = skip.resolve() if skip is not None else None
    for pattern in patterns:
        if pattern.startswith("!"):
            continue
        pattern = pattern.rstrip("/") or "."
        if pattern.endswith("**"):
            pattern += "/*"  # pathlib's trailing `**` matches folders only
        for path in sorted(root.glob(pattern)):
            if skipped is not None and path.resolve().is_relative_to(skipped):
                continue
            if path.is_file() and ".git" not in path.parts:
                found[path] = None
            if len(found) >= limit:
                return list(found)
    return list(found)


def adaptive(request: RunRequest, config: GateConfig) -> bool:
    """The runs follow `repeats: auto`'s plan; recorded answers re-judged are a fixed number."""
    return config.repeats == "auto" and request.answers is None


def auto_plan(keys: PolicyKeys) -> Plan:
    """The plan of `repeats: auto` under a policy's `max_repeats` (the flow's is the base's)."""
    return Plan(rule="spread", step=1, max_repeats=keys.max_repeats)


def run_repeats(request: RunRequest, config: GateConfig) -> int:
    """Runs per case of this `gate run`: the override, or round 0 of the config's."""
    return request.repeats or first_repeats(config)


def first_repeats(config: GateConfig) -> int:
    """Round 0's runs of every case: `repeats`, or the first round of auto."""
    return auto_plan(config).first if config.repeats == "auto" else config.repeats


def run_side(request: RunRequest) -> Summary:
    config = request.loaded.config
    cases = measured_cases(request)
    if request.cases_from is not None:  # only these (what recorded answers exist for)
        wanted = set(wanted_ids(request.cases_from))
        cases = [c for c in cases if c.id in wanted]
    selected = select_shard(list(enumerate(cases)), request.shard)
    env = system_env(request)
    options = RunOptions(
        concurrency=request.concurrency or config.concurrency,
        repeats=run_repeats(request, config),
        timeout_s=config.timeout_s,
    )
    with open_services(request, cases, env) as (system, ctx):
        meta = build_meta(request, config, system, ctx, len(selected), len(cases))
        writers = [ReportWriter(request.out_dir, request.label)]
        if request.heldout_detail is not None:
            detail = ReportWriter(request.heldout_detail, request.label, heldout_detail=True)
            writers.append(detail)
        progress = Progress(
            len(selected), label=request.label, enabled=request.show_progress, traffic=env.traffic
        )
        started = time.perf_counter()
        for writer in writers:
            writer.open(meta)

        def sink(result: Any) -> None:
            for writer in writers:
                writer.write(result)
            progress.advance(result)

        run_cases(selected, system, ctx, options, sink)
        progress.finish()
        http = {role: traffic.as_dict() for role, traffic in env.traffic.items()}
        duration = time.perf_counter() - started
        summaries = [writer.close(meta, duration, http) for writer in writers]
        return summaries[0]
