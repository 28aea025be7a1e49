"""The zygote's event loop: jobs in on stdin, outcomes out on stdout.

The zygote forks its fork server (`gate.sandbox.zygote.forkserver`) once, while it is still quiet,
and from then on only supervises: it sends each job to the fork server (the job itself in a
memfd), receives the child's pipes and later its exit, enforces the deadline, reads the
output and the evidence, and sends the outcome to the gate.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import selectors
import signal
import socket
import time
import traceback
from typing import Any

from gate.sandbox.protocol import framing
from gate.sandbox.zygote import forkserver, harness, job, linux

TEST_CACHE = 512  # compiled test modules kept by the zygote
SOCKET_BUFFER = 1 << 20


def start_fork_server(machine: job.Machine) -> tuple[socket.socket, int]:
    """Fork the fork server while this process is still quiet (see `forkserver`)."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    for end in (ours, theirs):
        end.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SOCKET_BUFFER)
        end.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SOCKET_BUFFER)
    pid = os.fork()
    if pid == 0:
        try:
            ours.close()
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.close(null)
            linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
            linux.prctl(linux.PR_SET_NO_NEW_PRIVS, 1)  # inherited by every job (isolate.enter)
            forkserver.serve(theirs, machine)
        except BaseException:
            traceback.print_exc()  # lands in the gate's view of the zygote's stderr
        finally:
            os._exit(0)
    theirs.close()
    return ours, pid


def _memfd(data: bytes) -> int:
    fd = os.memfd_create("gate-job")
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return fd


class Supervisor:
    """The event loop: jobs arrive on stdin, outcomes leave on stdout; the fork server forks."""

    def __init__(self, machine: job.Machine) -> None:
        self.machine = machine
        self.server, self.server_pid = start_fork_server(machine)
        self.selector = selectors.DefaultSelector()
        self.waiting: dict[int, tuple[int, bytes, float]] = {}  # job id -> (slot, nonce, sent)
        self.running: dict[int, job.RunningJob] = {}  # by child pid
        self.owners: dict[int, job.RunningJob] = {}  # pipe -> its job
        self.reader = framing.Reader()
        self.tests: dict[str, tuple[bytes, list[str]]] = {}  # test code -> marshalled module

    def serve(self) -> None:
        self.selector.register(0, selectors.EVENT_READ)
        self.selector.register(self.server, selectors.EVENT_READ)
        while True:
            for key, _ in self.selector.select(self._timeout()):
                if key.fd == 0:
                    if not self._read_jobs():
                        return
                elif key.fileobj is self.server:
                    if not self._read_server():
                        return
                else:
                    self._read_job(key.fd)
            self._tick()

    def _timeout(self) -> float | None:
        if not self.running:
            return None
        return max(0.0, min(r.wake_at() for r in self.running.values()) - time.monotonic())

    def _read_jobs(self) -> bool:
        data = os.read(0, job.CHUNK)
        if not data:
            return False
        for message in self.reader.feed(data):
            if message.get("type") == "exit":
                return False
            self.start(message)
        return True

    def _read_server(self) -> bool:
        data, fds, _, _ = socket.recv_fds(self.server, 4096, 3)
        if not data:
            self._fail_all("the fork server died")
            return False
        message = marshal.loads(data)
        if message[0] == "started":
            _, job_id, pid = message
            slot, nonce, sent = self.waiting.pop(job_id)
            running = job.RunningJob.start(
                job_id, slot, pid, nonce, sent, fds, self.machine.settings
            )
            self.running[pid] = running
            for fd in fds:
                self.owners[fd] = running
                self.selector.register(fd, selectors.EVENT_READ)
        elif message[0] == "exited":
            _, pid, status, cpu_s, max_rss_kb = message
            finished = self.running.get(pid)
            if finished is not None:  # else: given up on after the kill, already reported
                finished.exited(job.Exit(status, cpu_s, max_rss_kb), time.monotonic())
        elif message[0] == "failed":
            _, job_id, error = message
            self.waiting.pop(job_id, None)
            framing.write_fd(1, {"id": job_id, "status": "sandbox_failed", "error": error})
        return True

    def _read_job(self, fd: int) -> None:
        running = self.owners[fd]
        try:
            chunk = os.read(fd, job.CHUNK)
        except BlockingIOError:
            return
        if chunk:
            running.feed(fd, chunk)
        else:
            self._forget(fd)

    def _forget(self, fd: int) -> None:
        self.selector.unregister(fd)
        del self.owners[fd]

    def _tick(self) -> None:
        now = time.monotonic()
        for running in list(self.running.values()):
            watched = any(self.owners.get(fd) is running for fd in running.streams)
            if running.exited_at is None:
                if now >= running.deadline:
                    if running.timed_out:
                        self._complete(running)  # killed long ago: stop waiting for it
                    else:
                        running.expire(now)
            elif not watched or now >= running.wake_at():
                self._complete(running)

    def _prepared(self, source: str | None) -> tuple[bytes | None, list[str]]:
        """The strict test module, compiled here once per test code and shipped marshalled."""
        if source is None:
            return None, []
        if source not in self.tests:
            if len(self.tests) >= TEST_CACHE:
                del self.tests[next(iter(self.tests))]
            code, imports = harness.prepare_tests(source)
            self.tests[source] = (marshal.dumps(code), imports)
        return self.tests[source]

    def _free_slot(self) -> int:
        used = {r.slot for r in self.running.values()} | {w[0] for w in self.waiting.values()}
        return next(slot for slot in range(len(used) + 1) if slot not in used)

    def start(self, message: dict[str, Any]) -> None:
        job_id: Any = message.get("id")  # the gate's own number for the job
        try:
            tests, imports = self._prepared(message.get("test_code"))
            slot = self._free_slot()
            job.prepare_slot(self.machine.settings, self.machine.mode, slot)
            nonce = os.urandom(job.NONCE_BYTES)
            payload = _memfd(marshal.dumps((message, tests, imports)))  # JSON data: marshal-able
            try:
                request = marshal.dumps(("run", job_id, slot, nonce))
                socket.send_fds(self.server, [request], [payload])
            finally:
                os.close(payload)
        except Exception as exc:
            error = f"cannot start the job: {type(exc).__name__}: {exc}"
            framing.write_fd(1, {"id": job_id, "status": "sandbox_failed", "error": error})
            return
        self.waiting[job_id] = (slot, nonce, time.monotonic())

    def _complete(self, running: job.RunningJob) -> None:
        for fd in running.streams:
            if self.owners.get(fd) is running:
                self._forget(fd)
        del self.running[running.pid]
        try:
            outcome = job.finish(running, self.machine)
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            outcome = {"id": running.id, "status": "sandbox_failed", "error": error}
        framing.write_fd(1, outcome)

    def _fail_all(self, reason: str) -> None:
        for job_id in [*self.waiting, *(r.id for r in self.running.values())]:
            framing.write_fd(1, {"id": job_id, "status": "sandbox_failed", "error": reason})

    def shutdown(self) -> None:
        for running in self.running.values():
            running.kill()
        self.server.close()
        with contextlib.suppress(OSError):
            os.waitpid(self.server_pid, 0)
