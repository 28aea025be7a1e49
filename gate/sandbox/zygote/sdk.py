"""The side's own code in a job's child: its `sandbox.pythonpath` and `sandbox.prelude`.

Both come from the checkout the run measures (the pull request's, on the head side), so they
run where candidate code runs: in the job's child, under the audit hook, with the job's uid
and filesystem view, once the harness's private copies exist and the builtins and the
installation's modules the tests import were recorded. The zygote never runs them: code run
there before the lock-down could rewrite how the zygote reads the evidence, and code imported
unguarded could read the harness's frames. The folders are searched after the installation's
own (appended to `sys.path`), so they cannot replace a module of the standard library or of an
installed package that the harness, the tests or the candidate import.

What the prelude leaves is the SDK's baseline (`tamper.record_sdk`: changing it afterwards
fails the passes), its classes' comparison methods are trusted (`safe_compare.trust`) and its
functions protected as the zygote's are. This module runs from a private copy (see
`gate.sandbox.zygote.private`).
"""

from __future__ import annotations

import builtins
import os
import sys
from collections.abc import Callable
from itertools import islice
from types import FunctionType, ModuleType
from typing import Any

from gate.sandbox.zygote.job import SETUP_FAILED
from gate.sandbox.zygote.safe_compare import trust
from gate.sandbox.zygote.tamper import comparison_methods, record_sdk

_BUILTINS = builtins  # the candidate's builtins: the module, never the harness's private copy
_extend_path = sys.path.extend
_write = os.write
_exit = os._exit
_SHARED = (FunctionType, ModuleType)
_modules_get: Any = sys.modules.get  # a bound method: a private copy shares no container


def _count_modules() -> int:
    return len(_modules_get.__self__)


def _since(count: int) -> list[str]:
    """The names of the modules imported after `count` were there: read from the end of
    `sys.modules` (insertion order), so that the zygote's modules are not even touched (a
    reference-count change would copy their page into the child)."""
    modules = _modules_get.__self__
    return list(islice(reversed(modules), max(len(modules) - count, 0)))


Run = Callable[[Any, dict[str, Any]], tuple[bool, str]]


def load(
    prelude: tuple[Any, str] | None, paths: tuple[str, ...], run: Run, *, record: bool = True
) -> tuple[dict[str, Any], tuple[Any, ...], list[int]]:
    """The namespace the candidate starts from (the prelude's names), what to watch in the
    SDK and the ids of its functions and modules. A prelude that fails ends the job as a
    setup failure: the case is an error, never a fail."""
    namespace: dict[str, Any] = {"__builtins__": _BUILTINS}
    before = _count_modules()
    if paths:
        _extend_path(paths)
    if prelude is not None:
        code, error = prelude
        ok, error = run(code, namespace) if code is not None else (False, error)
        if not ok:
            _write(2, f"sandbox.prelude failed: {error}\n".encode("utf-8", "replace"))
            _exit(SETUP_FAILED)
    if not (paths and record):
        return namespace, (), []
    entries, classes = record_sdk(list(paths), _since(before))
    trust(comparison_methods(classes))
    ids = [id(value) for entry in entries for value in entry[3] if type(value) in _SHARED]
    return namespace, entries, ids
