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
from gate.inputs.policy import PolicyKeys
from gate.inputs.shard import Shard, select_shard
from gate.providers.cache import resolve_cache_dir
from gate.report.io import ReportWriter
from gate.report.models import RunMeta, Summary
from gate.report.plan import AutoRecord, Plan
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
    # The side's own gate.yml (the PR flow's base side): its system and SDK run, measured with
    # `loaded`'s cases, checks, judge and sandbox limits.
    system_config: LoadedConfig | None = None
    heldout_detail: Path | None = None  # a folder for full held-out lines (never uploaded)
    # The checkout whose code judges (`expect.python` checks): its modules and, with the
    # side's `sandbox.pythonpath`, its SDK. None: `root`.
    checks_root: Path | None = None

    @property
    def own(self) -> LoadedConfig:
        return self.system_config or self.loaded


def suite_cases(loaded: LoadedConfig, suite: SuiteConfig) -> list[Case]:
    """The suite's cases, read from the config's checkout (the head's, in the PR flow)."""
    display_root = find_repo_root(loaded.base_dir) or loaded.base_dir
    cases = load_cases(suite.cases, loaded.base_dir, display_root)
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


def cache_dir(request: RunRequest) -> Path:
    """The response cache; a relative one lies in the repository of gate.yml (`-c`), which is
    the head's checkout for both sides of the PR flow, whatever the side's `--root`."""
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
    problems = system_files_problems(request.own, suite, env.root)
    problems += pythonpath_problems(request.own, env.root)
    problems += python_check_problems(request.own, request.checks_root or env.root, cases)
    if problems:
        raise problems[0]
    with ExitStack() as stack:
        system = build_system(suite.system, env)
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
        targets = sorted({t for c in cases for t in c.expect.python})
        if targets:
            ctx.python = stack.enter_context(python_checks_sandbox(request, env, targets))
        if config.judge is not None and any(c.expect.rubric for c in cases):
            from gate.checks.judge import open_judge

            ctx.judge = stack.enter_context(open_judge(config.judge, env))
        yield system, ctx


def python_checks_sandbox(
    request: RunRequest, env: SystemEnv, targets: list[str]
) -> AbstractContextManager[PythonCheckRunner]:
    """The sandbox of the team's own checks: the measuring config's limits, no prelude (that
    is for generated code), the modules of `targets` from the checkout whose code judges."""
    from gate.sandbox import open_sandbox

    limits = own_sandbox(request.loaded, request.system_config).model_copy(update={"prelude": ""})
    folder = (request.checks_root or env.root).resolve()
    modules = [target.partition(":")[0] for target in targets]
    return open_sandbox(limits, folder, modules)


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
    own = [request.system_config.path] if request.system_config else []
    files = [request.loaded.path, *own, *system.files(), *watched]
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
        auto=AutoRecord(plan=auto_plan(config)) if config.repeats == "auto" else None,
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


def auto_plan(keys: PolicyKeys) -> Plan:
    """The plan of `repeats: auto` under a policy's `max_repeats` (the flow's is the base's)."""
    return Plan(rule="spread", step=1, max_repeats=keys.max_repeats)


def run_repeats(request: RunRequest, config: GateConfig) -> int:
    """Runs per case of this `gate run`: the override, the config's, or round 0 of auto."""
    if request.repeats:
        return request.repeats
    return auto_plan(config).first if config.repeats == "auto" else config.repeats


def run_side(request: RunRequest) -> Summary:
    config = request.loaded.config
    suite = config.suite(request.suite)
    cases = suite_cases(request.loaded, suite)
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
