"""Isolation of one execution: namespaces, filesystem view, limits, identity, environment.

The zygote isolates its network and enters the read-only filesystem view once, then
`detect_mode` finds out what else this machine allows; `enter` runs in every job's child (the
init process of its own PID namespace) before any candidate code, and applies exactly that
mode. What is unavailable is reported, never silently skipped.
"""

from __future__ import annotations

import _signal
import json
import os
import resource
import signal
from dataclasses import asdict, dataclass
from typing import Any

from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.protocol.environment import job_environment
from gate.sandbox.zygote import fsview, linux
from gate.sandbox.zygote.fsview import ViewPlan

EVIDENCE_FD = 3
_set_signal = _signal.signal  # bound before `guard.lock_down` disables it for everyone else


@dataclass(frozen=True)
class IsolationMode:
    """What the zygote found it can do on this machine."""

    root: bool
    user_ns: bool = False
    network: str = "not isolated"
    pid_ns: bool = False
    pid_via: str = ""  # "setns" (root: one fork per job) or "fork" (user namespace: two)
    mount_ns: bool = False
    uid_drop: bool = False
    first_uid: int = 0  # slot N runs as first_uid + N (when uid_drop)
    view_problem: str = ""  # why the filesystem view is unavailable, if it is

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def isolate_network() -> tuple[bool, str]:
    """Enter an empty network namespace (root), or a user namespace holding one (non-root)."""
    if os.geteuid() == 0:
        try:
            linux.unshare(linux.CLONE_NEWNET)
        except OSError as exc:
            return False, f"not isolated: {exc}"
        return False, "isolated (empty network namespace)"
    uid, gid = os.geteuid(), os.getegid()
    try:
        linux.unshare(linux.CLONE_NEWUSER | linux.CLONE_NEWNET)
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    except OSError as exc:
        return False, f"not isolated: no user namespaces for a non-root user ({exc})"
    return True, "isolated (empty network namespace inside a user namespace)"


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def enter_view(settings: ZygoteSetup, plan: ViewPlan) -> str | None:
    """Move the zygote into the read-only view; None on success, else why it is unavailable."""
    try:
        fsview.enter_view(plan, _root_dir(settings, "view"))
    except OSError as exc:
        return str(exc)
    return None


def new_pid_namespace(own: int) -> None:
    """Make the next fork the init of a fresh PID namespace. `unshare` alone works once per
    process; going back to our own namespace first (`setns`) allows it again, every job."""
    linux.setns(own, linux.CLONE_NEWPID)
    linux.unshare(linux.CLONE_NEWPID)


def detect_mode(
    settings: ZygoteSetup, root: bool, user_ns: bool, network: str, own: int | None
) -> IsolationMode:
    """Probe with a throwaway job which namespaces and identity changes work here.

    Runs before the zygote enters its filesystem view, so that a failure leaves it on the
    host's filesystem rather than in a view where jobs would have nowhere to write."""
    pid_via = ""
    if own is not None:
        try:
            new_pid_namespace(own)
            pid_via = "setns"
        except OSError:
            pid_via = "fork" if user_ns else ""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        if pid_via == "fork":
            _probe_through_intermediate(settings, root, write)
        found = _probe(settings, root)
        os.write(write, json.dumps(found).encode())
        os._exit(0)
    os.close(write)
    data = os.read(read, 65536)
    os.close(read)
    os.waitpid(pid, 0)
    if pid_via == "setns" and own is not None:
        linux.setns(own, linux.CLONE_NEWPID)  # later forks stay in our namespace again
    found = json.loads(data or b"{}")
    return IsolationMode(
        root=root,
        user_ns=user_ns,
        network=network,
        pid_ns=bool(pid_via) and found.get("init", False),
        pid_via=pid_via if found.get("init") else "",
        mount_ns=found.get("mount_ns", False),
        uid_drop=found.get("uid_drop", False),
        first_uid=settings.uid_base,
    )


def _probe_through_intermediate(settings: ZygoteSetup, root: bool, write: int) -> None:
    try:
        linux.unshare(linux.CLONE_NEWPID)
    except OSError:
        return  # probe without a PID namespace, in this process
    pid = os.fork()
    if pid == 0:
        os.write(write, json.dumps(_probe(settings, root)).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    os._exit(0)


def _probe(settings: ZygoteSetup, root: bool) -> dict[str, bool]:
    """In the probe's process (the init of a fresh PID namespace, if any)."""
    found = {"init": os.getpid() == 1, "mount_ns": False, "uid_drop": False}
    owner = settings.uid_base if root else os.getuid()
    if found["init"]:
        try:
            linux.unshare(linux.CLONE_NEWNS)
            linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
            linux.mount("proc", "/proc", "proc", linux.MS_NOSUID | linux.MS_NODEV)
            options = f"size=1m,mode=700,uid={owner},gid={owner}"
            linux.mount("tmpfs", _root_dir(settings, "probe"), "tmpfs", 0, options)
            found["mount_ns"] = True
        except OSError:
            pass
    if root:
        try:
            os.setgroups([])
            os.setresgid(owner, owner, owner)
            os.setresuid(owner, owner, owner)
            found["uid_drop"] = os.getuid() == owner
        except OSError:
            pass
    return found


def _root_dir(settings: ZygoteSetup, slot: int | str) -> str:
    path = os.path.join(settings.work_dir, "roots", str(slot))
    os.makedirs(path, exist_ok=True)
    return path


def job_dir(settings: ZygoteSetup, slot: int) -> str:
    """Working folder of a slot when there is no mount namespace (no private /tmp)."""
    return os.path.join(settings.work_dir, "jobs", str(slot))


def identity(settings: ZygoteSetup, mode: IsolationMode, slot: int) -> tuple[int, int]:
    """A distinct unprivileged uid per worker slot (and per sandbox, see `protocol.boot`), so that
    RLIMIT_NPROC counts one job only and a sweep by uid reaches only that job."""
    if mode.uid_drop:
        return settings.uid_base + slot, settings.uid_base + slot
    return os.getuid(), os.getgid()


def enter(
    settings: ZygoteSetup, mode: IsolationMode, slot: int, fds: tuple[int, int, int], baseline: int
) -> None:
    """Turn the freshly forked child into a sandbox; raises OSError if a step fails.

    `baseline` is the zygote's address space (what the child starts with); the environment
    was already scrubbed in the zygote. Every step here is paid by every job, so it is lean."""
    os.setsid()
    _arrange_fds(*fds)
    uid, gid = identity(settings, mode, slot)
    if mode.mount_ns:
        fsview.enter_job(settings.max_file_mb, uid, gid, proc=mode.root)
    else:
        home = job_dir(settings, slot)
        os.chdir(home)
        os.environ["HOME"] = os.environ["TMPDIR"] = home
    _set_limits(settings, mode, baseline)
    if mode.uid_drop:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    # no_new_privs is already set: the fork server sets it on itself, and it is inherited
    # (and can never be unset). The death signal is not, and the uid change clears it: set
    # here, after that change, so that the job dies with its fork server.
    linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
    # A too-large file then fails with EFBIG inside the candidate instead of killing the job.
    _set_signal(signal.SIGXFSZ, _signal.SIG_IGN)


def default_signal(number: int) -> None:
    """Restore the default action (the `signal` module's own function is locked down)."""
    _set_signal(number, _signal.SIG_DFL)


def _arrange_fds(stdout: int, stderr: int, evidence: int) -> None:
    null = os.open(os.devnull, os.O_RDONLY)
    for source, target in ((null, 0), (stdout, 1), (stderr, 2), (evidence, EVIDENCE_FD)):
        os.dup2(source, target)
    os.closerange(EVIDENCE_FD + 1, resource.getrlimit(resource.RLIMIT_NOFILE)[0])


def address_space() -> int:
    """Bytes mapped by this process now (the zygote measures itself before entering its view)."""
    with open("/proc/self/statm") as handle:
        pages = int(handle.read().split()[0])
    return pages * os.sysconf("SC_PAGE_SIZE")


def limits(settings: ZygoteSetup, mode: IsolationMode, baseline: int) -> dict[int, tuple[int, int]]:
    """The rlimits of a job; memory counts on top of the interpreter already mapped."""
    memory = baseline + settings.memory_mb * 1024 * 1024
    table = {
        resource.RLIMIT_AS: (memory, memory),
        # soft = hard: the job's init ignores SIGXCPU, so the kernel's SIGKILL ends it
        resource.RLIMIT_CPU: (settings.cpu_s, settings.cpu_s),
        resource.RLIMIT_FSIZE: (settings.max_file_mb * 1024 * 1024,) * 2,
        resource.RLIMIT_NOFILE: (settings.max_open_files, settings.max_open_files),
        resource.RLIMIT_CORE: (0, 0),
    }
    if mode.uid_drop:
        table[resource.RLIMIT_NPROC] = (settings.max_processes, settings.max_processes)
    return table


def _set_limits(settings: ZygoteSetup, mode: IsolationMode, baseline: int) -> None:
    for kind, value in limits(settings, mode, baseline).items():
        resource.setrlimit(kind, value)


def scrub_environment(home: str) -> None:
    """In the zygote: the only environment any job will see (no secrets, nothing inherited)."""
    lang = os.environ.get("LANG", "C.UTF-8")
    os.environ.clear()
    os.environ.update(job_environment(home, lang))
