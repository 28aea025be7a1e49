"""One side of an inspect or pytest suite, open for its runner's life.

Opening builds the side's run folder once (`overlay`: its checkout with the instrument root's
instrument files), starts the framework's process in the system's confinement
(`FrameworkProcess`) and lists the suite's cases (the task's samples, the collected tests).
Each `run` then asks that process for more runs of some cases (epochs of samples, repeats of
tests), numbered after the runs each case has had: round 0 and every later round of
`repeats: auto` are the same request.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import JsonValue

from gate.errors import InputError
from gate.frameworks.instrument import checkout_files
from gate.frameworks.overlay import build_overlay, scratch_folder
from gate.frameworks.results import Listing, Runs
from gate.frameworks.suite import FrameworkSuite
from gate.inputs.cases import Case
from gate.inputs.config import SystemConfig
from gate.inputs.globs import watched

if TYPE_CHECKING:
    from gate.frameworks.process import FrameworkProcess

MAX_INSTRUMENT_FILES = 200  # hashed into the report, as `watch`'s files are


class FrameworkSide:
    """`suite` as the side `root` runs it with its own `system` (an inspect suite's model),
    measured by the files of `instrument_root` (the base's checkout in the PR flow)."""

    def __init__(
        self,
        suite: FrameworkSuite,
        system: SystemConfig,
        root: Path,
        instrument_root: Path,
        environ: Mapping[str, str],
    ) -> None:
        self.suite = suite.for_system(system)
        self.root, self.instrument_root = root.resolve(), instrument_root.resolve()
        self.environ = dict(environ)
        self.listing = Listing([])
        self._stack = ExitStack()
        self._scratch = Path()
        self._process: FrameworkProcess | None = None
        self._config: Path | None = None  # pytest's configuration: the instrument root's
        self._runs = itertools.count(1)

    def __enter__(self) -> FrameworkSide:
        with ExitStack() as stack:  # closed at once when opening fails
            self._open(stack)
            self._stack = stack.pop_all()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _open(self, stack: ExitStack) -> None:
        from gate.frameworks.process import FrameworkProcess
        from gate.frameworks.pytest_suite import measuring_config

        self._scratch = stack.enter_context(scratch_folder())
        globs = list(self.suite.instrument)
        run_dir = build_overlay(self.root, self.instrument_root, globs, self._scratch / "checkout")
        if self.suite.pytest is not None:
            self._config = measuring_config(self._scratch, self.instrument_root, self.suite.pytest)
        key = "inspect.task" if self.suite.inspect is not None else "pytest.args"
        process = FrameworkProcess(self.suite.framework, run_dir, self._scratch, self.environ, key)
        stack.callback(process.close)
        self._process = process
        self.listing = self._list()
        if not self.listing.cases:
            raise InputError(f"{self.suite.framework} found no cases: {self.what}", key=key)

    @property
    def cases(self) -> list[Case]:
        return self.listing.cases

    @property
    def what(self) -> str:
        """What runs, as a person would name it: the task, or pytest's arguments."""
        if self.suite.inspect is not None:
            return self.suite.inspect.task
        assert self.suite.pytest is not None
        return " ".join(self.suite.pytest.args)

    def _list(self) -> Listing:
        assert self._process is not None
        if self.suite.inspect is not None:
            from gate.frameworks.inspect_suite import list_samples

            return list_samples(self._process, self.suite.inspect)
        from gate.frameworks.pytest_suite import list_tests

        assert self.suite.pytest is not None and self._config is not None
        return list_tests(self._process, self.suite.pytest, self._config)

    def run(self, starts: Mapping[str, int], repeats: int) -> Runs:
        """`repeats` more runs of each case `starts` names (its id, and the index its first
        new run gets), every one of them: a run that left no result is an error."""
        assert self._process is not None, "enter the side first"
        if not starts:
            return {}
        if self.suite.inspect is not None:
            from gate.frameworks.inspect_suite import run_inspect

            folder = self._scratch / f"run-{next(self._runs)}"
            folder.mkdir(mode=0o755)
            return run_inspect(self._process, self.suite.inspect, folder, starts, repeats)
        from gate.frameworks.pytest_suite import run_pytest

        assert self.suite.pytest is not None and self._config is not None
        return run_pytest(self._process, self.suite.pytest, self._config, starts, repeats)

    def describe(self) -> dict[str, JsonValue]:
        """The report's `system`: what ran on this side."""
        if self.suite.inspect is not None:
            inspect = self.suite.inspect
            return {"kind": "inspect", "task": inspect.task, "model": inspect.model}
        return {"kind": "pytest", "args": list(self.suite.pytest.args if self.suite.pytest else [])}

    def measured(self) -> dict[str, JsonValue]:
        """The report's `framework`: the framework, the instrument's globs, and the tests
        their marks left out (and why)."""
        notes: dict[str, JsonValue] = dict(self.listing.notes)
        found: dict[str, JsonValue] = {
            "name": self.suite.framework,
            "instrument": list(self.suite.instrument),
        }
        return found | ({"skipped_by_marks": notes} if notes else {})

    def instrument_files(self) -> list[Path]:
        """The instrument's files as the run folder holds them: the instrument root's."""
        globs = list(self.suite.instrument)
        files = [f for f in checkout_files(self.instrument_root) if watched(f, globs)]
        return [self.instrument_root / f for f in files[:MAX_INSTRUMENT_FILES]]
