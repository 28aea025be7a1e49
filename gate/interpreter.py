"""How the gate starts a Python of its own: isolated from the job's Python environment.

The checkout is the PR's, and a job may put it on the import path (`PYTHONPATH: src` in a
`src/` layout). A Python started in the normal mode then imports the PR's `sitecustomize.py`
or `usercustomize.py`, or its module of a name the gate imports (`yaml.py`, `gate/`), before
or instead of the gate's: the PR's code would run as the gate (as root in the container, the
job token in reach) and could forge its verdict. So every Python the gate starts runs in
isolated mode (`-I`: no `PYTHON*` variables, no user site, neither the script's folder nor the
working directory on the import path): it imports the installation's modules only (its
site-packages and their `.pth` files, never one of the checkout's). The variables stay in the
environment the process hands on: a system that needs `PYTHONPATH` gets it in its own process,
after that process confined itself (`gate.systems.worker_main`). What the gate's own output
depends on (unbuffered, no bytecode, warnings, `-X` options) is passed on as flags.

This module is the first the `gate` command imports, before it starts itself again isolated:
it imports nothing that start does not need (no `pathlib`, no `typing`).

`gate` itself may be started by Python in the normal mode (the `gate` script, `python -m
gate`): a `sitecustomize` on `PYTHONPATH` has then run before any of the gate's code, and
nothing the gate does afterwards can undo what it did. `isolate()`, the entry's first act,
starts the gate again isolated in the same process (`exec`), so that none of what the first
start loaded serves the gate; only a start in isolated mode (`python -I -m gate`, what the
Action's image runs) runs none of it at all (docs/security.md).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Runs `gate` as `python -m gate` would, with the folder the running gate was imported from
# appended to the import path: a gate found only through PYTHONPATH (a source checkout) still
# starts, and an installed one is still found first.
_BOOTSTRAP = (
    "import runpy, sys; sys.path.append({folder!r}); "
    "runpy.run_module('gate', run_name='__main__', alter_sys=True)"
)


def python_command(*args: str, environ: Mapping[str, str] | None = None) -> list[str]:
    """The command line of a Python the gate starts: this interpreter in isolated mode, the
    flags its own output needs, then `args` (`-m gate run ...`, a script and its arguments).
    `environ` is the environment the process gets: its `PYTHONUNBUFFERED` and
    `PYTHONDONTWRITEBYTECODE`, which isolated mode ignores, become `-u` and `-B`."""
    env = os.environ if environ is None else environ
    return [sys.executable, "-I", *_flags(env), *args]


def _flags(env: Mapping[str, str]) -> list[str]:
    unbuffered = env.get("PYTHONUNBUFFERED") or getattr(sys.__stdout__, "write_through", False)
    flags = ["-u"] if unbuffered else []
    if env.get("PYTHONDONTWRITEBYTECODE") or sys.flags.dont_write_bytecode:
        flags.append("-B")
    if sys.flags.optimize:
        flags.append("-" + "O" * sys.flags.optimize)
    flags += [f"-W{option}" for option in sys.warnoptions]
    flags += [f"-X{k}" if v is True else f"-X{k}={v}" for k, v in sys._xoptions.items()]
    return flags


def isolate() -> None:
    """Start this `gate` again in isolated mode, in place (`exec`), unless it already runs so
    (or the platform cannot replace a process)."""
    if sys.flags.isolated or os.name != "posix" or not sys.executable:
        return
    folder = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    argv = python_command("-c", _BOOTSTRAP.format(folder=folder), *sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, argv)


def skip_plugin_scan() -> None:
    """pydantic looks for plugins in every installed distribution's entry points (5-35 ms)
    the first time it builds a model's validator. This process builds only the gate's own
    models (a team's code runs in processes of their own: a `python` system's worker, the
    sandbox), and they take no plugin: record that there are none, so no scan happens, not
    even for the models of a module imported late. The processes the gate starts look for
    theirs as usual (an environment variable would reach them)."""
    try:
        from pydantic.plugin import _loader
    except ImportError:  # a pydantic that keeps its plugins elsewhere scans as it always did
        return
    if getattr(_loader, "_plugins", False) is None:
        _loader._plugins = {}
