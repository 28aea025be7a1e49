"""Detect candidate code that monkeypatched what the tests rely on.

Before any candidate runs, the sandbox records which objects these names point to: the
builtins, recorded once by the zygote (before any code of the side's ran); the functions and
classes of every module the test code imports, and everything in the modules and classes of
`sandbox.pythonpath` (the team's SDK) as the prelude left them, recorded by the job's child
(the installation's modules before the side's code runs, so that the SDK cannot patch them
unseen). After all calls and tests the
child checks that nothing was replaced or deleted: results obtained against a patched SDK,
patched builtins or a patched module fail. Comparison methods of classes are checked where
they are used, by `gate.sandbox.zygote.safe_compare`, against `comparison_methods`.

`record*` run before the candidate; `record_sdk` and `changed` run after the side's code, from
a private copy of this module (see `gate.sandbox.zygote.private`).
"""

from __future__ import annotations

import builtins
import operator
import sys
from itertools import repeat
from types import BuiltinFunctionType, FunctionType, MappingProxyType, MethodType, ModuleType
from typing import Any

# (label, live mapping, watched keys, their objects, keys at snapshot time, all additions count)
Entry = tuple[str, Any, tuple[Any, ...], tuple[Any, ...], frozenset[str] | None, bool]

_is_not = operator.is_not
_is_same = operator.is_
# The interpreter's own dict, even if side code rebinds `sys.modules` (a bound method, not the
# dict: a private copy of this module may share no container, see `private`).
_modules_get: Any = sys.modules.get
_repeat = repeat
_dict_of = type.__dict__["__dict__"].__get__
_qualname_of = type.__dict__["__qualname__"].__get__
_flags_of = type.__dict__["__flags__"].__get__
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE
_SHARED = (FunctionType, BuiltinFunctionType, MethodType, ModuleType, type)
WATCHED_METHODS = frozenset(
    {
        "__eq__",
        "__ne__",
        "__lt__",
        "__le__",
        "__gt__",
        "__ge__",
        "__hash__",
        "__bool__",
        "__len__",
        "__contains__",
        "__iter__",
        "__getitem__",
        "__instancecheck__",
        "__subclasscheck__",
    }
)
_MISSING = object()


def all_classes() -> list[type]:
    """Every class alive in the interpreter (walks `__subclasses__` from `object`)."""
    seen: dict[int, type] = {}
    pending: list[type] = [object]
    while pending:
        cls = pending.pop()
        if id(cls) in seen:
            continue
        seen[id(cls)] = cls
        pending.extend(type.__subclasses__(cls))
    return list(seen.values())


def _entry(
    label: str,
    mapping: Any,
    keys: list[str],
    *,
    cls: bool = False,
    sdk: bool = False,
    detach: bool = False,
) -> Entry:
    original = frozenset(mapping) if cls else None
    values = tuple(mapping[k] for k in keys)
    watched = tuple(map(_detached, keys)) if detach else tuple(keys)
    return (label, mapping, watched, values, original, sdk)


def _detached(key: Any) -> Any:
    """An equal copy of a name, its hash already computed: looking it up in a job's child
    reads the zygote's original key without changing its reference count (a write would copy
    its page in every job)."""
    if type(key) is str and len(key) > 1:
        key = (key + " ")[:-1]
        hash(key)
    return key


def _is_sdk(module: ModuleType, sdk_roots: tuple[str, ...]) -> bool:
    path = vars(module).get("__file__") or ""
    return bool(sdk_roots) and type(path) is str and path.startswith(sdk_roots)


def record_builtins() -> tuple[Entry, ...]:
    """In the zygote, before any code of the side's: the builtins."""
    return (_entry("builtins", vars(builtins), list(vars(builtins)), detach=True),)


def record_sdk(sdk_roots: list[str], names: list[str]) -> tuple[tuple[Entry, ...], list[type]]:
    """In the child, once the side's prelude ran: everything in the SDK's modules among
    `names` (those it imported) and in the classes they hold, nested ones too (the SDK as
    its own code left it); and those classes. Only the SDK's objects are walked: touching the
    zygote's would copy their pages into every job."""
    roots = tuple(r.rstrip("/") + "/" for r in sdk_roots)
    entries: list[Entry] = []
    classes: list[type] = []
    modules = _modules_get.__self__
    for name in names:
        module = modules.get(name)
        if not isinstance(module, ModuleType) or not _is_sdk(module, roots):
            continue
        entries.append(_entry(name, vars(module), list(vars(module))))
        entries.append(_entry("sys.modules", modules, [name]))
        pending = [v for v in vars(module).values() if isinstance(v, type)]
        while pending:
            cls = pending.pop()
            namespace = _dict_of(cls)
            defined_in = namespace.get("__module__")
            if type(defined_in) is not str or defined_in != name:
                continue
            if _flags_of(cls) & _IMMUTABLE_TYPE:
                continue
            if any(map(_is_same, classes, _repeat(cls))):
                continue
            label = f"{name}.{_qualname_of(cls)}"
            entries.append(_entry(label, namespace, list(namespace), cls=True, sdk=True))
            classes.append(cls)
            pending += [v for v in namespace.values() if isinstance(v, type)]
    return tuple(entries), classes


def record_modules(names: list[str]) -> tuple[Entry, ...]:
    """In the child, before the candidate: the functions and classes of modules tests import."""
    entries: list[Entry] = []
    for name in names:
        module = _modules_get(name)
        if not isinstance(module, ModuleType):
            continue
        namespace = vars(module)
        keys = [k for k, v in namespace.items() if isinstance(v, _SHARED)]
        entries.append(_entry(name, namespace, keys))
        entries.append(_entry("sys.modules", _modules_get.__self__, [name]))
    return tuple(entries)


def comparison_methods(classes: list[type]) -> dict[int, Any]:
    """Per class (by id): the comparison and truth methods it defined before the candidate ran.

    The strict helpers check these when they trust a class, so replacing, say,
    `Fraction.__eq__` makes comparisons of fractions refused rather than rigged.
    """
    table: dict[int, Any] = {}
    for cls in classes:
        namespace = _dict_of(cls)
        table[id(cls)] = MappingProxyType(
            {k: namespace[k] for k in namespace if k in WATCHED_METHODS}
        )
    return table


def changed(entries: tuple[Entry, ...]) -> str | None:
    """The first replaced, deleted or rigged entry, as `what`, or None if all are intact."""
    for label, mapping, keys, values, original, sdk in entries:
        current = map(mapping.get, keys, _repeat(_MISSING))
        if any(map(_is_not, current, values)):
            for key, value in zip(keys, values, strict=True):
                if mapping.get(key, _MISSING) is not value:
                    return f"sys.modules[{key!r}]" if label == "sys.modules" else f"{label}.{key}"
        if original is not None and len(mapping) != len(original):
            for key in tuple(mapping):
                if key not in original and (sdk or key in WATCHED_METHODS):
                    return f"{label}.{key}"
    return None
