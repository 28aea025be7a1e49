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

import marshal
import os
import select
import socket
import struct
import sys
from socket import SCM_RIGHTS, SOL_SOCKET
from typing import Any

from gate.sandbox.zygote import isolate, linux
from gate.sandbox.zygote.job import HARNESS_FAILED, SETUP_FAILED, Machine, run_child

MESSAGE = 65536  # requests are small: the job itself travels in a memfd
THREE_FDS = struct.Struct("3i")  # the read ends of stdout, stderr and evidence, for SCM_RIGHTS
ONE_FD_BYTES = 4
ONE_FD = socket.CMSG_SPACE(ONE_FD_BYTES)


def serve(sock: socket.socket, machine: Machine) -> None:
    """Loop until the zygote goes away; never returns into the caller's code (it exits).

    Every page this loop writes is faulted (and copied, while a child shares it) once per
    job, and a Python call writes to its function, its code and more: so the loop is one flat
    function around the fork, with epoll and plain tuples, and no helper objects."""
    poll = select.epoll()
    server = sock.fileno()
    poll.register(server, select.EPOLLIN)
    children: dict[int, int] = {}  # pidfd -> pid
    own = machine.own_pid_namespace if machine.mode.pid_via == "setns" else None
    while True:
        for fd, _ in poll.poll():
            if fd != server:  # a child exited: only its parent can collect status and usage
                poll.unregister(fd)  # explicitly: a child forked since may still hold a copy
                os.close(fd)
                pid = children.pop(fd)
                _, status, usage = os.wait4(pid, 0)
                cpu = usage.ru_utime + usage.ru_stime
                sock.send(marshal.dumps(("exited", pid, status, cpu, usage.ru_maxrss)))
                continue
            data, ancillary, _, _ = sock.recvmsg(MESSAGE, ONE_FD)
            if not data:
                os._exit(0)
            _, job_id, slot, nonce = marshal.loads(data)
            payload = _received_fd(ancillary)
            try:
                if own is not None:
                    isolate.new_pid_namespace(own)
                pid, reads = _fork(slot, nonce, payload, machine)
            except OSError as exc:
                sock.send(marshal.dumps(("failed", job_id, f"cannot start the job: {exc}")))
                continue
            finally:
                os.close(payload)
            pidfd = os.pidfd_open(pid)
            children[pidfd] = pid
            poll.register(pidfd, select.EPOLLIN)
            rights = [(SOL_SOCKET, SCM_RIGHTS, reads)]
            sock.sendmsg([marshal.dumps(("started", job_id, pid))], rights)
            for read in THREE_FDS.unpack(reads):
                os.close(read)


def _received_fd(ancillary: list[tuple[int, int, bytes]]) -> int:
    for level, kind, data in ancillary:
        if level == SOL_SOCKET and kind == SCM_RIGHTS and len(data) >= ONE_FD_BYTES:
            return int.from_bytes(data[:ONE_FD_BYTES], sys.byteorder)
    raise OSError("the request carried no job")


def _fork(slot: int, nonce: bytes, payload: int, machine: Machine) -> tuple[int, bytes]:
    """Fork the job's child (the next fork's PID namespace is already set up)."""
    out_read, out_write = os.pipe()
    err_read, err_write = os.pipe()
    evidence_read, evidence_write = os.pipe()
    writes = (out_write, err_write, evidence_write)
    try:
        pid = os.fork()
    except OSError:
        for fd in (out_read, out_write, err_read, err_write, evidence_read, evidence_write):
            os.close(fd)
        raise
    if pid == 0:
        try:
            # Read here: the server itself never touches the job (its pages stay shared).
            job, tests, imports = marshal.loads(_read_all(payload))
            job["prepared_tests"] = (marshal.loads(tests), imports) if tests is not None else None
            if machine.mode.pid_via == "fork":
                _through_intermediate(job, slot, machine, nonce, writes)
            run_child(job, slot, machine, nonce, writes)
        except BaseException as exc:
            os.write(writes[1], f"sandbox setup failed: {exc}\n".encode())
        finally:
            os._exit(SETUP_FAILED)  # not reached on success: the job exits on its own
    os.close(out_write)
    os.close(err_write)
    os.close(evidence_write)
    return pid, THREE_FDS.pack(out_read, err_read, evidence_read)


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
    chunks: list[bytes] = []
    while chunk := os.pread(fd, MESSAGE, sum(map(len, chunks))):
        chunks.append(chunk)
    return b"".join(chunks)
