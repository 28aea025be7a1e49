"""The report's account of which protections were active, and why any were not. Pure."""

from __future__ import annotations

from typing import Any

from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.protocol.environment import JOB_ENVIRONMENT
from gate.sandbox.protocol.messages import IsolationMode


def describe(mode: IsolationMode, settings: ZygoteSetup) -> dict[str, Any]:
    return {
        "process": "one forked process per execution (from a warm zygote), in its own session",
        "network": mode.network,
        "pid_namespace": mode.pid_ns,
        "mount_namespace": mode.mount_ns,
        "filesystem": _filesystem(mode, settings),
        "user": _user(mode),
        "no_new_privileges": True,
        "rlimits": _rlimits(mode, settings),
        "timeout_s": settings.timeout_s,
        "output_cap_kb": settings.max_output_kb,
        "environment": f"scrubbed: only {', '.join(JOB_ENVIRONMENT)}",
        "in_process": (
            "audit hook blocks frame, gc and ctypes introspection, tracing and code swapping; "
            "harness runs from private copies; tamper checks on builtins, modules and the SDK"
        ),
        "evidence": "nonce-authenticated frames written by the harness; eq compared outside",
        "workers": settings.workers,
        "degraded": _degraded(mode),
    }


def _degraded(mode: IsolationMode) -> list[str]:
    """The protections that are off, each with what that leaves open."""
    degraded: list[str] = []
    if not mode.network.startswith("isolated"):
        degraded.append(f"network {mode.network}")
    if not mode.pid_ns:
        degraded.append(
            "no PID namespace: leftover processes are killed by uid"
            if mode.uid_drop
            else "no PID namespace: only the job's process group is killed afterwards; a "
            "process that left it (setsid) can outlive the job"
        )
    if not mode.mount_ns:
        why = f" ({mode.view_problem})" if mode.view_problem else ""
        degraded.append(
            f"no private filesystem view{why}: the host's files are visible with the uid's rights"
        )
    if not mode.uid_drop:
        degraded.append(
            "uid not dropped (not root): RLIMIT_NPROC is not enforced"
            if not mode.root
            else "uid not dropped: RLIMIT_NPROC is not enforced"
        )
    return degraded


def _user(mode: IsolationMode) -> str:
    if mode.uid_drop:
        return (
            f"uid/gid {mode.first_uid}+slot (unprivileged, one per worker slot and run), "
            "no capabilities"
        )
    if mode.user_ns:
        return "the invoking user, mapped to root inside a user namespace (no host privileges)"
    return "the invoking user (not root, no user namespaces)"


def _filesystem(mode: IsolationMode, settings: ZygoteSetup) -> str:
    if not mode.mount_ns:
        return "the host's; working directory is an empty folder removed after the run"
    return (
        "minimal read-only root (/usr, /etc, the Python installation, a copy of "
        f"sandbox.pythonpath); writable only the job's own {settings.max_file_mb} MB tmpfs "
        "at /sandbox, gone after the run; "
        + ("/proc shows only the job's processes" if mode.root else "no /proc")
    )


def _rlimits(mode: IsolationMode, settings: ZygoteSetup) -> dict[str, str | int]:
    return {
        "address_space_mb": f"{settings.memory_mb} on top of the interpreter",
        "cpu_s": settings.cpu_s,
        "file_size_mb": settings.max_file_mb,
        "open_files": settings.max_open_files,
        "processes": settings.max_processes if mode.uid_drop else "not enforced",
    }
