"""The sandbox as the gate sees it: `open_sandbox(settings, root)` yields a `CodeRunner`.

It copies `sandbox.pythonpath` into a private read-only folder, starts the zygote with an
environment holding no secrets, and then sends it jobs from any number of runner threads
(at most `workers` at a time), turning each answer into check results.
"""

from __future__ import annotations

import compileall
import itertools
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from pydantic import ValidationError

import gate
from gate.checks.base import CheckResult
from gate.config import SandboxConfig
from gate.errors import CheckInfraError, InputError
from gate.sandbox import protections, verdict, wire
from gate.sandbox.models import Hello, Job, Outcome
from gate.sandbox.settings import SAFE_PATH, Settings
from gate.sandbox.testcode import declared_tests

if TYPE_CHECKING:
    from gate.cases import Case

BOOT_TIMEOUT_S = 120.0
ANSWER_GRACE_S = 60.0  # on top of the execution timeout: a loaded machine forks slowly
STDERR_KEPT = 8192
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "node_modules", ".venv")
BOOTSTRAP = "import sys; sys.path.insert(0, {path!r}); from gate.sandbox.zygote import main; main()"


def copy_pythonpath(folders: list[str], root: Path, into: Path) -> tuple[list[str], dict[str, str]]:
    """Copy each folder (relative to the checkout) into `into`; readable, owned by us."""
    paths: list[str] = []
    labels: dict[str, str] = {}
    base = root.resolve()
    for index, folder in enumerate(folders):
        source = (base / folder).resolve()
        if not source.is_relative_to(base) or not source.is_dir():
            raise InputError(
                f"{folder!r} is not a folder inside the checkout {base}", key="sandbox.pythonpath"
            )
        target = into / str(index)
        shutil.copytree(source, target, symlinks=True, ignore=COPY_IGNORE)
        _make_readable(target)
        compileall.compile_dir(str(target), quiet=2, workers=1)
        paths.append(str(target))
        labels[str(target)] = folder.rstrip("/")
    return paths, labels


def _make_readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        path.chmod(0o755 if path.is_dir() else 0o644)


def build_settings(
    config: SandboxConfig, work_dir: Path, lib_dir: Path, paths: list[str], labels: dict[str, str]
) -> Settings:
    return Settings(
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


def _private_base() -> str | None:
    """Root keeps the sandbox's folders in /run, so that /tmp stays free to become the job's
    own writable folder inside the view (see `gate.sandbox.fsview`)."""
    if os.geteuid() == 0 and os.path.isdir("/run") and os.access("/run", os.W_OK):
        return "/run"
    return None


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class Sandbox:
    """Thread-safe front of one zygote. Use `open_sandbox`, which also closes it."""

    def __init__(self, config: SandboxConfig, root: Path) -> None:
        self.config = config
        self.dir = Path(tempfile.mkdtemp(prefix="gate-sandbox-", dir=_private_base()))
        try:
            self._start(root)
        except BaseException:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise

    def _start(self, root: Path) -> None:
        self.dir.chmod(0o755)  # without a mount namespace the job's uid walks through it
        lib = self.dir / "lib"
        lib.mkdir(mode=0o755)
        paths, labels = copy_pythonpath(self.config.pythonpath, root, lib)
        self.settings = build_settings(self.config, self.dir, lib, paths, labels)
        self._ids = itertools.count(1)
        self._slots = threading.Semaphore(self.settings.workers)
        self._write_lock = threading.Lock()
        self._pending: dict[int, _Pending] = {}
        self._pending_lock = threading.Lock()
        self._stderr = bytearray()
        self._dead: str | None = None
        self._process = self._spawn()
        self.hello = self._handshake()
        self._reader = threading.Thread(target=self._read_answers, name="gate-sandbox", daemon=True)
        self._reader.start()

    def _spawn(self) -> subprocess.Popen[bytes]:
        package_parent = str(Path(gate.__file__).resolve().parent.parent)
        environment = {"PATH": SAFE_PATH, "LANG": os.environ.get("LANG", "C.UTF-8")}
        return subprocess.Popen(
            [sys.executable, "-I", "-c", BOOTSTRAP.format(path=package_parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            cwd=self.dir,
            start_new_session=True,
        )

    def _handshake(self) -> Hello:
        assert self._process.stdin is not None and self._process.stdout is not None
        threading.Thread(target=self._drain_stderr, name="gate-sandbox-err", daemon=True).start()
        self._process.stdin.write(wire.encode(self.settings.to_dict()))
        self._process.stdin.flush()
        answer: list[dict[str, Any] | None] = []
        stdout = self._process.stdout
        reader = threading.Thread(target=lambda: answer.append(wire.read_stream(stdout)))
        reader.start()
        reader.join(BOOT_TIMEOUT_S)  # the zygote's start: imports, prelude, probes (~0.3 s)
        message = answer[0] if answer else None
        if message is None or message.get("type") != "hello":
            reason = message.get("error") if message else "no answer"
            self._kill()
            raise CheckInfraError(f"the sandbox did not start: {reason}; {self._stderr_tail()}")
        try:
            return Hello.model_validate(message)
        except ValidationError as exc:
            self._kill()
            raise CheckInfraError(f"the sandbox answered nonsense at start: {exc}") from None

    def _drain_stderr(self) -> None:
        stream: IO[bytes] | None = self._process.stderr
        assert stream is not None
        while chunk := stream.read1(4096):
            self._stderr += chunk
            del self._stderr[:-STDERR_KEPT]

    def _stderr_tail(self) -> str:
        return bytes(self._stderr[-400:]).decode("utf-8", "replace").strip() or "(no stderr)"

    def _read_answers(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        try:
            while (message := wire.read_stream(stream)) is not None:
                with self._pending_lock:
                    pending = self._pending.pop(int(message.get("id", -1)), None)
                if pending is not None:
                    pending.message = message
                    pending.done.set()
        except (OSError, ValueError) as exc:
            self._dead = f"unreadable answer from the sandbox: {exc}"
        self._dead = self._dead or f"the sandbox process ended; {self._stderr_tail()}"
        with self._pending_lock:
            waiting, self._pending = list(self._pending.values()), {}
        for pending in waiting:
            pending.done.set()

    def _submit(self, job: Job) -> Outcome:
        pending = _Pending()
        with self._pending_lock:
            if self._dead:
                raise CheckInfraError(self._dead)
            self._pending[job.id] = pending
        stdin = self._process.stdin
        assert stdin is not None
        try:
            with self._write_lock:
                stdin.write(wire.encode(job.model_dump()))
                stdin.flush()
        except OSError as exc:
            raise CheckInfraError(f"cannot reach the sandbox: {exc}") from None
        if not pending.done.wait(self.settings.timeout_s + ANSWER_GRACE_S):
            with self._pending_lock:
                self._pending.pop(job.id, None)
            raise CheckInfraError(
                f"the sandbox did not answer within {self.settings.timeout_s + ANSWER_GRACE_S:g} s"
            )
        if pending.message is None:
            raise CheckInfraError(self._dead or "the sandbox went away")
        try:
            outcome = Outcome.model_validate(pending.message)
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

    def protections(self) -> dict[str, Any]:
        return protections.describe(self.hello.mode, self.settings)

    def _kill(self) -> None:
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()

    def close(self) -> None:
        stdin = self._process.stdin
        try:
            if stdin is not None:
                with self._write_lock:
                    stdin.write(wire.encode({"type": "exit"}))
                    stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._kill()
        self._reader.join(timeout=5)
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def open_sandbox(config: SandboxConfig, root: Path) -> Iterator[Sandbox]:
    """The sandbox for one run; the zygote is stopped and its folders removed afterwards."""
    sandbox = Sandbox(config, root)
    try:
        yield sandbox
    finally:
        sandbox.close()
