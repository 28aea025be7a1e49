"""Suites of other frameworks: inspect_ai tasks (`inspect:`) and pytest tests (`pytest:`).

The face the rest of the gate calls (docs/frameworks.md says what each framework maps to what):

- `FrameworkSuite.of(suite)`: what measures the suite (the measuring gate.yml's framework block
  and instrument globs), the value a side's `Measure` carries;
- `FrameworkSide(suite, system, root, instrument_root, environ)`: one side, open for its
  runner's life (`with`): its run folder (its checkout with the instrument root's instrument
  files) built once, the framework's process started once, its `cases` listed once; `run(starts,
  repeats)` asks for more runs of some cases and gives back their attempts;
- `instrument_changes(base_root, head_root, base_suite, head_suite)`: what the PR edits in the
  instrument (files and settings), for the comment.

Everything the framework runs is the side's code: it runs confined like a `python` system
(`gate.frameworks.process`), and what it reports is read back by the gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from pydantic import JsonValue

from gate.frameworks.instrument import changed_files, instrument_globs, pytest_config
from gate.frameworks.side import FrameworkSide
from gate.frameworks.suite import FrameworkSuite
from gate.inputs.config import SuiteConfig

__all__ = [
    "FrameworkChanges",
    "FrameworkSide",
    "FrameworkSuite",
    "instrument_changes",
    "instrument_globs",
]

SYSTEM_KEYS = {"model", "model_args"}  # each side's own, not the instrument's


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
