"""A process and everything it starts, ended together: the keeper of a side's run.

A system under test may start processes that leave its session and group (a daemon:
`setsid`, a double fork) and keep the side's output pipe open: killing the side's process
group misses them, and a reader of that pipe would wait for ever. So each side runs under a
keeper (`supervised`, this module run as `python -I -m gate.process_tree`): a tiny process of
the gate's that is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so every process below it stays
below it whatever session or group it moves to (an orphan is handed to the keeper, not to
init). When the run ends, when its wall-clock limit passes or when the keeper is told to stop
(SIGTERM, SIGINT or SIGHUP), it kills everything below it, again until
nothing is left, reaps it, removes the run's temporary folder and exits: the pipe is closed
by then. It works the same as root and
not, in a container, with no namespace or cgroup to set up; only where there is no
`/proc` or no subreaper (not Linux) it can do no more than kill the run's process group.

`end_descendants` is the same sweep for a process that keeps running (a long-lived side
runner that must end what a run left behind): it must be a subreaper itself
(`become_subreaper`) to find the orphans.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36
TIMEOUT_EXIT = 3  # the gate's exit code for an error
POLL_S = 0.05
SWEEPS = 200


def become_subreaper() -> bool:
    """Orphans below this process are handed to it (Linux); False where that cannot be."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid → parent pid of every live process (zombies left out), from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[0] != "Z":
            found[int(entry.name)] = int(fields[1])
    return found


def descendants(root: int) -> list[int]:
    """Every live process below `root`."""
    children: dict[int, list[int]] = {}
    for pid, parent in _parents().items():
        children.setdefault(parent, []).append(pid)
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo += children.get(pid, [])
    return found


def _reap() -> None:
    """Collect every ended child of this process (safe in the keeper: all are its own)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def end_descendants(root: int | None = None, *, reap: bool = True) -> int:
    """Kill every process below `root` (this one), again until none is left; how many."""
    root = os.getpid() if root is None else root
    killed = 0
    for _ in range(SWEEPS):
        found = descendants(root) if Path("/proc/self").exists() else []
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        killed += len(found)
        if reap:
            _reap()
        time.sleep(POLL_S / 5)
    return killed


def supervised(argv: Sequence[str], limit_s: float, python: Sequence[str]) -> list[str]:
    """The command line that runs `argv` under a keeper: ended whole, at the latest after
    `limit_s` seconds. `python` is how the gate starts its own Python (`gate.interpreter`)."""
    return [*python, "-m", "gate.process_tree", f"{limit_s:g}", "--", *argv]


class _Stop(Exception):
    pass


def _stop(signum: int, _frame: object) -> None:
    raise _Stop(signum)


def _scratch() -> str:
    """The run's temporary folder (its TMPDIR), removed with the run: what a killed run
    leaves there (a system worker's private HOME, a framework's run folder) goes with it.
    Others may pass through it (0711) to the folders of their own it holds."""
    folder = tempfile.mkdtemp(prefix="gate-side-")
    os.chmod(folder, 0o711)
    return folder


def keep(argv: Sequence[str], limit_s: float) -> int:
    """Run `argv`, end everything below this process when it ends (or at `limit_s`, or when
    told to stop); its exit code (the gate's error code after the limit)."""
    become_subreaper()
    stops = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    for signum in stops:
        signal.signal(signum, _stop)
    scratch = _scratch()
    env = {**os.environ, "TMPDIR": scratch}
    child = subprocess.Popen(list(argv), close_fds=False, env=env)  # the gate's descriptors too
    deadline, code = time.monotonic() + limit_s, None
    try:
        while code is None:
            with contextlib.suppress(ChildProcessError):
                pid, status = os.waitpid(-1, os.WNOHANG)
                if pid == child.pid:  # reaped here: Popen must not signal or wait for it
                    code = child.returncode = os.waitstatus_to_exitcode(status)
                    break
            if time.monotonic() > deadline:
                print(f"gate: error: the run passed its wall-clock limit of {limit_s:g} s "
                      "(GATE_SIDE_TIMEOUT_S): it was stopped, with every process it started",
                      file=sys.stderr, flush=True)  # fmt: skip
                code = TIMEOUT_EXIT
            time.sleep(POLL_S)
    except _Stop as stop:
        code = 128 + int(stop.args[0])
    finally:
        for signum in stops:
            signal.signal(signum, signal.SIG_IGN)
        if child.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                child.kill()
        end_descendants()
        _reap()
        shutil.rmtree(scratch, ignore_errors=True)
    child.returncode = code
    return code if code >= 0 else 128 - code


def main() -> None:
    limit, _, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    sys.exit(keep(argv, float(limit)))


if __name__ == "__main__":
    main()
