"""Keep candidate code away from the harness's frames, memory and hooks.

Two layers, both set up before any candidate code runs:

- `lock_down` (in the zygote): refuse installing Python signal handlers (a handler receives
  the interrupted frame), re-creating builtin modules such as `_signal` or `gc` (a fresh
  instance would not be locked down) and turning on `gc` debugging (which would hand out
  collected frames). The refusals hold no reference to the functions they replace.
- `install` (in each job's child): a `sys.addaudithook` hook, which cannot be removed. It
  blocks frame introspection (`sys._getframe`, `sys._current_frames`, traceback/generator/
  coroutine frames), object-graph walks (`gc.get_objects`/`get_referrers`/`get_referents`),
  every `ctypes` operation, tracing and profiling hooks, further audit hooks, swapping any
  function's `__code__`, changing the `__defaults__` or `__class__` of functions and modules
  that existed before the candidate, hand-made code objects (`CodeType`, `marshal`, `.pyc`
  files from writable places), and imports of `cffi` and the interpreter's test extensions.
  The harness opens a trusted window, for its own thread only, while it reads tracebacks.

`install` and its hook run from a private copy of this module (see `gate.sandbox.zygote.private`).
"""

from __future__ import annotations

import _imp
import _thread
import gc
import signal
import sys
from importlib import _bootstrap_external
from types import FunctionType, ModuleType
from typing import Any

_addaudithook = sys.addaudithook
_get_ident = _thread.get_ident
_getframe = sys._getframe
# The one caller allowed to unmarshal code: the import system loading a trusted .pyc file.
_COMPILE_BYTECODE = _bootstrap_external._compile_bytecode.__code__  # type: ignore[attr-defined]

DENIED_EVENTS = frozenset(
    {
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        "sys.addaudithook",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
        "setopencode",
        "cpython.remote_debugger_script",
        "code.__new__",
        "marshal.load",
    }
)
FRAME_ATTRIBUTES = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame", "f_back"})
DENIED_IMPORTS = frozenset(
    {
        "_testcapi",
        "_testinternalcapi",
        "_testbuffer",
        "_testmultiphase",
        "_testsinglephase",
        "_testclinic",
        "_xxsubinterpreters",
        "_xxinterpchannels",
        "_xxtestfuzz",
        "_ctypes_test",
        "_cffi_backend",
        "cffi",
    }
)
DENIED_PREFIXES = ("ctypes.", "sys.monitoring.")
SETATTR_EVENTS = frozenset({"object.__setattr__", "object.__delattr__"})


def refuse_signal_handler(signalnum: Any, handler: Any) -> Any:
    # ValueError is what `signal.signal` raises off the main thread; asyncio tolerates it.
    raise ValueError("sandbox: installing signal handlers is disabled")


def refuse_builtin_module(spec: Any) -> Any:
    raise ImportError("sandbox: builtin modules cannot be re-created")


def refuse_gc_debug(flags: int) -> None:
    raise PermissionError("sandbox: gc debugging is disabled")


def lock_down() -> None:
    """Run in the zygote once every builtin module is imported (so none needs creating)."""
    signal.signal = refuse_signal_handler  # type: ignore[assignment]
    sys.modules["_signal"].signal = refuse_signal_handler  # type: ignore[attr-defined]
    _imp.create_builtin = refuse_builtin_module
    gc.set_debug = refuse_gc_debug  # type: ignore[assignment]


def protected_objects() -> frozenset[int]:
    """Ids of the functions and modules that exist before any candidate runs (in the zygote).

    Their `__code__`, `__defaults__` or `__class__` cannot be swapped by candidate code, while
    functions made at run time (say, by `collections.namedtuple`) keep working as usual."""
    kinds = (FunctionType, ModuleType)
    return frozenset(id(o) for o in gc.get_objects() if isinstance(o, kinds))


def install(
    main_thread: int, protected: frozenset[int], roots: tuple[str, ...], more: set[int]
) -> list[bool]:
    """Install the hook; returns its switch `[active, trusted_window]`, kept by the harness.
    `more` are protected too: the SDK's functions and modules, added once the job's prelude
    ran (see `gate.sandbox.zygote.sdk`).

    `roots` are the folders trusted for compiled code (`.pyc`): hand-made bytecode is not
    verified by CPython and could read the harness's memory, so code objects are only ever
    made by the compiler or loaded by the import system from these folders."""
    switch = [False, False]
    inside = [0]  # the thread that is inside the hook, looking at a frame

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if not switch[0] or (switch[1] and _get_ident() == main_thread):
            return
        if inside[0] == _get_ident():
            return
        if event in SETATTR_EVENTS:
            if args[1] == "__code__" or id(args[0]) in protected or id(args[0]) in more:
                raise PermissionError(f"sandbox: changing {args[1]} of this object is disabled")
        elif event == "object.__getattr__":
            if args[1] in FRAME_ATTRIBUTES:
                raise AttributeError(f"sandbox: {args[1]} is not accessible")
        elif event == "sys._getframe":
            # ValueError is what libraries expect when no frame is available (typing, enum).
            raise ValueError("sandbox: sys._getframe is disabled")
        elif event == "marshal.loads":
            inside[0] = _get_ident()
            try:
                caller = _getframe(1).f_code
            finally:
                inside[0] = 0
            if caller is not _COMPILE_BYTECODE:
                raise PermissionError("sandbox: marshal.loads is disabled")
        elif event == "open":
            _check_compiled_file(args[0], roots)
        elif event in DENIED_EVENTS or event.startswith(DENIED_PREFIXES):
            raise PermissionError(f"sandbox: {event} is disabled")
        elif event == "import" and args[0] in DENIED_IMPORTS:
            raise ImportError(f"sandbox: importing {args[0]} is disabled")

    _addaudithook(hook)
    return switch


def _check_compiled_file(path: Any, roots: tuple[str, ...]) -> None:
    if type(path) is bytes:
        path = path.decode(errors="replace")
    if type(path) is str and path.endswith((".pyc", ".pyo")) and not path.startswith(roots):
        raise PermissionError("sandbox: compiled code from outside the Python installation")
