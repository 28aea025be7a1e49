"""The sandbox as the gate sees it: `open_sandbox(settings, root)` yields a `CodeRunner`.

It copies `sandbox.pythonpath` into a private read-only folder, starts the zygote with an
environment holding no secrets, and then sends it jobs from any number of runner threads
(at most `workers` at a time), turning each answer into check results.
"""

from __future__ import annotations

import compileall
import io
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

import gate
from gate.checks.base import CheckResult
from gate.errors import CheckInfraError, InputError
from gate.inputs.config import SandboxConfig
from gate.sandbox import protections, verdict, wire
from gate.sandbox.models import Hello, Job, Outcome
from gate.sandbox.settings import SAFE_PATH, Settings
from gate.sandbox.testcode import declared_tests

if TYPE_CHECKING:
    from gate.inputs.cases import Case

BOOT_TIMEOUT_S = 120.0
MAX_RESTARTS = 3
DIR_PREFIX = "gate-sandbox-"
OWNER_FILE = "owner.json"
STALE_UNOWNED_S = 600.0  # a folder without an owner file (being created, or very old)
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


def _process_identity(pid: int) -> tuple[int, int] | None:
    """(start time in clock ticks since boot, PID namespace inode) of a live process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        namespace = os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces and brackets
    return int(fields[19]), namespace


def write_owner(folder: Path) -> None:
    """Record which process owns a sandbox folder, so that a later run can remove it if that
    process was killed before it could clean up (SIGKILL, an OOM kill)."""
    identity = _process_identity(os.getpid())
    if identity is not None:
        started, namespace = identity
        owner = {"pid": os.getpid(), "started": started, "pid_namespace": namespace}
        (folder / OWNER_FILE).write_text(json.dumps(owner))


def sweep_stale(base: Path) -> list[Path]:
    """Remove the sandbox folders of runs that died without cleaning up; returns them.

    Only folders whose owner ran in our PID namespace and is gone (or whose pid now belongs
    to another process) are removed, and folders without an owner file once they are old."""
    own = _process_identity(os.getpid())
    removed: list[Path] = []
    for folder in base.glob(DIR_PREFIX + "*"):
        if folder.is_symlink() or not folder.is_dir() or not _is_stale(folder, own):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed


def _is_stale(folder: Path, own: tuple[int, int] | None) -> bool:
    try:
        owner = json.loads((folder / OWNER_FILE).read_text())
        pid, started, namespace = int(owner["pid"]), int(owner["started"]), owner["pid_namespace"]
    except FileNotFoundError:
        try:
            return time.time() - folder.stat().st_mtime > STALE_UNOWNED_S
        except OSError:
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if own is None or namespace != own[1]:
        return False  # another PID namespace (a container sharing the folder): not ours to judge
    return _process_identity(pid) != (started, namespace)


class _NotSent(CheckInfraError):
    """The job never reached the zygote (it had died): safe to send to a new one."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class _Zygote:
    """One zygote process and the jobs waiting for its answers. When it ends, every job still
    waiting gets an infrastructure error naming why; the sandbox may start a new one."""

    def __init__(self, settings: Settings, work_dir: Path) -> None:
        self.settings = settings
        self.pending: dict[int, _Pending] = {}
        self.lock = threading.Lock()  # guards `pending` and `dead`
        self.write_lock = threading.Lock()
        self.stderr = bytearray()
        self.dead: str | None = None
        self.process = self._spawn(work_dir)
        self.hello = self._handshake()
        self.reader = threading.Thread(target=self._read_answers, name="gate-sandbox", daemon=True)
        self.reader.start()

    def _spawn(self, work_dir: Path) -> subprocess.Popen[bytes]:
        package_parent = str(Path(gate.__file__).resolve().parent.parent)
        environment = {"PATH": SAFE_PATH, "LANG": os.environ.get("LANG", "C.UTF-8")}
        return subprocess.Popen(
            [sys.executable, "-I", "-c", BOOTSTRAP.format(path=package_parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=environment,
            cwd=work_dir,
            start_new_session=True,
        )

    def _handshake(self) -> Hello:
        assert self.process.stdin is not None and self.process.stdout is not None
        threading.Thread(target=self._drain_stderr, name="gate-sandbox-err", daemon=True).start()
        self.process.stdin.write(wire.encode(self.settings.to_dict()))
        self.process.stdin.flush()
        answer: list[dict[str, Any] | None] = []
        stdout = self.process.stdout
        reader = threading.Thread(target=lambda: answer.append(wire.read_stream(stdout)))
        reader.start()
        reader.join(BOOT_TIMEOUT_S)  # the zygote's start: imports, prelude, probes (~0.3 s)
        message = answer[0] if answer else None
        if message is None or message.get("type") != "hello":
            reason = message.get("error") if message else "no answer"
            self.kill()
            raise CheckInfraError(f"the sandbox did not start: {reason}; {self.stderr_tail()}")
        try:
            return Hello.model_validate(message)
        except ValidationError as exc:
            self.kill()
            raise CheckInfraError(f"the sandbox answered nonsense at start: {exc}") from None

    def _drain_stderr(self) -> None:
        stream = self.process.stderr
        assert isinstance(stream, io.BufferedReader)
        while chunk := stream.read1(4096):
            self.stderr += chunk
            del self.stderr[:-STDERR_KEPT]

    def stderr_tail(self) -> str:
        return bytes(self.stderr[-400:]).decode("utf-8", "replace").strip() or "(no stderr)"

    def _read_answers(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        problem = None
        try:
            while (message := wire.read_stream(stream)) is not None:
                with self.lock:
                    pending = self.pending.pop(int(message.get("id", -1)), None)
                if pending is not None:
                    pending.message = message
                    pending.done.set()
        except (OSError, ValueError) as exc:
            problem = f"unreadable answer from the sandbox: {exc}"
        with self.lock:
            self.dead = problem or f"the sandbox process ended; {self.stderr_tail()}"
            waiting, self.pending = list(self.pending.values()), {}
        for pending in waiting:
            pending.done.set()

    def submit(self, job: Job) -> dict[str, Any]:
        """The zygote's answer to `job`; CheckInfraError if it cannot give one."""
        pending = _Pending()
        with self.lock:
            if self.dead:
                raise _NotSent(self.dead)
            self.pending[job.id] = pending
        stdin = self.process.stdin
        assert stdin is not None
        try:
            with self.write_lock:
                stdin.write(wire.encode(job.model_dump()))
                stdin.flush()
        except OSError as exc:
            with self.lock:
                self.pending.pop(job.id, None)
            raise _NotSent(f"cannot reach the sandbox: {exc}") from None
        limit = self.settings.timeout_s + ANSWER_GRACE_S
        if not pending.done.wait(limit):
            with self.lock:
                self.pending.pop(job.id, None)
            raise CheckInfraError(f"the sandbox did not answer within {limit:g} s")
        if pending.message is None:
            raise CheckInfraError(self.dead or "the sandbox went away")
        return pending.message

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def close(self) -> None:
        stdin = self.process.stdin
        try:
            if stdin is not None:
                with self.write_lock:
                    stdin.write(wire.encode({"type": "exit"}))
                    stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
        self.reader.join(timeout=5)


class Sandbox:
    """Thread-safe front of one zygote. Use `open_sandbox`, which also closes it.

    A zygote that dies (the OOM killer, a stray signal) fails the jobs it was running; the next
    job starts a new one, at most `MAX_RESTARTS` times per run."""

    def __init__(self, config: SandboxConfig, root: Path) -> None:
        self.config = config
        base = _private_base()
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
        self.settings = build_settings(self.config, self.dir, lib, paths, labels)
        self._ids = itertools.count(1)
        self._slots = threading.Semaphore(self.settings.workers)
        self._restart_lock = threading.Lock()
        self.restarts = 0
        self._zygote = _Zygote(self.settings, self.dir)

    @property
    def hello(self) -> Hello:
        """The running zygote's greeting: its pid and what this machine let it isolate."""
        return self._zygote.hello

    def _current(self) -> _Zygote:
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
            self._zygote = _Zygote(self.settings, self.dir)
            return self._zygote

    def _submit(self, job: Job) -> Outcome:
        zygote = self._current()
        try:
            message = zygote.submit(job)
        except _NotSent:
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

    def protections(self) -> dict[str, Any]:
        described = protections.describe(self.hello.mode, self.settings)
        return {**described, "restarts": self.restarts} if self.restarts else described

    def close(self) -> None:
        self._zygote.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@contextmanager
def open_sandbox(config: SandboxConfig, root: Path) -> Iterator[Sandbox]:
    """The sandbox for one run; the zygote is stopped and its folders removed afterwards."""
    sandbox = Sandbox(config, root)
    try:
        yield sandbox
    finally:
        sandbox.close()
