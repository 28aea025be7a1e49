"""One zygote process as the gate sees it: started with an environment holding no secrets,
fed jobs from any number of threads, and its answers matched back to them by job id."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from pydantic import ValidationError

import gate
from gate.errors import CheckInfraError
from gate.sandbox.protocol import framing
from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.protocol.environment import SAFE_PATH
from gate.sandbox.protocol.messages import Hello, Job

BOOT_TIMEOUT_S = 120.0
ANSWER_GRACE_S = 60.0  # on top of the execution timeout: a loaded machine forks slowly
STDERR_KEPT = 8192
BOOTSTRAP = (
    "import sys; sys.path.insert(0, {path!r}); from gate.sandbox.zygote.main import main; main()"
)


class NotSent(CheckInfraError):
    """The job never reached the zygote (it had died): safe to send to a new one."""


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.message: dict[str, Any] | None = None


class ZygoteProcess:
    """One zygote process and the jobs waiting for its answers. When it ends, every job still
    waiting gets an infrastructure error naming why; the sandbox may start a new one."""

    def __init__(self, settings: ZygoteSetup, work_dir: Path) -> None:
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
        self.process.stdin.write(framing.encode(self.settings.to_dict()))
        self.process.stdin.flush()
        answer: list[dict[str, Any] | None] = []
        stdout = self.process.stdout
        reader = threading.Thread(target=lambda: answer.append(framing.read_stream(stdout)))
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
            while (message := framing.read_stream(stream)) is not None:
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
                raise NotSent(self.dead)
            self.pending[job.id] = pending
        stdin = self.process.stdin
        assert stdin is not None
        try:
            with self.write_lock:
                stdin.write(framing.encode(job.model_dump()))
                stdin.flush()
        except OSError as exc:
            with self.lock:
                self.pending.pop(job.id, None)
            raise NotSent(f"cannot reach the sandbox: {exc}") from None
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
                    stdin.write(framing.encode({"type": "exit"}))
                    stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()
        self.reader.join(timeout=5)
