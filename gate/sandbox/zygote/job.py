"""One execution: the child's entry point, and the zygote's view of it while it runs.

The fork server (`gate.sandbox.zygote.forkserver`) forks the child as the init process of a fresh
PID namespace: when it dies, the kernel kills every process the candidate started. The
child enters the sandbox (`gate.sandbox.zygote.isolate`) and runs the harness. The zygote feeds the
child's pipes to its `RunningJob`, kills it at the deadline, and `finish` turns what it saw
into the outcome message. Without PID namespaces, leftovers are swept by uid or group.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gate.sandbox.protocol import plain
from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.zygote import isolate
from gate.sandbox.zygote.isolate import IsolationMode

NONCE_BYTES = 16
LENGTH_BYTES = 4
EVIDENCE_LIMIT = 32 * 1024 * 1024
SETUP_FAILED = 71
HARNESS_FAILED = 70
CHUNK = 65536
DRAIN_S = 0.5  # after the child exits: how long its leftovers may keep the pipes open
REAP_S = 10.0  # after SIGKILL: how long to wait for the exit before giving up on the pipes


@dataclass(frozen=True)
class Machine:
    """Everything a job needs, prepared once by the zygote."""

    settings: ZygoteSetup
    mode: IsolationMode
    run_harness: Callable[[dict[str, Any], bytes], None]
    baseline: int = 0  # the zygote's address space: the memory limit comes on top of it
    own_pid_namespace: int | None = None  # fd of the zygote's PID namespace
    pinned: tuple[type, ...] = ()  # the trusted classes, kept alive so their ids stay unique


@dataclass
class Stream:
    limit: int
    data: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.limit - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    def text(self) -> str:
        return bytes(self.data).decode("utf-8", "replace")


@dataclass
class Exit:
    """What the fork server collected when it reaped the child."""

    status: int
    cpu_s: float
    max_rss_kb: int


@dataclass
class RunningJob:
    id: int
    slot: int
    pid: int
    nonce: bytes
    deadline: float
    streams: dict[int, Stream]  # read end -> stream (stdout, stderr, evidence in that order)
    evidence: Stream
    timed_out: bool = False
    exited_at: float | None = None
    exit: Exit | None = None

    @classmethod
    def start(
        cls,
        job_id: int,
        slot: int,
        pid: int,
        nonce: bytes,
        started: float,
        reads: list[int],
        settings: ZygoteSetup,
    ) -> RunningJob:
        cap = settings.max_output_kb * 1024
        streams = {reads[0]: Stream(cap), reads[1]: Stream(cap), reads[2]: Stream(EVIDENCE_LIMIT)}
        for fd in reads:
            os.set_blocking(fd, False)
        return cls(
            id=job_id,
            slot=slot,
            pid=pid,
            nonce=nonce,
            deadline=started + settings.timeout_s,
            streams=streams,
            evidence=streams[reads[2]],
        )

    def feed(self, fd: int, chunk: bytes) -> None:
        self.streams[fd].add(chunk)
        if self.evidence.total > EVIDENCE_LIMIT:
            self.kill()

    def kill(self) -> None:
        if self.exit is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def expire(self, now: float) -> None:
        """Past the deadline: kill it (the kernel empties its namespace) and wait for the exit."""
        self.kill()
        self.timed_out = True
        self.deadline = now + REAP_S

    def exited(self, report: Exit, now: float) -> None:
        self.exit = report
        self.exited_at = now

    def wake_at(self) -> float:
        return self.exited_at + DRAIN_S if self.exited_at is not None else self.deadline


def run_child(
    job: dict[str, Any], slot: int, machine: Machine, nonce: bytes, fds: tuple[int, ...]
) -> None:
    """In the forked child. Never returns: this process must not go back to its parent's loop."""
    try:
        try:
            streams = (fds[0], fds[1], fds[2])
            isolate.enter(machine.settings, machine.mode, slot, streams, machine.baseline)
        except BaseException as exc:
            os.write(2, f"sandbox setup failed: {exc}\n".encode())
            os._exit(SETUP_FAILED)
        machine.run_harness(job, nonce)
    finally:
        os._exit(HARNESS_FAILED)


def prepare_slot(settings: ZygoteSetup, mode: IsolationMode, slot: int) -> None:
    """Without a private filesystem view: an empty working folder owned by the slot's uid."""
    if mode.mount_ns:
        return
    import shutil  # here: its compression modules would add mappings that every fork copies

    path = isolate.job_dir(settings, slot)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, mode=0o700)
    uid, gid = isolate.identity(settings, mode, slot)
    os.chown(path, uid, gid)


def finish(running: RunningJob, machine: Machine) -> dict[str, Any]:
    """Clean up after the child and describe what happened (JSON-able)."""
    for fd in running.streams:
        with contextlib.suppress(OSError):
            os.close(fd)
    if not machine.mode.pid_ns:
        _sweep(running, machine)
    streams = list(running.streams.values())
    records, problem = parse_frames(bytes(streams[2].data), running.nonce)
    if streams[2].total > EVIDENCE_LIMIT:
        problem = "the evidence channel was flooded"
    report = running.exit or Exit(status=signal.SIGKILL, cpu_s=0.0, max_rss_kb=0)
    status = report.status
    exit_code = os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else None
    setup_failed = not records and exit_code == SETUP_FAILED
    return {
        "id": running.id,
        "status": "setup_failed" if setup_failed else "ok",
        "exit_code": exit_code,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
        "timed_out": running.timed_out,
        "cpu_s": round(report.cpu_s, 3),
        "max_rss_kb": report.max_rss_kb,
        "stdout": streams[0].text(),
        "stderr": streams[1].text(),
        "stdout_bytes": streams[0].total,
        "stderr_bytes": streams[1].total,
        "records": [_jsonable(r) for r in records],
        "evidence_error": problem,
    }


def _sweep(running: RunningJob, machine: Machine) -> None:
    """No PID namespace: kill what the job left behind."""
    with contextlib.suppress(OSError):
        os.killpg(running.pid, signal.SIGKILL)
    if machine.mode.uid_drop:
        uid, _ = isolate.identity(machine.settings, machine.mode, running.slot)
        _kill_uid(uid)
    import shutil

    shutil.rmtree(isolate.job_dir(machine.settings, running.slot), ignore_errors=True)


def _kill_uid(uid: int) -> None:
    """Every process of the slot's uid: a helper with that uid sends SIGKILL to -1 until none
    is left (a process cannot change its uid, and no other job runs with this one)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for _ in range(1000):
                os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
        os._exit(0)
    os.waitpid(pid, 0)


def parse_frames(data: bytes, nonce: bytes) -> tuple[list[tuple[Any, ...]], str | None]:
    """Authentic frames up to the first byte that is not one; and what was wrong, if anything."""
    records: list[tuple[Any, ...]] = []
    pos = 0
    head = NONCE_BYTES + LENGTH_BYTES
    while pos < len(data):
        if len(data) - pos < head:
            return records, "the evidence channel ended in the middle of a frame"
        if data[pos : pos + NONCE_BYTES] != nonce:
            return records, "the evidence channel carried data the harness did not write"
        size = int.from_bytes(data[pos + NONCE_BYTES : pos + head], "big")
        end = pos + head + size
        if end > len(data):
            return records, "the evidence channel ended in the middle of a frame"
        record = marshal.loads(data[pos + head : end])
        if type(record) is not tuple or not record or type(record[0]) is not str:
            return records, "the evidence channel carried a malformed frame"
        records.append(record)
        pos = end
    return records, None


def _jsonable(record: tuple[Any, ...]) -> list[Any]:
    if record[0] == "call":
        kind, index, ok, is_plain, value, type_name, shown, error = record
        encoded = plain.encode(value) if is_plain else None
        return [kind, index, ok, is_plain, encoded, type_name, shown, error]
    if record[0] == "check":
        kind, ok, is_plain, value, type_name, shown, error = record
        encoded = plain.encode(value) if is_plain else None
        return [kind, ok, is_plain, encoded, type_name, shown, error]
    return list(record)
