"""`python` kind: `module:function` imported from the side's checkout (`--root`).

One process can hold only one module of a given name, so the PR flow runs each side in its own
process; within a process, a module of the same name loaded from another root is dropped first.
"""

from __future__ import annotations

import importlib
import inspect
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any

from gate.errors import InputError, SystemCallError
from gate.inputs.config import PythonSystem
from gate.inputs.paths import relative_posix
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest

_IMPORT_LOCK = threading.Lock()


def _loaded_from(module: Any, root: Path) -> bool:
    origin = getattr(module, "__file__", None)
    if origin is None:
        return False
    return relative_posix(Path(origin), root) is not None


def _forget(top: str) -> None:
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def import_target(target: str, root: Path) -> tuple[Any, Path | None]:
    """Import `module:function` with `root` first on sys.path; return it and its file."""
    module_name, _, attr = target.partition(":")
    root = root.resolve()
    top = module_name.split(".")[0]
    with _IMPORT_LOCK:
        existing = sys.modules.get(top)
        if existing is not None and not _loaded_from(existing, root):
            if getattr(existing, "__file__", None) is None and top in sys.builtin_module_names:
                raise InputError(f"`{top}` is a built-in module", key="system.target")
            _forget(top)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        importlib.invalidate_caches()
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and module_name.startswith(exc.name):
                raise InputError(
                    f"module {module_name!r} not found in {root}", key="system.target"
                ) from None
            raise InputError(
                f"importing {module_name!r} failed: {exc}", key="system.target"
            ) from None
        except Exception as exc:  # the user's module failed while importing
            raise InputError(
                f"importing {module_name!r} failed: {type(exc).__name__}: {exc}",
                key="system.target",
            ) from None
    func: Any = module
    for part in attr.split("."):
        if not hasattr(func, part):
            raise InputError(f"{module_name!r} has no attribute {attr!r}", key="system.target")
        func = getattr(func, part)
    if not callable(func):
        raise InputError(f"{target!r} is not callable", key="system.target")
    origin = getattr(module, "__file__", None)
    return func, Path(origin) if origin else None


def _takes_repeat(func: Any) -> bool:
    """Whether the function has a `repeat` parameter: it is then told which run of the case
    each call is (0, 1, ...), e.g. to seed a sampler reproducibly."""
    try:
        return "repeat" in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


class PythonFunctionSystem:
    kind = "python"

    def __init__(self, config: PythonSystem, env: SystemEnv) -> None:
        self.config = config
        self._func, self._file = import_target(config.target, env.root)
        self._takes_repeat = _takes_repeat(self._func)
        # Calls run on a pool so that a hung function costs a timeout, not the run.
        self._pool = ThreadPoolExecutor(
            max_workers=max(env.concurrency, 1), thread_name_prefix="gate-python"
        )

    def call(self, request: SystemRequest) -> SystemOutput:
        args = {"repeat": request.repeat} if self._takes_repeat else {}
        future = self._pool.submit(self._func, dict(request.input), **args)
        try:
            value = future.result(timeout=request.timeout_s)
        except FutureTimeout:
            raise SystemCallError(
                f"{self.config.target} timed out after {request.timeout_s:g}s"
            ) from None
        return SystemOutput.from_value(value, where=self.config.target)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.config.target}

    def files(self) -> list[Path]:
        return [self._file] if self._file else []

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)
