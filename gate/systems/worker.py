"""The system under test in a process of its own (`gate.systems.worker_main`).

A `python` target imported into `gate run` would run as the gate's own code: it could patch
the checks, rewrite the reports or write answers into the response cache. So it runs in a
worker process, started once per system (calls over a pipe, on as many threads as the run's
concurrency), and every call of a `command` system is run by such a worker too.

As root (CI, the container) the worker runs as an unprivileged uid of its own
(`system_identity`: one per `gate run`, so the base's and the head's differ), with no
supplementary groups and `no_new_privs`, its HOME and TMPDIR a private folder: it can read
the checkout but write none of the reports, the response cache, the other side's checkout
or the gate's files, and it cannot read the gate's environment in `/proc`. It drops to that
uid itself, after it made the folders it must read visible to it (`worker_main.confine`).
Its environment is the side's (the system's keys) without the gate's own credentials. Not as
root (a developer's `gate check`) the worker runs as the same user: a process apart, no more.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.errors import InputError, SystemCallError
from gate.inputs.paths import relative_posix
from gate.inputs.signature import Param
from gate.providers.secrets import without_gate_credentials

WORKER = Path(__file__).with_name("worker_main.py")
START_TIMEOUT_S = 120.0  # importing the target (a large SDK, a model loaded at import)
ANSWER_GRACE_S = 5.0  # on top of a command's own timeout, which the worker enforces
MAX_RESTARTS = 3  # a worker that died (os._exit, a crash) is started again, this often
STOP_GRACE_S = 2.0  # how long a worker may take to end once its calls pipe is closed
# Above the ranges systems assign (systemd's containers end at 1879048191), below the
# sandbox's jobs (gate.sandbox.protocol.boot.DEFAULT_UID_BASE).
SYSTEM_UID_BASE = 1_900_000_000
UID_SPAN = 1_000_000


def system_identity() -> int | None:
    """The uid (and gid) the system under test runs as: None when the gate is not root."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    return SYSTEM_UID_BASE + os.getpid() % UID_SPAN


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] = {}


class _Process:
    """One worker process: its pipes, the calls waiting for an answer, the reader of answers.
    `ready` is its first line (None: it ended, or did not start in time)."""

    def __init__(self, argv: list[str], config: dict[str, Any], **popen: Any) -> None:
        calls_read, self.calls = os.pipe()
        answers, answers_write = os.pipe()
        config = {**config, "calls_fd": calls_read, "answers_fd": answers_write}
        try:
            self.popen = subprocess.Popen(
                [*argv, json.dumps(config)],
                stdin=subprocess.DEVNULL,
                pass_fds=(calls_read, answers_write),
                start_new_session=True,
                **popen,
            )
        except BaseException:
            os.close(self.calls)
            os.close(answers)
            raise
        finally:
            os.close(calls_read)
            os.close(answers_write)
        self.lock = threading.Lock()
        self.write_lock = threading.Lock()
        self.pending: dict[int, _Pending] = {}
        self.ready: dict[str, Any] | None = None
        self._started = threading.Event()
        self.reader = threading.Thread(target=self._read, args=(answers,), daemon=True)
        self.reader.start()
        self._started.wait(START_TIMEOUT_S)

    def _read(self, fd: int) -> None:
        with os.fdopen(fd, encoding="utf-8", errors="replace") as answers:
            for line in answers:
                try:
                    message = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if self.ready is None:
                    self.ready = message
                    self._started.set()
                    continue
                with self.lock:
                    pending = self.pending.pop(message.get("id"), None)
                if pending is not None:
                    pending.message = message
                    pending.done.set()
        self._started.set()
        code = self.popen.wait()
        with self.lock:
            left, self.pending = self.pending, {}
        for pending in left.values():
            pending.message = {"ok": False, "error": f"the system's process ended (exit {code})"}
            pending.done.set()

    def send(self, number: int, line: str) -> _Pending:
        pending = _Pending()
        with self.lock:
            self.pending[number] = pending
        data = memoryview(line.encode("utf-8"))
        try:
            with self.write_lock:  # a line longer than PIPE_BUF is not written at once
                while data:
                    data = data[os.write(self.calls, data) :]
        except OSError:
            pending.message = {"ok": False, "error": "the system's process is gone"}
            pending.done.set()
        return pending

    def forget(self, number: int) -> None:
        with self.lock:
            self.pending.pop(number, None)

    def stop(self) -> None:
        """No more calls: the worker ends; whatever it left running is killed."""
        with contextlib.suppress(OSError):
            os.close(self.calls)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=STOP_GRACE_S)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait()
        self.reader.join(timeout=STOP_GRACE_S)


class SystemWorker:
    """The worker process of one system: `spec` says what it runs (`kind` python with a
    `target`, or command with its `command`); `key` is gate.yml's key a refusal names."""

    def __init__(
        self,
        spec: dict[str, Any],
        root: Path,
        environ: Mapping[str, str],
        concurrency: int,
        key: str,
    ) -> None:
        self.root = root.resolve()
        self.config = {**spec, "root": str(self.root), "concurrency": max(concurrency, 1)}
        self.key = key
        self.environ = without_gate_credentials(environ)
        self.uid = system_identity()
        self.home: Path | None = None
        self.ids = itertools.count(1)
        self.restarts = 0
        self.lock = threading.Lock()  # guards `process` (a restart)
        self.process = self._start()
        ready = self.process.ready
        if ready is None or not ready.get("ready"):
            self.close()
            raise InputError(self._refusal(ready), key=key)

    @property
    def file(self) -> Path | None:
        """The target's module file (a `python` system), when it lies in the checkout: the
        worker's word, which the system's own code could have written instead."""
        file = (self.process.ready or {}).get("file")
        if not isinstance(file, str) or relative_posix(Path(file), self.root) is None:
            return None
        return Path(file)

    @property
    def signature(self) -> list[Param] | None:
        """The target's parameters as the worker read them (a `python` system); None when it
        could not, or the worker's answer is not one (the system's code could write it)."""
        described = (self.process.ready or {}).get("signature")
        if not isinstance(described, list):
            return None
        try:
            return [Param(**param) for param in described]
        except TypeError:
            return None

    def _start(self) -> _Process:
        """The worker started; as root it confines itself to `uid` (`worker_main.confine`)
        before it imports anything of the system."""
        env = dict(self.environ)
        config = {**self.config, "uid": self.uid, "home": None}
        if self.uid is not None:  # root's HOME is not the unprivileged user's to use
            if self.home is None:
                self.home = Path(tempfile.mkdtemp(prefix="gate-system-"))
                os.chown(self.home, self.uid, self.uid)
            env["HOME"] = env["TMPDIR"] = config["home"] = str(self.home)
        return _Process([sys.executable, "-P", str(WORKER)], config, env=env, cwd=self.root)

    def _refusal(self, ready: dict[str, Any] | None) -> str:
        if ready is not None:
            return str(ready.get("error"))
        code = self.process.popen.poll()
        what = f"exited with {code}" if code is not None else "did not start in time"
        who = f" as uid {self.uid} (the gate runs as root)" if self.uid is not None else ""
        return (
            f"the system's process {what}{who} before it was ready: can it read the Python "
            f"installation and the checkout {self.root}?"
        )

    def _running(self) -> _Process:
        """The worker, started again if it died (then only the call that crashed it failed)."""
        with self.lock:
            process = self.process
            if process.popen.poll() is None:
                return process
            if self.restarts >= MAX_RESTARTS:
                raise SystemCallError(
                    f"the system's process ended (exit {process.popen.returncode}); "
                    f"not started again after {MAX_RESTARTS} restarts"
                )
            self.restarts += 1
            process.stop()
            self.process = self._start()
            if not (self.process.ready or {}).get("ready"):
                raise SystemCallError(self._refusal(self.process.ready))
            return self.process

    def call(self, message: dict[str, Any], timeout_s: float, timeout_error: str) -> Any:
        """Send one call; its value, or `SystemCallError` with the reason (`timeout_error`
        when no answer came in `timeout_s`)."""
        process = self._running()
        number = next(self.ids)
        pending = process.send(number, json.dumps({**message, "id": number}) + "\n")
        if not pending.done.wait(timeout_s):
            process.forget(number)
            raise SystemCallError(timeout_error)
        if pending.message.get("ok"):
            return pending.message.get("value")
        raise SystemCallError(str(pending.message.get("error")))

    def close(self) -> None:
        self.process.stop()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
