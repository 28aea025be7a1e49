"""The sides of a suite as runner processes: one per side, alive for the whole suite.

Each side's runner (`gate.run.serve`) gets its `SideSpec` whole, then requests: round 0 runs
every case, `repeats: auto`'s later rounds run some cases a few more times. Results stream
back as typed records into the side's report, held here in memory and written once at the end
(`gate.flow.reports`). A runner is a Python process of its own, isolated (`gate.interpreter`:
neither the checkout's folder nor the job's `PYTHONPATH` is on its import path, so none of the
PR's modules runs as the gate), so a `python` system may import a module of the same name from
two checkouts. Each runs under a keeper (`gate.process_tree`): when it ends, or passes its
wall-clock limit, every process it started ends too, whatever session it moved to, so its
output pipe closes. Its log (progress) is streamed with the side as prefix. When one side fails
for good, the other is stopped, but never during its start: its own bad input is always seen,
whichever side failed first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Literal, TextIO

from pydantic import BaseModel, ConfigDict, ValidationError

import gate
from gate.errors import InputError
from gate.interpreter import python_command
from gate.process_tree import supervised
from gate.providers.secrets import without_gate_credentials
from gate.report.models import CaseResult, Report, RunMeta
from gate.run.protocol import RECORD, Close, Done, Failed, Ready, Result, RunMore
from gate.run.spec import SideSpec

SIDES = ("base", "head")
TAIL_LINES = 20
STARTUP_GRACE_S = 60.0  # how long a failure waits for the other side to finish starting
TIME_LIMIT_S = 3 * 3600.0  # a side's wall-clock limit, unless $GATE_SIDE_TIMEOUT_S says
PIPE_GRACE_S = 5.0  # how long the end of a side's output may lag behind its end


class SideStatus(BaseModel):
    """How one side's runner ended (in the sharded mode: one side of one shard)."""

    model_config = ConfigDict(frozen=True)

    side: Literal["base", "head"]
    returncode: int | None = None  # None: it never came to an end
    error: str | None = None  # why it failed
    shard: str | None = None  # `I/N` in the sharded mode
    complete: bool = False  # it answered round 0 whole (also when every case errored)
    stopped: bool = False  # the gate stopped it because the other side failed for good

    @property
    def who(self) -> str:
        return f"the {self.side} side" + (f" of shard {self.shard}" if self.shard else "")

    @property
    def input_error(self) -> bool:
        return self.returncode == InputError.exit_code

    @property
    def fatal(self) -> bool:
        """A failure that leaves no report to compare. A run whose every case ended in an
        error did answer round 0: the comparison names the errors."""
        return not self.complete


class SideProcess:
    """One side's runner process and the report it has answered so far."""

    def __init__(self, spec: SideSpec, env: Mapping[str, str], out: TextIO) -> None:
        assert spec.side is not None
        self.spec = spec
        self.name: Literal["base", "head"] = spec.side
        self.env = dict(env)
        self.out = out
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.meta: RunMeta | None = None
        self.results: dict[str, CaseResult] = {}
        self.http: dict[str, dict[str, int]] = {}
        self.failure: Failed | None = None
        self.complete = False
        self.stopped = False  # by the gate, because another side failed for good
        self.returncode: int | None = None
        self.started_at = time.perf_counter()
        self._proc: subprocess.Popen[str] | None = None
        self._requests: IO[str] | None = None
        self._records: IO[str] | None = None
        self._log: threading.Thread | None = None

    # -- the process --

    def start(self) -> None:
        request_r, request_w = os.pipe()
        record_r, record_w = os.pipe()
        self._proc = subprocess.Popen(
            runner_argv(request_r, record_w, self.env),
            cwd=self.spec.root,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
            pass_fds=(request_r, record_w),
        )
        os.close(request_r)
        os.close(record_w)
        self._requests = os.fdopen(request_w, "w", encoding="utf-8")
        self._records = os.fdopen(record_r, encoding="utf-8", errors="replace")
        self._log = threading.Thread(target=self._stream_log, daemon=True)
        self._log.start()
        self._send(self.spec.model_dump_json(by_alias=True))

    def _stream_log(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        prefix = f"[{self.name}]"
        for raw in self._proc.stdout:
            line = raw.rstrip("\n")
            self.tail.append(line)
            shown = line if line.startswith(prefix) else f"{prefix} {line}"
            with _LOG_LOCK:
                self.out.write(shown + "\n")
                self.out.flush()

    def _send(self, line: str) -> bool:
        try:
            assert self._requests is not None
            self._requests.write(line + "\n")
            self._requests.flush()
            return True
        except (OSError, ValueError):  # the runner is gone: its records say why
            return False

    # -- the conversation --

    @property
    def started(self) -> bool:
        """Past its start: its cases and system were accepted (it said `ready`)."""
        return self.meta is not None

    @property
    def alive(self) -> bool:
        return self.failure is None and self.returncode is None

    def wait_ready(self) -> bool:
        """Read until `ready`; False when the runner failed instead."""
        if self.meta is None:
            self._read_until(Ready)
        return self.meta is not None

    def ask(self, request: RunMore) -> bool:
        """One request answered in full (its results are in the report); False on failure."""
        if not self.wait_ready() or not self._send(request.model_dump_json()):
            return self._ended()
        return self._read_until(Done)

    def _read_until(self, kind: type[Ready] | type[Done]) -> bool:
        assert self._records is not None
        for line in self._records:
            try:
                record = RECORD.validate_json(line)
            except ValidationError:
                continue  # never a line of ours: nothing else writes there
            if isinstance(record, Result):
                self.results[record.result.id] = record.result
            elif isinstance(record, Ready):
                self.meta = record.meta
            elif isinstance(record, Done):
                self.http = record.http
            else:
                self.failure = record
                return self._ended()
            if isinstance(record, kind):
                return True
        return self._ended()

    def _ended(self) -> bool:
        """The runner stopped answering: wait for its exit, stopping what it left."""
        self.stop()
        return False

    def close(self) -> None:
        """Ask the runner to end, then make sure it and its process group did."""
        if self._proc is not None and self._proc.poll() is None and self.failure is None:
            self._send(Close().model_dump_json())
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=30)
        self.stop()

    def stop(self) -> None:
        if self._proc is None:
            return
        if self._proc.poll() is None:
            _kill(self._proc)
        else:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self._proc.pid, signal.SIGKILL)  # what the runner left behind
        self.returncode = self._proc.wait()
        if self._log is not None:
            self._log.join(PIPE_GRACE_S)  # the keeper ended every writer: never wait on more
        if self._requests is not None:
            with contextlib.suppress(OSError, ValueError):
                self._requests.close()

    # -- what it left --

    @property
    def error_line(self) -> str:
        if self.failure is not None:
            return self.failure.message
        for line in reversed(self.tail):
            if line.startswith("gate: error: "):
                return line.removeprefix("gate: error: ")
        return self.tail[-1] if self.tail else "no output"

    def status(self) -> SideStatus:
        code = self.failure.exit_code if self.failure is not None else self.returncode
        return SideStatus(
            side=self.name,
            returncode=code,
            error=None if self.complete else self.error_line,
            shard=self.spec.shard,
            complete=self.complete,
            stopped=self.stopped and not self.complete,
        )

    def report(self) -> Report:
        """The side's report so far, in suite order."""
        assert self.meta is not None
        results = sorted(self.results.values(), key=lambda r: r.index)
        return Report(meta=self.meta, results=results, path=self.spec.root)

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started_at


_LOG_LOCK = threading.Lock()


def runner_argv(requests: int, records: int, env: Mapping[str, str]) -> list[str]:
    """A side's runner: a Python of the gate's own, isolated (no PYTHONPATH, no user site, no
    `sitecustomize` of the checkout), importing the gate from where this process did, under
    a keeper that ends it and all it started at its end or its wall-clock limit. As in
    `gate.cli`, pydantic's plugin scan is skipped (`skip_plugin_scan`)."""
    home = str(Path(gate.__file__).resolve().parent.parent)
    boot = (
        f"import sys; sys.path.insert(0, {home!r}); "
        "from gate.interpreter import skip_plugin_scan; skip_plugin_scan(); "
        "from gate.run.serve import main; sys.exit(main(sys.argv[1:]))"
    )
    run = python_command("-c", boot, str(requests), str(records), environ=env)
    return supervised(run, time_limit(env), python_command(environ=env))


def time_limit(env: Mapping[str, str]) -> float:
    """A side's wall-clock limit in seconds: `$GATE_SIDE_TIMEOUT_S`, else three hours."""
    try:
        return float(env.get("GATE_SIDE_TIMEOUT_S") or TIME_LIMIT_S)
    except ValueError:
        return TIME_LIMIT_S


def side_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The runners' environment: the job's, without the gate's own credentials."""
    env = without_gate_credentials(environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def start_sides(
    specs: Sequence[SideSpec], env: Mapping[str, str], out: TextIO
) -> list[SideProcess]:
    sides = [SideProcess(spec, env, out) for spec in specs]
    for side in sides:
        side.start()
    return sides


def run_round(sides: Sequence[SideProcess], request: RunMore, *, first: bool = False) -> None:
    """`request` of every side at once; a side that fails for good stops the others once
    each has started. `first`: round 0, after which a side that answered is `complete`."""
    threads = [threading.Thread(target=side.ask, args=(request,), daemon=True) for side in sides]
    for thread in threads:
        thread.start()
    stop_by: float | None = None
    while any(t.is_alive() for t in threads):
        for side, thread in zip(sides, threads, strict=True):
            thread.join(timeout=0.05)
            if thread.is_alive() and stop_by is not None:
                if side.started or time.monotonic() > stop_by:
                    side.stopped = True
                    side.stop()
            elif not thread.is_alive() and stop_by is None and not side.alive:
                stop_by = time.monotonic() + STARTUP_GRACE_S
    if first:
        for side in sides:
            side.complete = side.alive and side.started


@contextlib.contextmanager
def ended(sides: list[SideProcess]) -> Iterator[list[SideProcess]]:
    """The sides, each closed when the block ends; stopped at once when it ends by an
    exception (a SIGTERM's SystemExit, an interrupt): a busy runner asked to close would
    finish its cases first, while a cancelled job is killed seconds later."""
    try:
        yield sides
    except BaseException:
        for side in sides:
            side.stop()
        raise
    for side in sides:
        side.close()


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
