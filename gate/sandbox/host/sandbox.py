"""The sandbox as the gate sees it: `open_sandbox(config, root)` yields a `CodeRunner` (and,
given `check_modules`, a `PythonCheckRunner` for the team's own checks).

It copies `sandbox.pythonpath` (and the checks' modules) into a private read-only folder
(`folders`), starts the zygote (`zygote_process`), and then sends it jobs from any number of
runner threads (at most `workers` at a time), turning each answer into check results or the
check's returned value (`verdict`).
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from gate.errors import CheckInfraError
from gate.inputs.config import SandboxConfig
from gate.inputs.testcode import declared_tests
from gate.report.models import CheckResult
from gate.sandbox.host import protections, verdict
from gate.sandbox.host.folders import (
    DIR_PREFIX,
    copy_check_sources,
    copy_pythonpath,
    private_base,
    sweep_stale,
    write_owner,
)
from gate.sandbox.host.zygote_process import NotSent, ZygoteProcess
from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.protocol.messages import Hello, Job, Outcome

if TYPE_CHECKING:
    from gate.inputs.cases import Case

MAX_RESTARTS = 3


def build_settings(
    config: SandboxConfig, work_dir: Path, lib_dir: Path, paths: list[str], labels: dict[str, str]
) -> ZygoteSetup:
    return ZygoteSetup(
        timeout_s=config.timeout_s,
        memory_mb=config.memory_mb,
        cpu_s=config.cpu_s or math.ceil(config.timeout_s) + 1,
        max_processes=config.max_processes,
        max_open_files=config.max_open_files,
        max_file_mb=config.max_file_mb,
        max_output_kb=config.max_output_kb,
        workers=config.workers or os.cpu_count() or 1,
        prelude=config.prelude,
        import_paths=paths,
        path_labels=labels,
        lib_dir=str(lib_dir),
        work_dir=str(work_dir),
        uid_base=config.uid_base,
    )


class Sandbox:
    """Thread-safe front of one zygote. Use `open_sandbox`, which also closes it.

    A zygote that dies (the OOM killer, a stray signal) fails the jobs it was running; the next
    job starts a new one, at most `MAX_RESTARTS` times per run."""

    def __init__(
        self,
        config: SandboxConfig,
        root: Path,
        check_modules: Sequence[str] = (),
        check_sources: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.check_modules = list(check_modules)
        self.check_sources = dict(check_sources or {})
        base = private_base()
        sweep_stale(Path(base or tempfile.gettempdir()))
        self.dir = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=base))
        try:
            write_owner(self.dir)
            self._start(root)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _start(self, root: Path) -> None:
        self.dir.chmod(0o755)  # without a mount namespace the job's uid walks through it
        lib = self.dir / "lib"
        lib.mkdir(mode=0o755)
        paths, labels = copy_pythonpath(self.config.pythonpath, root, lib)
        if self.check_modules:
            path, label = copy_check_sources(
                self.check_modules, root, lib / "checks", self.check_sources
            )
            paths.append(path)
            labels[path] = label
        self.settings = build_settings(self.config, self.dir, lib, paths, labels)
        self._ids = itertools.count(1)
        self._slots = threading.Semaphore(self.settings.workers)
        self._restart_lock = threading.Lock()
        self.restarts = 0
        self._zygote = ZygoteProcess(self.settings, self.dir)

    @property
    def hello(self) -> Hello:
        """The running zygote's greeting: its pid and what this machine let it isolate."""
        return self._zygote.hello

    def _current(self) -> ZygoteProcess:
        """The running zygote, started anew if the last one died (and restarts are left)."""
        zygote = self._zygote
        if zygote.dead is None:
            return zygote
        with self._restart_lock:
            if self._zygote is not zygote:  # another thread already started a new one
                return self._zygote
            if self.restarts >= MAX_RESTARTS:
                raise CheckInfraError(f"{zygote.dead} (not restarted: {MAX_RESTARTS} restarts)")
            self.restarts += 1
            zygote.kill()
            self._zygote = ZygoteProcess(self.settings, self.dir)
            return self._zygote

    def _submit(self, job: Job) -> Outcome:
        zygote = self._current()
        try:
            message = zygote.submit(job)
        except NotSent:
            zygote.reader.join(timeout=5)  # its end is noticed by the reader; then start anew
            message = self._current().submit(job)
        try:
            outcome = Outcome.model_validate(message)
        except ValidationError as exc:
            raise CheckInfraError(f"the sandbox answered nonsense: {exc}") from None
        if outcome.status != "ok":
            detail = outcome.error or outcome.stderr.strip()[-400:] or "no detail"
            raise CheckInfraError(f"sandbox failure ({outcome.status}): {detail}")
        return outcome

    def run_code_checks(self, code: str, case: Case) -> list[CheckResult]:
        if self.hello.prelude_error:
            raise CheckInfraError(f"sandbox.prelude failed: {self.hello.prelude_error}")
        expect = case.expect
        try:
            tests = declared_tests(expect.test_code) if expect.test_code is not None else []
        except ValueError as exc:
            raise CheckInfraError(f"{case.where}: {exc}") from None
        job = Job(
            id=next(self._ids),
            code=code,
            must_compile=bool(expect.must_compile),
            calls=[test.call for test in expect.hidden_tests],
            test_code=expect.test_code,
            tests=tests,
        )
        with self._slots:
            outcome = self._submit(job)
        return verdict.checks(
            job,
            list(expect.hidden_tests),
            outcome,
            timeout_s=self.settings.timeout_s,
            cpu_s=self.settings.cpu_s,
            output_kb=self.settings.max_output_kb,
        )

    def call_check(self, target: str, output: Any, case: dict[str, Any]) -> Any:
        """Call the team's check `module:function` with the output and the case; what it
        returned, as plain data (`CheckInfraError` saying why there is none)."""
        job = Job(id=next(self._ids), kind="check", target=target, arguments=[output, case])
        with self._slots:
            outcome = self._submit(job)
        return verdict.check_value(
            job,
            outcome,
            timeout_s=self.settings.timeout_s,
            cpu_s=self.settings.cpu_s,
            output_kb=self.settings.max_output_kb,
        )

    def protections(self) -> dict[str, Any]:
        described = protections.describe(self.hello.mode, self.settings)
        return {**described, "restarts": self.restarts} if self.restarts else described

    def close(self) -> None:
        self._zygote.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def open_sandbox(
    config: SandboxConfig,
    root: Path,
    check_modules: Sequence[str] = (),
    check_sources: Mapping[str, str] | None = None,
) -> Iterator[Sandbox]:
    """The sandbox for one run; the zygote is stopped and its folders removed afterwards.
    `check_modules`: the modules of `expect.python` checks, copied from `root`
    (`check_sources`: those given as source, a promptfoo assertion's inline code)."""
    sandbox = Sandbox(config, root, check_modules, check_sources)
    try:
        yield sandbox
    finally:
        sandbox.close()
