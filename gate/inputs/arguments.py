"""A tool call's arguments against the arguments a case names: a subset match. Pure.

Every key the case names must be in the call's arguments with a matching value, objects matched
the same way at every depth, lists element by element (same length), anything else equal (`1`
matches `1.0`, never `true`). The `tool_calls` and `trajectory` checks match calls this way,
and a case's `tools:` picks a result (`when: [{arguments, returns}]`) this way too.
"""

from __future__ import annotations

import json
from typing import Any

SHOWN = 120


def short(value: Any, *, raw: bool = False) -> str:
    """A value as JSON, cut to a readable length."""
    text = value if raw else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def subset_mismatch(expected: Any, actual: Any, where: str = "") -> str | None:
    """Why `actual` does not contain `expected`; None when it does."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where or 'arguments'} is {short(actual)}, not an object"
        for key, value in expected.items():
            path = f"{where}.{key}" if where else key
            if key not in actual:
                return f"{path} is missing"
            problem = subset_mismatch(value, actual[key], path)
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{where} is {short(actual)}, expected {short(expected)}"
        for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problem = subset_mismatch(want, got, f"{where}[{index}]")
            if problem:
                return problem
        return None
    same_kind = isinstance(expected, bool) == isinstance(actual, bool)
    if same_kind and expected == actual:
        return None
    return f"{where} is {short(actual)}, expected {short(expected)}"
