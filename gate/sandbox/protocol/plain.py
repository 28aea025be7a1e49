"""Plain data in JSON without losing Python's distinctions (tuple vs list, int dict keys, NaN).

The zygote encodes the values hidden-test calls returned; the parent decodes and compares them
with `eq`. A JSON object in the encoding is always a tag, so nothing is ambiguous.
"""

from __future__ import annotations

import base64
import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

BIG_INT_BITS = 4000  # str(int) is limited to 4300 digits; bigger ones travel as hex


def encode(value: Any) -> Any:
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return {"int": hex(value)} if value.bit_length() > BIG_INT_BITS else value
    if kind is float:
        return value if math.isfinite(value) else {"float": repr(value)}
    if kind is list:
        return [encode(item) for item in value]
    if kind is tuple or kind is set or kind is frozenset:
        return {kind.__name__: [encode(item) for item in value]}
    if kind is dict:
        return {"dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if kind is bytes:
        return {"bytes": base64.b64encode(value).decode()}
    if kind is complex:
        return {"complex": [encode(value.real), encode(value.imag)]}
    raise TypeError(f"not plain data: {kind.__name__}")


_TAGS: dict[str, Callable[[Any], Any]] = {
    "int": lambda v: int(v, 16),
    "float": float,
    "tuple": lambda v: tuple(decode(i) for i in v),
    "set": lambda v: {decode(i) for i in v},
    "frozenset": lambda v: frozenset(decode(i) for i in v),
    "dict": lambda v: {decode(k): decode(x) for k, x in v},
    "bytes": base64.b64decode,
    "complex": lambda v: complex(decode(v[0]), decode(v[1])),
}


def decode(data: Any) -> Any:
    if isinstance(data, list):
        return [decode(item) for item in data]
    if isinstance(data, dict):
        ((tag, payload),) = data.items()
        return _TAGS[tag](payload)
    return data


def as_json_like(value: Any) -> Any:
    """Tuples become lists, recursively: `eq` comes from JSON, which has no tuples."""
    if isinstance(value, list | tuple):
        return [as_json_like(item) for item in value]
    if isinstance(value, dict):
        return {k: as_json_like(v) for k, v in value.items()}
    return value


def matches(value: Any, expected: Any) -> bool:
    """Python's `==` between two plain values, with tuples compared as lists."""
    return bool(as_json_like(value) == expected)
