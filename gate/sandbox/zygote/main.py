"""The zygote: a warm, single-threaded Python process; one forked child per job.

Started by `gate.sandbox.host.zygote_process` with a clean environment, it isolates its
network once, imports what candidates commonly use (and every builtin module), locks the
interpreter down, takes the tamper snapshot of the builtins, finds out which protections
this machine allows, enters its read-only filesystem view, and forks its fork server (which
forks the jobs). Then it serves jobs from stdin and answers on stdout; its event loop
(`supervisor`) watches every running job: pipes, exit and deadline. A fork costs a
millisecond or two where a fresh interpreter costs tens, and every job still gets its own
process, namespaces and uid. It imports only the standard library, so it starts in a
fraction of a second, and it never runs code of the checkout: the side's `sandbox.pythonpath`
and prelude run in each job (`gate.sandbox.zygote.sdk`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib
import os
import sys
from typing import Any

from gate.sandbox.protocol import framing
from gate.sandbox.protocol.boot import MAX_WORKERS, UID_BLOCKS, ZygoteSetup
from gate.sandbox.zygote import (
    fsview,
    guard,
    harness,
    isolate,
    job,
    private,
    safe_compare,
    sdk,
    tamper,
)
from gate.sandbox.zygote.fsview import plan_view
from gate.sandbox.zygote.supervisor import Supervisor

# What generated code imports most (HumanEval: typing, math, re, hashlib, collections, ...).
# Every megabyte here is copied into each job's page tables, so the list stays short.
PRELOAD = (
    "bisect",
    "collections",
    "copy",
    "dataclasses",
    "datetime",
    "decimal",
    "enum",
    "fractions",
    "functools",
    "hashlib",
    "heapq",
    "itertools",
    "json",
    "math",
    "operator",
    "random",
    "re",
    "statistics",
    "string",
    "typing",
)
PRIVATE_MODULES = (harness, safe_compare, tamper, guard, sdk)


def _preload() -> None:
    for name in (*PRELOAD, *sys.builtin_module_names):
        with contextlib.suppress(Exception):  # an optional module missing here is fine
            importlib.import_module(name)


def boot(settings: ZygoteSetup) -> tuple[job.Machine, dict[str, Any]]:
    """Everything before the first job; returns the machine and the hello message."""
    block = (os.getpid() % UID_BLOCKS) * MAX_WORKERS
    settings = dataclasses.replace(settings, uid_base=settings.uid_base + block)
    root = os.geteuid() == 0
    user_ns, network = isolate.isolate_network()
    _preload()  # nothing of the side's: its folders and prelude are each job's (see `sdk`)
    guard.lock_down()
    worlds = private.privatize(list(PRIVATE_MODULES))
    classes = tuple(tamper.all_classes())
    snapshot = tamper.record_builtins()
    methods = tamper.comparison_methods(list(classes))
    info = {
        "memory_mb": settings.memory_mb,
        "path_labels": settings.path_labels,
        "protected": guard.protected_objects(),
        "code_roots": [p.rstrip("/") + "/" for p in fsview.python_paths() + settings.import_paths],
        "prelude": settings.prelude,
        "import_paths": settings.import_paths,
    }
    worlds[harness.__name__]["prepare"](snapshot, methods, info)
    plan = plan_view(settings.import_paths)
    own = os.open("/proc/self/ns/pid", os.O_RDONLY) if root or user_ns else None
    baseline = isolate.address_space()
    mode = isolate.detect_mode(settings, root, user_ns, network, own)
    if mode.mount_ns:
        problem = isolate.enter_view(settings, plan)
        if problem:
            mode = dataclasses.replace(mode, mount_ns=False, view_problem=problem)
    isolate.scrub_environment(fsview.WORK if mode.mount_ns else "/")
    run = worlds[harness.__name__]["run"]
    gc.collect()
    gc.freeze()  # jobs then never make the collector touch (and copy) the zygote's pages
    own = own if mode.pid_via == "setns" else None
    machine = job.Machine(settings, mode, run, baseline, own, classes)
    hello = {
        "type": "hello",
        "pid": os.getpid(),
        "mode": mode.to_dict(),
    }
    return machine, hello


def main() -> None:
    stdin = os.fdopen(0, "rb", buffering=0, closefd=False)
    first = framing.read_stream(stdin)
    if first is None:
        return
    try:
        machine, hello = boot(ZygoteSetup.from_dict(first))
    except BaseException as exc:
        framing.write_fd(1, {"type": "fatal", "error": f"{type(exc).__name__}: {exc}"})
        raise
    framing.write_fd(1, hello)
    supervisor = Supervisor(machine)
    try:
        supervisor.serve()
    finally:
        supervisor.shutdown()
