"""The zygote: a warm, single-threaded Python process; one forked child per job.

Started by `gate.sandbox.host.zygote_process` with a clean environment, it isolates its
network once, imports what candidates commonly use (and every builtin module), runs the
prelude, locks the interpreter down, takes the tamper snapshot, finds out which protections
this machine allows, enters its read-only filesystem view, and forks its fork server (which
forks the jobs). Then it serves jobs from stdin and answers on stdout; its event loop
(`supervisor`) watches every running job: pipes, exit and deadline. A fork costs a
millisecond or two where a fresh interpreter costs tens, and every job still gets its own
process, namespaces and uid. It imports only the standard library, so it starts in a
fraction of a second.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import importlib
import os
import sys
import traceback
from typing import Any

from gate.sandbox.protocol import framing
from gate.sandbox.protocol.boot import MAX_WORKERS, UID_BLOCKS, ZygoteSetup
from gate.sandbox.zygote import fsview, guard, harness, isolate, job, private, safe_compare, tamper
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
PRIVATE_MODULES = (harness, safe_compare, tamper, guard)


def _preload() -> None:
    for name in (*PRELOAD, *sys.builtin_module_names):
        with contextlib.suppress(Exception):  # an optional module missing here is fine
            importlib.import_module(name)


def _run_prelude(settings: ZygoteSetup) -> tuple[dict[str, Any], str | None]:
    template: dict[str, Any] = {}
    if not settings.prelude.strip():
        return template, None
    try:
        exec(compile(settings.prelude, "<prelude>", "exec"), template)
    except BaseException as exc:
        last = traceback.extract_tb(exc.__traceback__)[-1:]
        where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
        return template, f"{type(exc).__name__}: {exc}{where}"
    return template, None


def boot(settings: ZygoteSetup) -> tuple[job.Machine, dict[str, Any]]:
    """Everything before the first job; returns the machine and the hello message."""
    block = (os.getpid() % UID_BLOCKS) * MAX_WORKERS
    settings = dataclasses.replace(settings, uid_base=settings.uid_base + block)
    root = os.geteuid() == 0
    user_ns, network = isolate.isolate_network()
    for folder in reversed(settings.import_paths):
        sys.path.insert(0, folder)
    _preload()
    template, prelude_error = _run_prelude(settings)
    guard.lock_down()
    worlds = private.privatize(list(PRIVATE_MODULES))
    classes = tuple(tamper.all_classes())
    snapshot = tamper.record(settings.import_paths)
    methods = tamper.comparison_methods(list(classes))
    info = {
        "memory_mb": settings.memory_mb,
        "path_labels": settings.path_labels,
        "protected": guard.protected_objects(),
        "code_roots": [p.rstrip("/") + "/" for p in fsview.python_paths() + settings.import_paths],
    }
    worlds[harness.__name__]["prepare"](template, snapshot, methods, info)
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
        "prelude_error": prelude_error,
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
