"""The fork server: the quiet twin of the zygote that forks every job's child.

After a fork, every page the parent writes is copied (it is shared with the child until then).
The zygote's event loop writes a lot; forking from it made it copy about 340 pages per job.
So the zygote forks this server once, and the server does little besides forking: it
receives a request (the job itself comes in a memfd that only the child reads), makes a fresh
PID namespace, forks the child, hands the child's pipes to the zygote (SCM_RIGHTS over a
SOCK_SEQPACKET socket), and reports each child's exit status and resource use, which only
the parent can collect. Messages are marshalled tuples.
"""

from __future__ import annotations

import json
import marshal
import os
import selectors
import socket
from typing import Any

from gate.sandbox import isolate, linux
from gate.sandbox.job import HARNESS_FAILED, SETUP_FAILED, Machine, run_child

MESSAGE = 65536  # requests are small: the job itself travels in a memfd


def serve(sock: socket.socket, machine: Machine) -> None:
    """Loop until the zygote goes away; never returns into the caller's code (it exits)."""
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    children: dict[int, int] = {}  # pidfd -> pid
    while True:
        for key, _ in selector.select():
            if key.fileobj is sock:
                data, fds, _, _ = socket.recv_fds(sock, MESSAGE, 1)
                if not data:
                    os._exit(0)
                _handle(marshal.loads(data), fds, sock, machine, children, selector)
            else:
                _reap(key.fd, sock, children, selector)


def _handle(
    request: tuple[Any, ...],
    fds: list[int],
    sock: socket.socket,
    machine: Machine,
    children: dict[int, int],
    selector: selectors.BaseSelector,
) -> None:
    _, job_id, slot, nonce = request
    try:
        pid, reads = _fork(slot, nonce, fds[0], machine)
    except OSError as exc:
        sock.send(marshal.dumps(("failed", job_id, f"cannot start the job: {exc}")))
        return
    finally:
        os.close(fds[0])
    pidfd = os.pidfd_open(pid)
    children[pidfd] = pid
    selector.register(pidfd, selectors.EVENT_READ)
    socket.send_fds(sock, [marshal.dumps(("started", job_id, pid))], reads)
    for fd in reads:
        os.close(fd)


def _fork(slot: int, nonce: bytes, payload: int, machine: Machine) -> tuple[int, list[int]]:
    pipes = [os.pipe() for _ in range(3)]  # stdout, stderr, evidence
    writes = tuple(w for _, w in pipes)
    if machine.mode.pid_via == "setns" and machine.own_pid_namespace is not None:
        isolate.new_pid_namespace(machine.own_pid_namespace)
    pid = os.fork()
    if pid == 0:
        try:
            # Read here: the server itself never touches the job (its pages stay shared).
            job, tests, imports = marshal.loads(_read_all(payload))
            job = json.loads(job)
            job["prepared_tests"] = (marshal.loads(tests), imports) if tests is not None else None
            if machine.mode.pid_via == "fork":
                _through_intermediate(job, slot, machine, nonce, writes)
            run_child(job, slot, machine, nonce, writes)
        except BaseException as exc:
            os.write(writes[1], f"sandbox setup failed: {exc}\n".encode())
        finally:
            os._exit(SETUP_FAILED)  # not reached on success: the job exits on its own
    for write in writes:
        os.close(write)
    return pid, [read for read, _ in pipes]


def _through_intermediate(
    job: Any, slot: int, machine: Machine, nonce: bytes, writes: tuple[int, ...]
) -> None:
    """Without `setns` (a user namespace): this process makes the PID namespace, its child is
    the job, and it exits the way the job did (its own death takes the job along)."""
    try:
        linux.unshare(linux.CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            run_child(job, slot, machine, nonce, writes)
        for write in writes:
            os.close(write)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            isolate.default_signal(os.WTERMSIG(status))
            os.kill(os.getpid(), os.WTERMSIG(status))
        os._exit(os.waitstatus_to_exitcode(status))
    finally:
        os._exit(HARNESS_FAILED)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.pread(fd, MESSAGE, sum(map(len, chunks))):
        chunks.append(chunk)
    return b"".join(chunks)


def _reap(
    pidfd: int, sock: socket.socket, children: dict[int, int], selector: selectors.BaseSelector
) -> None:
    selector.unregister(pidfd)
    os.close(pidfd)
    pid = children.pop(pidfd)
    _, status, usage = os.wait4(pid, 0)
    report = ("exited", pid, status, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)
    sock.send(marshal.dumps(report))
