"""The system under test's own process: a `python` target or a `command`, apart from the gate.

Started by `gate.systems.worker` as a script (`python -P worker_main.py CONFIG`, so it imports
nothing of the gate), in the side's checkout, with the system's environment. When the gate
runs as root the worker confines itself before it imports or runs anything of the system
(`confine`): it drops to the unprivileged `uid` of the config with no supplementary groups and
`no_new_privs` (a setuid program cannot give root back), so it can read the checkout but write
neither the reports, the response cache nor the gate's files. Where the folders it must read
(the Python installation, the checkout, its HOME) lie below one that others cannot enter (a
pyenv in root's 0700 home, pytest's 0700 temporary folders), it first enters a mount namespace
of its own in which that folder is an empty read-only tmpfs holding only those folders: the
rest of it (root's own files) stays out of sight. It dies with the process that started it.

Calls arrive as JSON lines on the file descriptor `calls_fd` (`{"id", "input", "repeat",
"timeout"}`) and run on a pool of `concurrency` threads; each answer is one JSON line on
`answers_fd` (`{"id", "ok": true, "value"}` or `{"id", "ok": false, "error"}`). Both are pipes
of their own: stdin is empty, and what the system prints on stdout and stderr stays its own
output. The first line is the start's outcome: `{"ready": true, "file", "takes_repeat",
"signature", "uid"}`, or `{"ready": false, "error"}` (a target that does not import: the
user's input).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import inspect
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_REMOUNT, MS_BIND = 1, 2, 4, 32, 4096
MS_REC, MS_PRIVATE = 16384, 1 << 18
STDERR_TAIL = 500


class Refused(Exception):
    """The target cannot be called: the message is the user's to fix."""


def _prctl(option: int, value: int) -> None:
    # Not Linux: no such call; the gate closes our calls pipe when it ends.
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def needed_folders(config: dict[str, Any]) -> list[str]:
    """What the system must read: the Python installation and its import path, the checkout,
    its HOME; each resolved, none below another."""
    named = [sys.base_prefix, sys.prefix, sys.exec_prefix, *sys.path, config["root"]]
    named += [config["home"]] if config.get("home") else []
    found = sorted({os.path.realpath(p) for p in named if p and os.path.isdir(p)})
    kept: list[str] = []
    for path in found:
        if not any(path == k or path.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(path)
    return kept


def closed_ancestor(path: str) -> str | None:
    """The topmost folder above `path` that others cannot enter (no `o+x`), if any."""
    parts = path.strip("/").split("/")
    for depth in range(1, len(parts)):
        folder = "/" + "/".join(parts[:depth])
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
    return None


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    encode = lambda v: v.encode() if v is not None else None  # noqa: E731
    if libc.mount(encode(source), encode(target), encode(fstype), flags, encode(data)) != 0:
        raise OSError(ctypes.get_errno(), f"mount {target}: {os.strerror(ctypes.get_errno())}")


def open_view(folders: list[str]) -> None:
    """Each closed folder above `folders` becomes, in a mount namespace of our own, a read-only
    tmpfs that holds only those of `folders` below it (bound from their real place)."""
    closed: dict[str, list[str]] = {}
    for folder in folders:
        top = closed_ancestor(folder)
        if top is not None:
            closed.setdefault(top, []).append(folder)
    if not closed:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        errno = ctypes.get_errno()
        shown = ", ".join(f"{top} (above {below[0]})" for top, below in closed.items())
        raise OSError(
            errno,
            f"{shown}: others cannot enter it, and this machine allows no mount namespace "
            f"({os.strerror(errno)}) to show the system what it must read there; make it "
            "enterable (chmod o+x) or run the gate as a user that is not root",
        )
    _mount(None, "/", None, MS_REC | MS_PRIVATE, "")
    for top, below in closed.items():
        handles = {folder: os.open(folder, os.O_PATH | os.O_DIRECTORY) for folder in below}
        _mount("tmpfs", top, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k")
        for folder, fd in handles.items():
            os.makedirs(folder, mode=0o755, exist_ok=True)
            _mount(f"/proc/self/fd/{fd}", folder, None, MS_BIND | MS_REC, "")
            os.close(fd)
        _mount(None, top, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, "mode=0755")


def confine(config: dict[str, Any]) -> None:
    """As the config's `uid` (set when the gate runs as root): in the view `open_view` makes,
    with no groups and no way back to root; dies with its parent either way."""
    uid = config.get("uid")
    if uid is not None:
        open_view(needed_folders(config))
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        _prctl(PR_SET_NO_NEW_PRIVS, 1)
    # After the uid change, which clears it. It follows the thread that started us: a restart
    # on a runner's thread ends with that pool, after the run's last call. Once serving, the
    # calls pipe's end (the gate's process is gone) ends us too.
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def short_exception(exc: BaseException) -> str:
    """`Type: message (at file:line)`, as the runner words an exception of a system."""
    message, name = str(exc).strip(), type(exc).__name__
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno})" if frame else ""
    return f"{name}: {message}{where}" if message else f"{name}{where}"


def import_target(target: str, root: str) -> tuple[Any, str | None]:
    """`module:function` with the checkout first on sys.path; the function and its file."""
    module_name, _, attr = target.partition(":")
    top = module_name.split(".")[0]
    if top in sys.builtin_module_names:
        raise Refused(f"`{top}` is a built-in module")
    sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise Refused(f"module {module_name!r} not found in {root}") from None
        raise Refused(f"importing {module_name!r} failed: {exc}") from None
    except Exception as exc:  # the user's module failed while importing
        raise Refused(f"importing {module_name!r} failed: {type(exc).__name__}: {exc}") from None
    func: Any = module
    for part in attr.split("."):
        if not hasattr(func, part):
            raise Refused(f"{module_name!r} has no attribute {attr!r}")
        func = getattr(func, part)
    if not callable(func):
        raise Refused(f"{target!r} is not callable")
    return func, getattr(module, "__file__", None)


def takes_repeat(func: Any) -> bool:
    """Whether the function has a `repeat` parameter: it is then told which run of the case
    each call is (0, 1, ...), e.g. to seed a sampler reproducibly."""
    try:
        return "repeat" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def describe_signature(func: Any) -> list[dict[str, Any]] | None:
    """The function's parameters as the gate judges them (`gate.inputs.signature`): name,
    kind, whether it has a default, its annotation as written; None when Python cannot say."""
    try:
        parameters = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return None
    return [
        {
            "name": p.name,
            "kind": p.kind.name.lower(),
            "has_default": p.default is not p.empty,
            "annotation": None
            if p.annotation is p.empty
            else inspect.formatannotation(p.annotation),
        }
        for p in parameters
    ]


def run_command(argv: list[str], root: str, call: dict[str, Any]) -> Any:
    """One call of a `command` system: the input as JSON on stdin, its stdout back."""
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(call["input"]),
            capture_output=True,
            text=True,
            cwd=root,
            timeout=call["timeout"],
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise Refused(f"command timed out after {call['timeout']:g}s") from None
    except OSError as exc:
        raise Refused(f"command could not start: {exc.strerror}") from None
    if done.returncode != 0:
        tail = done.stderr.strip()[-STDERR_TAIL:]
        raise Refused(f"command exited with {done.returncode}: {tail}")
    return done.stdout


class Worker:
    def __init__(self, config: dict[str, Any], answers: Any) -> None:
        self.config = config
        self.answers = answers
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max(int(config["concurrency"]), 1), "gate-system")
        self.func: Any = None
        self.repeat = False

    def send(self, message: dict[str, Any]) -> None:
        try:
            line = json.dumps(message)
        except (TypeError, ValueError) as exc:
            error = f"returned a value JSON cannot hold: {exc}"
            line = json.dumps({"id": message.get("id"), "ok": False, "error": error})
        with self.lock:
            self.answers.write(line + "\n")
            self.answers.flush()

    def start(self) -> None:
        root = self.config["root"]
        if not os.access(root, os.R_OK | os.X_OK):
            raise Refused(
                f"the checkout {root} is not readable by uid {os.getuid()}, which the system "
                "runs as (the gate runs as root): make it readable by others (chmod o+rx), "
                "as a CI workspace is"
            )
        os.chdir(root)  # the checkout as the worker's view shows it
        file, signature = None, None
        if self.config["kind"] == "python":
            self.func, file = import_target(self.config["target"], root)
            self.repeat = takes_repeat(self.func)
            signature = describe_signature(self.func)
        ready = {"file": file, "takes_repeat": self.repeat, "signature": signature}
        self.send({"ready": True, **ready, "uid": os.getuid()})

    def answer(self, call: dict[str, Any]) -> None:
        try:
            if self.config["kind"] == "command":
                value = run_command(self.config["command"], self.config["root"], call)
            else:
                args = {"repeat": call["repeat"]} if self.repeat else {}
                value = self.func(dict(call["input"]), **args)
        except Refused as exc:
            self.send({"id": call["id"], "ok": False, "error": str(exc)})
        except BaseException as exc:
            self.send({"id": call["id"], "ok": False, "error": short_exception(exc)})
        else:
            self.send({"id": call["id"], "ok": True, "value": value})

    def serve(self, calls: Any) -> None:
        for line in calls:
            if line.strip():
                self.pool.submit(self.answer, json.loads(line))


def main() -> None:
    config = json.loads(sys.argv[1])
    answers = os.fdopen(int(config["answers_fd"]), "w", encoding="utf-8")
    calls = os.fdopen(int(config["calls_fd"]), encoding="utf-8")
    worker = Worker(config, answers)
    try:
        try:
            confine(config)
        except OSError as exc:
            why = f"cannot confine the system's process as uid {config['uid']}: {exc}"
            raise Refused(why) from None
        worker.start()
    except Refused as exc:
        worker.send({"ready": False, "error": str(exc)})
        return
    worker.serve(calls)
    worker.pool.shutdown(wait=False, cancel_futures=True)
    os._exit(0)  # calls still running (a hung function) must not keep the process


if __name__ == "__main__":
    main()
