"""Strict verdicts: comparisons, truth tests and plain data that candidate code cannot bend.

Runs inside the sandboxed child, after the candidate's code, from a private copy of this
module (see `gate.sandbox.zygote.private`): only builtins and the aliases below are used.

Trust rule: Python may compare two values only if every comparison method it could call
belongs to a class that existed before the candidate ran (in the zygote) and is still the
method that class had then, or is a C slot of a builtin type. Builtin containers are walked,
so a list holding an object with a rigged `__eq__` is refused too. Values of other trusted
types are compared by their own methods (see docs/sandbox.md, "Known limits").
"""

from __future__ import annotations

import operator
from collections import deque
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

PRIVATE_STATE = ("_STATE",)
_STATE: dict[str, Any] = {}  # "trusted": see set_trusted; "last": the last failed comparison

_mro_of = type.__dict__["__mro__"].__get__
_dict_of = type.__dict__["__dict__"].__get__
_qualname_of = type.__dict__["__qualname__"].__get__
_WRAPPER = type(int.__eq__)
_MISSING = object()
_list_iter = list.__iter__
_tuple_iter = tuple.__iter__
_set_iter = set.__iter__
_frozenset_iter = frozenset.__iter__
_dict_keys = dict.keys
_dict_values = dict.values
_dict_items = dict.items
_deque_iter = deque.__iter__
_getitem = operator.getitem
_contains = operator.contains
_str_exact = str.__str__

_SIMPLE = frozenset(map(id, (type(None), bool, int, float, complex, str, bytes)))
_ITERATORS: Mapping[int, Callable[[Any], Any]] = MappingProxyType(
    {
        id(list): _list_iter,
        id(tuple): _tuple_iter,
        id(set): _set_iter,
        id(frozenset): _frozenset_iter,
        id(deque): _deque_iter,
    }
)
_ORDER = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__")
_NAMES = MappingProxyType(
    {
        "==": ("__eq__",),
        "!=": ("__ne__", "__eq__"),
        "<": _ORDER,
        "<=": _ORDER,
        ">": _ORDER,
        ">=": _ORDER,
    }
)
_OPERATORS = MappingProxyType(
    {
        "==": operator.eq,
        "!=": operator.ne,
        "<": operator.lt,
        "<=": operator.le,
        ">": operator.gt,
        ">=": operator.ge,
    }
)
_CONTAINER_NAMES = ("__eq__", "__contains__", "__iter__", "__getitem__")
_TRUTH_NAMES = ("__bool__", "__len__")
_CLASSCHECK_NAMES = ("__instancecheck__", "__subclasscheck__")
WALK_LIMIT = 200_000
REPR_LIMIT = 120
PLAIN_DEPTH = 100
PLAIN_NODES = 100_000


def set_trusted(methods: dict[int, Any]) -> None:
    """Classes alive before the candidate (by id), with the comparison methods they had."""
    _STATE["trusted"] = methods
    _STATE["sdk"] = {}
    _STATE["last"] = None


def trust(methods: dict[int, Any]) -> None:
    """More trusted classes: the SDK's, as a job's prelude left them (in the job's child; kept
    apart, so that the zygote's table is not copied into every job)."""
    _STATE["sdk"] = methods


def _untrusted(cls: type, names: tuple[str, ...]) -> str | None:
    """Why running `names` of `cls` could run candidate code, or None when it cannot."""
    trusted, sdk = _STATE["trusted"], _STATE["sdk"]
    for name in names:
        for klass in _mro_of(cls):
            found = _dict_of(klass).get(name, _MISSING)
            if found is _MISSING:
                continue
            recorded = trusted.get(id(klass))
            if recorded is None:
                recorded = sdk.get(id(klass))
            if recorded is not None:
                if recorded.get(name, _MISSING) is found:
                    break
                return f"{_qualname_of(klass)}.{name} was replaced by the candidate's code"
            if type(found) is _WRAPPER or found is None:
                break
            return f"{_qualname_of(klass)}.{name} is defined by the candidate's code"
    return None


def _elements(item: Any, cls: type) -> Any:
    """The items Python's comparison of a builtin container visits; () for anything else."""
    for klass in _mro_of(cls):
        if id(klass) == id(dict):
            return (*_dict_keys(item), *_dict_values(item))
        iterate = _ITERATORS.get(id(klass))
        if iterate is not None:
            return iterate(item)
    return ()


def _walk(value: Any, names: tuple[str, ...], what: str) -> None:
    """Raise TypeError if handling `value` with `names` could run candidate-defined code."""
    pending = [value]
    seen: set[int] = set()
    budget = WALK_LIMIT
    while pending:
        item = pending.pop()
        cls = type(item)
        if id(cls) in _SIMPLE or id(item) in seen:
            continue
        seen.add(id(item))
        budget -= 1
        if budget < 0:
            raise TypeError(f"sandbox refused {what}: the value is too large to check")
        reason = _untrusted(cls, names)
        if reason is not None:
            raise TypeError(f"sandbox refused {what} on a {_qualname_of(cls)}: {reason}")
        pending.extend(_elements(item, cls))


def truth(value: Any) -> bool:
    if value is True or value is False:
        return value is True
    cls = type(value)
    if id(cls) not in _SIMPLE:
        reason = _untrusted(cls, _TRUTH_NAMES)
        if reason is not None:
            raise TypeError(f"sandbox refused the truth value of a {_qualname_of(cls)}: {reason}")
    return bool(value)


def compare(op: str, left: Any, right: Any) -> bool:
    if op == "is":
        return left is right
    if op == "is not":
        return left is not right
    if op == "in" or op == "not in":
        found = contains(right, left)
        outcome = found if op == "in" else not found
    else:
        _walk(left, _NAMES[op], op)
        _walk(right, _NAMES[op], op)
        outcome = truth(_OPERATORS[op](left, right))
    if not outcome:
        _STATE["last"] = (op, left, right)
    return outcome


def contains(container: Any, item: Any) -> bool:
    _walk(item, _NAMES["=="], "in")
    _walk(container, _CONTAINER_NAMES, "in")
    return truth(_contains(container, item))


def chain(first: Any, pairs: tuple[tuple[str, Any], ...]) -> bool:
    """`a < b < c`: each right side evaluated once and only if needed, like Python does."""
    left = first
    for op, thunk in pairs:
        right = thunk()
        if not compare(op, left, right):
            return False
        left = right
    return True


def boolop(kind: str, thunks: tuple[Any, ...]) -> Any:
    value = None
    for thunk in thunks:
        value = thunk()
        if truth(value) is (kind == "or"):
            return value
    return value


def strict_all(iterable: Any) -> bool:
    return all(truth(item) for item in iterable)


def strict_any(iterable: Any) -> bool:
    return any(truth(item) for item in iterable)


def strict_isinstance(value: Any, classinfo: Any) -> bool:
    """`isinstance` by the real type: a candidate object cannot fake `__class__`."""
    for cls in classinfo if type(classinfo) is tuple else (classinfo,):
        reason = _untrusted(type(cls), _CLASSCHECK_NAMES)
        if reason is not None:
            raise TypeError(f"sandbox refused isinstance: {reason}")
    return issubclass(type(value), classinfo)


def getitem(container: Any, key: Any) -> Any:
    """Dict lookups compare keys: the candidate's keys must not rig that comparison."""
    for klass in _mro_of(type(container)):
        if id(klass) == id(dict):
            _walk(key, _NAMES["=="], "a dict lookup")
            _walk((*_dict_keys(container),), _NAMES["=="], "a dict lookup")
            break
    return _getitem(container, key)


def begin() -> None:
    _STATE["last"] = None


def safe_repr(value: Any, limit: int = REPR_LIMIT) -> str:
    try:
        text = _str_exact(repr(value))
    except BaseException:
        return "<unrepresentable>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fail(source: str, message: Any) -> AssertionError:
    """The AssertionError of a failed `assert`, with the values of the failed comparison."""
    text = f"assert {source}"
    if message is not None:
        text += f": {safe_repr(message) if type(message) is not str else message}"
    last = _STATE["last"]
    _STATE["last"] = None
    if last is not None:
        _, left, right = last
        text += f" (left: {safe_repr(left)}, right: {safe_repr(right)})"
    return AssertionError(text)


HELPERS = MappingProxyType(
    {
        "__gate_cmp": compare,
        "__gate_chain": chain,
        "__gate_truth": truth,
        "__gate_boolop": boolop,
        "__gate_all": strict_all,
        "__gate_any": strict_any,
        "__gate_isinstance": strict_isinstance,
        "__gate_getitem": getitem,
        "__gate_begin": begin,
        "__gate_fail": fail,
    }
)


def helpers() -> dict[str, Any]:
    """The names the rewritten test code calls (resolved in the private copy of this module)."""
    return {name: globals()[func.__name__] for name, func in HELPERS.items()}


def _plain(value: Any, depth: int, budget: list[int]) -> Any:
    cls = type(value)
    if id(cls) in _SIMPLE:
        return value
    budget[0] -= 1
    if depth > PLAIN_DEPTH or budget[0] < 0:
        return _MISSING
    if cls is list or cls is tuple or cls is set or cls is frozenset:
        items = [_plain(item, depth + 1, budget) for item in _ITERATORS[id(cls)](value)]
        if any(item is _MISSING for item in items):
            return _MISSING
        return items if cls is list else cls(items)
    if cls is dict:
        pairs = [
            (_plain(k, depth + 1, budget), _plain(v, depth + 1, budget))
            for k, v in _dict_items(value)
        ]
        if any(k is _MISSING or v is _MISSING for k, v in pairs):
            return _MISSING
        return dict(pairs)
    return _MISSING


def plain(value: Any) -> tuple[bool, Any]:
    """(True, a fresh copy made of exact builtin types) or (False, why it is not plain data)."""
    try:
        copy = _plain(value, 0, [PLAIN_NODES])
    except RecursionError:
        copy = _MISSING
    if copy is _MISSING:
        return False, f"{_qualname_of(type(value))} is not plain data: {safe_repr(value)}"
    return True, copy
