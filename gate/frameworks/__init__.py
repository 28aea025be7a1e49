"""Suites of other frameworks: inspect_ai tasks (`inspect:`) and pytest tests (`pytest:`).

The face a side's runner calls (docs/frameworks.md says what each framework maps to what):

- `FrameworkSuite.of(measuring, own, concurrency)`: what a side runs: the measuring suite's
  settings (the base's: task, scorer, `pass:`, tests) with the side's own model;
- `overlay(side_root, instrument_root, globs)`: the side's run folder, its checkout with the
  instrument's files (`instrument_globs`) taken from `instrument_root` (the base's);
- `list_cases(suite, run_dir, environ)`: the suite's cases (samples, tests), nothing run;
- `run(suite, run_dir, ids, repeats, environ, start=..., shard=...)`: `repeats` more runs of
  the cases `ids` (None: all), numbered from `start`; a `FrameworkRun` of attempts by id;
- `instrument_changes(base_root, head_root, base_suite, head_suite)`: what the PR edits in the
  instrument (files and settings), for the comment.

Everything the framework runs is the side's code: it runs confined like a `python` system
(`gate.frameworks.process`), and what it reports is read back by the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from gate.frameworks.instrument import changed_files, instrument_globs, pytest_config
from gate.frameworks.overlay import overlay
from gate.frameworks.results import FrameworkRun
from gate.inputs.cases import Case
from gate.inputs.config import SuiteConfig
from gate.inputs.framework_suites import InspectSuite, InspectSystem, PytestSuite
from gate.inputs.shard import Shard

__all__ = [
    "FrameworkChanges",
    "FrameworkRun",
    "FrameworkSuite",
    "instrument_changes",
    "instrument_globs",
    "is_framework",
    "list_cases",
    "overlay",
    "run",
]

SYSTEM_KEYS = {"model", "model_args"}  # each side's own, not the instrument's


def is_framework(suite: SuiteConfig) -> bool:
    return suite.framework is not None


@dataclass(frozen=True)
class FrameworkSuite:
    """What one side runs of an inspect or pytest suite."""

    name: str
    inspect: InspectSuite | None
    pytest: PytestSuite | None
    globs: tuple[str, ...]
    concurrency: int = 8

    @classmethod
    def of(
        cls, measuring: SuiteConfig, own: SuiteConfig | None, concurrency: int
    ) -> FrameworkSuite:
        """The measuring suite's settings with the model of the side's own suite (`own`)."""
        settings = measuring.inspect
        system = own.system if own is not None else measuring.system
        if settings is not None and isinstance(system, InspectSystem):
            settings = settings.model_copy(
                update={"model": system.model, "model_args": system.model_args}
            )
        globs = tuple(instrument_globs(measuring))
        return cls(measuring.name, settings, measuring.pytest, globs, concurrency)

    @property
    def framework(self) -> str:
        return "inspect" if self.inspect is not None else "pytest"

    def describe(self) -> dict[str, JsonValue]:
        """The report's `system` (what ran on this side)."""
        if self.inspect is not None:
            return {
                "kind": "inspect",
                "task": self.inspect.task,
                "model": self.inspect.model,
                "epochs": self.inspect.epochs,
            }
        assert self.pytest is not None
        return {"kind": "pytest", "args": list(self.pytest.args)}


def list_cases(
    suite: FrameworkSuite,
    run_dir: Path,
    environ: Mapping[str, str],
    config_root: Path | None = None,
) -> list[Case]:
    """The suite's cases in its order, nothing run (`config_root`: the checkout whose pytest
    configuration measures; default `run_dir`)."""
    if suite.inspect is not None:
        from gate.frameworks.inspect_suite import list_samples

        return list_samples(suite.inspect, run_dir, environ, suite.concurrency)
    from gate.frameworks.pytest_suite import list_tests

    assert suite.pytest is not None
    return list_tests(suite.pytest, run_dir, config_root or run_dir, environ)


def run(
    suite: FrameworkSuite,
    run_dir: Path,
    ids: Sequence[str] | None,
    repeats: int,
    environ: Mapping[str, str],
    *,
    start: int | Mapping[str, int] = 0,
    shard: Shard | None = None,
    config_root: Path | None = None,
) -> FrameworkRun:
    """`repeats` runs of the cases `ids` (None: every case; `shard`: of those, its own), each
    case's numbered from its `start`."""
    if suite.inspect is not None:
        from gate.frameworks.inspect_suite import run_inspect

        return run_inspect(
            suite.inspect, run_dir, ids, repeats, environ,
            start=start, shard=shard, concurrency=suite.concurrency,
        )  # fmt: skip
    from gate.frameworks.pytest_suite import run_pytest

    assert suite.pytest is not None
    root = config_root or run_dir
    return run_pytest(suite.pytest, run_dir, root, ids, repeats, environ, start=start, shard=shard)


@dataclass(frozen=True)
class FrameworkChanges:
    """What a PR edits in an inspect or pytest suite's instrument: its files (and pytest's
    configuration), and its measuring settings as `(key, base, head)`."""

    files: list[str] = field(default_factory=list)
    settings: list[tuple[str, JsonValue, JsonValue]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.settings)


def _measuring(suite: SuiteConfig) -> dict[str, JsonValue]:
    settings = suite.inspect or suite.pytest
    data: dict[str, JsonValue] = {"framework": suite.framework}
    if settings is not None:
        dumped = settings.model_dump(mode="json", by_alias=True, exclude=SYSTEM_KEYS)
        data |= {f"{suite.framework}.{k}": v for k, v in dumped.items()}
    data["instrument"] = list(instrument_globs(suite)) if suite.framework else None
    return data


def instrument_changes(
    base_root: Path, head_root: Path, base: SuiteConfig, head: SuiteConfig | None
) -> FrameworkChanges:
    """The instrument's files the head edits (by the base's globs and the head's: a file
    either names), pytest's configuration, and the measuring settings that differ."""
    globs = instrument_globs(base)
    if head is not None and head.framework:
        globs = list(dict.fromkeys([*globs, *instrument_globs(head)]))
    files = changed_files(base_root, head_root, globs)
    if base.pytest is not None:
        before = pytest_config(base_root, base.pytest.paths)
        after = pytest_config(head_root, base.pytest.paths)
        if before != after:
            files.append(f"{(after or before or ('pytest configuration',))[0]} (pytest's options)")
    old = _measuring(base)
    new = _measuring(head) if head is not None else {}
    settings = [
        (k, old.get(k), new.get(k)) for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)
    ]
    return FrameworkChanges(files, settings)
