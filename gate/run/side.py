"""Run one side: a `SideSpec` -> results, case by case, for as long as the side is asked.

`SideRunner` opens the side's services once (its system, and the sandbox and judge when a case
needs them; for an inspect or pytest suite, its framework: the run folder and the framework's
process, which list the suite's cases) and then answers requests: `run(ids, repeats)` runs each
listed case (all of them, or its shard's, for `ids=None`) `repeats` more times and hands each
case's result, with every run it has had so far, to a sink. `gate run` drives one in its own
process and writes the report as results come; the PR flow drives one per side in a runner
process of its own (`gate.run.serve`) for a whole suite, `repeats: auto`'s rounds included.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from gate import __version__
from gate.checks import CheckContext, plan_case
from gate.errors import InputError
from gate.inputs.cases import Case
from gate.inputs.config import LoadedConfig, SuiteConfig
from gate.inputs.shard import select_shard
from gate.providers.cache import resolve_cache_dir
from gate.report.descriptions import SandboxInfo, SystemInfo
from gate.report.models import Attempt, CaseResult, RunMeta
from gate.report.plan import AutoRecord
from gate.run.cases import checked_cases
from gate.run.progress import Progress
from gate.run.provenance import find_repo_root, git_state, hash_files, now_iso
from gate.run.runner import RunOptions, aggregate, run_attempt, run_cases
from gate.run.spec import SideSpec, measure_of, own_of
from gate.systems import SystemEnv
from gate.systems.base import System

if TYPE_CHECKING:
    from gate.frameworks import FrameworkSide

Sink = Callable[[CaseResult], None]


class SideRunner:
    """A side's system and checks (or its framework: an inspect or pytest suite), open for
    the runner's life; each case's runs so far."""

    def __init__(self, spec: SideSpec, environ: dict[str, str] | None = None) -> None:
        self.spec = spec
        self._index(list(spec.measure.cases))
        self.attempts: dict[str, list[Attempt]] = {}
        self.env = system_env(spec, dict(os.environ if environ is None else environ))
        self._stack = ExitStack()
        self.system: System | None = None
        self.framework: FrameworkSide | None = None
        self.ctx = CheckContext()
        self.meta: RunMeta | None = None

    def _index(self, cases: list[Case]) -> None:
        self.cases = cases
        self.selected = select_shard(list(enumerate(cases)), self.spec.shard_of)
        self.by_id = {case.id: (index, case) for index, case in enumerate(cases)}

    def __enter__(self) -> SideRunner:
        with ExitStack() as stack:  # closed at once when opening fails
            self.meta = self._open(stack)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _open(self, stack: ExitStack) -> RunMeta:
        """The side's services, and what its report says of them. A framework lists the
        suite's cases as it opens: the shard is chosen from them."""
        from gate.run.services import open_checks, open_framework, open_system

        if self.spec.measure.framework is not None:
            self.framework = open_framework(stack, self.spec, self.env)
            self._index(self.framework.cases)
            return framework_meta(self.spec, self.framework, len(self.selected))
        self.system = open_system(stack, self.spec, self.env)
        self.ctx = open_checks(stack, self.spec, [c for _, c in self.selected], self.env)
        return build_meta(self.spec, self.system, self.ctx, len(self.selected))

    @property
    def traffic(self) -> dict[str, dict[str, int]]:
        return {role: traffic.as_dict() for role, traffic in self.env.traffic.items()}

    def run(self, ids: Sequence[str] | None, repeats: int, sink: Sink) -> None:
        """Each case of `ids` (None: every selected case) `repeats` more times; each case's
        result, over all its runs, goes to `sink` as it finishes."""
        assert self.meta is not None, "enter the runner first"
        chosen = self._chosen(ids)
        progress = Progress(
            len(chosen),
            label=self.spec.label,
            enabled=self.spec.show_progress,
            traffic=self.env.traffic,
        )

        def shown(result: CaseResult) -> None:
            sink(result)
            progress.advance(result)

        if self.framework is not None:
            self._run_framework(self.framework, chosen, repeats, shown)
        else:
            self._run_system(chosen, repeats, shown)
        progress.finish()

    def _run_system(self, chosen: list[tuple[int, Case]], repeats: int, sink: Sink) -> None:
        """The system answers each case's runs, `concurrency` cases at a time."""
        options = RunOptions(
            concurrency=self.spec.measure.concurrency,
            repeats=repeats,
            timeout_s=self.spec.measure.timeout_s,
        )
        runs = self._runs(options)

        def one(index: int, case: Case) -> CaseResult:
            done = self.attempts.setdefault(case.id, [])
            done.extend(runs(case))
            return aggregate(case, index, done)

        run_cases(chosen, one, options.concurrency, sink)

    def _run_framework(
        self, framework: FrameworkSide, chosen: list[tuple[int, Case]], repeats: int, sink: Sink
    ) -> None:
        """The framework runs the cases at once (more epochs of the samples, repeats of the
        tests), each run numbered after the case's runs so far."""
        starts = {case.id: len(self.attempts.get(case.id, ())) for _, case in chosen}
        if self.spec.show_progress:  # the framework reports at its end: say what runs meanwhile
            what = f"{framework.suite.framework}: running {framework.what}"
            print(f"[{self.spec.label}] {what} ({len(chosen)} cases × {repeats})", file=sys.stderr)
        runs = framework.run(starts, repeats)
        for index, case in chosen:
            done = self.attempts.setdefault(case.id, [])
            done.extend(runs[case.id])
            sink(aggregate(case, index, done))

    def _chosen(self, ids: Sequence[str] | None) -> list[tuple[int, Case]]:
        if ids is None:
            return self.selected
        unknown = [i for i in ids if i not in self.by_id]
        if unknown:
            raise InputError(f"case {unknown[0]!r} is not in the suite", key="ids")
        return [self.by_id[i] for i in dict.fromkeys(ids)]

    def _runs(self, options: RunOptions) -> Callable[[Case], list[Attempt]]:
        system, ctx = self.system, self.ctx
        assert system is not None

        def runs(case: Case) -> list[Attempt]:
            start = len(self.attempts.get(case.id, ()))
            checks = plan_case(case)
            return [
                run_attempt(case, start + k, system, checks, ctx, options)
                for k in range(options.repeats)
            ]

        return runs


def system_env(spec: SideSpec, environ: dict[str, str]) -> SystemEnv:
    return SystemEnv(
        root=spec.root.resolve(),
        config_dir=(spec.own.config_file or spec.root / "gate.yml").parent,
        environ=environ,
        cache_dir=spec.cache_dir,
        use_cache=spec.use_cache and spec.cache_dir is not None,
        prices={name: price.model_dump() for name, price in spec.measure.prices.items()},
        concurrency=spec.measure.concurrency,
        simulated_user=spec.measure.simulated_user,
    )


def build_meta(spec: SideSpec, system: System, ctx: CheckContext, n: int) -> RunMeta:
    root = spec.root.resolve()
    files = hash_files([*own_files(spec), *system.files()], [root, spec.measure.checks_root])
    sandbox = ctx.sandbox.protections() if ctx.sandbox else None
    described = system.describe()
    return _meta(spec, n, len(spec.measure.cases), described, files, sandbox=sandbox)


def framework_meta(spec: SideSpec, framework: FrameworkSide, n: int) -> RunMeta:
    """An inspect or pytest suite's side: the instrument's files hashed as the run folder
    held them (the checks root's, not the side's edits of them)."""
    root, checks_root = spec.root.resolve(), spec.measure.checks_root
    files = hash_files(own_files(spec), [root, checks_root])
    files = dict(sorted((files | hash_files(framework.instrument_files(), [checks_root])).items()))
    size = len(framework.cases)
    measured = framework.measured()
    return _meta(spec, n, size, framework.describe(), files, framework=measured)


def own_files(spec: SideSpec) -> list[Path]:
    """The side's own gate.yml and the files `watch` matches in its checkout."""
    own = [spec.own.config_file] if spec.own.config_file else []
    watched = watched_files(spec.root.resolve(), list(spec.measure.watch), skip=spec.cache_dir)
    return [*own, *watched]


def _meta(
    spec: SideSpec,
    n: int,
    size: int,
    system: Mapping[str, object],
    files: dict[str, str],
    *,
    sandbox: Mapping[str, object] | None = None,
    framework: dict[str, JsonValue] | None = None,
) -> RunMeta:
    # `framework` is an extra field of the report's meta line: present only on a framework side.
    extra = {} if framework is None else {"framework": framework}
    root = spec.root.resolve()
    sha, dirty = git_state(root)
    measure = spec.measure
    system_config = str(spec.own.config_file) if spec.own.config_file else None
    return RunMeta(
        gate_version=__version__,
        label=spec.label,
        suite=spec.suite,
        created_at=now_iso(),
        root=str(root),
        git_sha=sha,
        git_dirty=dirty,
        config_file=measure.config_file,
        system_config_file=None if system_config == measure.config_file else system_config,
        repeats=measure.repeats,
        concurrency=measure.concurrency,
        auto=AutoRecord(plan=measure.auto) if measure.auto and not spec.answers else None,
        n_cases=n,
        suite_size=size,
        shard=spec.shard,
        files=files,
        system=SystemInfo.model_validate(system),
        sandbox=None if sandbox is None else SandboxInfo.model_validate(sandbox),
        **extra,
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


def cache_folder(loaded: LoadedConfig, environ: dict[str, str]) -> Path:
    """`gate run`'s response cache: gate.yml's `cache.dir` (relative: in the repository of
    gate.yml), else $GATE_CACHE_DIR or the user's cache folder."""
    root = find_repo_root(loaded.base_dir) or loaded.base_dir
    return resolve_cache_dir(loaded.config.cache.dir, environ, root)


def spec_of_config(
    loaded: LoadedConfig,
    suite: SuiteConfig,
    root: Path,
    *,
    label: str,
    cache_dir: Path | None,
    **options: object,
) -> SideSpec:
    """`gate run`'s side: `loaded` measures and runs, in the checkout `root`."""
    cases = checked_cases(loaded, suite)
    use_cache = bool(options.pop("use_cache", True)) and loaded.config.cache.enabled
    return SideSpec.model_validate(
        {
            "label": label,
            "suite": suite.name,
            "root": root.resolve(),
            "measure": measure_of(loaded, suite, cases, root),
            "own": own_of(loaded, suite),
            "cache_dir": cache_dir,
            "use_cache": use_cache,
            **options,
        }
    )
