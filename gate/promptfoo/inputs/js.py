"""JavaScript's view of data, where promptfoo's behaviour depends on it: `String(value)`,
`JSON.stringify`, `Number.prototype.toString` and what nunjucks prints for a value. Pure.

promptfoo runs on Node: a YAML `1.0` is the number 1 (printed `1`), `[a, b]` prints as `a,b`,
`null` prints as nothing, an object as `[object Object]`. The gate's values are Python's, so
these functions make them print and serialise the way promptfoo's do.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

MAX_SAFE = 2**53


def js_number(value: float) -> str:
    """`Number.prototype.toString()`: the shortest digits that round-trip, plain between 1e-6
    and 1e21, else with an exponent (`1e+21`, `1.5e-7`)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) < MAX_SAFE else js_number(float(value))
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    digits = Decimal(repr(value))
    if 1e-6 <= abs(value) < 1e21:
        text = format(digits, "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    sign, mantissa, exponent = digits.as_tuple()
    numerals = "".join(map(str, mantissa)).rstrip("0") or "0"
    power = exponent + len(mantissa) - 1  # type: ignore[operator]
    head = numerals[0] + ("." + numerals[1:] if len(numerals) > 1 else "")
    return f"{'-' if sign else ''}{head}e{'+' if power >= 0 else '-'}{abs(power)}"


def js_value(value: Any) -> Any:
    """A number as JavaScript holds it: an integral float is an integer, an integer beyond
    2**53 a float (so both print as Node prints them)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < MAX_SAFE:
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= MAX_SAFE:
        return float(value)
    return value


def js_string(value: Any) -> str:
    """`String(value)`: `null`, `true`, `a,b` for an array (its nulls empty), `[object
    Object]` for an object."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list | tuple):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_display(value: Any) -> str:
    """What nunjucks prints for `{{ value }}`: nothing for null and undefined."""
    if value is None or type(value).__name__.endswith("Undefined"):
        return ""
    return js_string(value)


def js_stringify(value: Any, indent: int | None = None) -> str:
    """`JSON.stringify(value, null, indent)`; NaN and Infinity become `null`, as in Node."""
    return _encode(value, indent, 0)


def _encode(value: Any, indent: int | None, depth: int) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "null"
    if isinstance(value, bool | int | float):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        items = [(json.dumps(str(k), ensure_ascii=False), v) for k, v in value.items()]
        return _container(
            "{",
            "}",
            [f"{k}:{_space(indent)}{_encode(v, indent, depth + 1)}" for k, v in items],
            indent,
            depth,
        )
    if isinstance(value, list | tuple):
        parts = [_encode(v, indent, depth + 1) for v in value]
        return _container("[", "]", parts, indent, depth)
    return json.dumps(str(value), ensure_ascii=False)


def _space(indent: int | None) -> str:
    return " " if indent else ""


def _container(open_: str, close: str, parts: list[str], indent: int | None, depth: int) -> str:
    if not parts:
        return open_ + close
    if not indent:
        return open_ + ",".join(parts) + close
    pad, inner = " " * indent * depth, " " * indent * (depth + 1)
    return open_ + "\n" + ",\n".join(inner + p for p in parts) + "\n" + pad + close


def js_json_loads(text: str) -> Any:
    """`JSON.parse`: no NaN or Infinity, numbers as JavaScript holds them."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(
        text,
        parse_constant=constant,
        parse_float=lambda s: js_value(float(s)),
        parse_int=lambda s: js_value(int(s)),
    )


def js_regex(pattern: str) -> re.Pattern[str]:
    """`new RegExp(pattern)` as a Python pattern: `$` ends the text (as JavaScript's does
    without the `m` flag), `(?<name>...)` and `\\k<name>` are named groups, `\\d` and `\\w`
    are ASCII. Raises `re.error` for what Python cannot compile."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            pair = pattern[i : i + 2]
            named = re.match(r"\\k<(\w+)>", pattern[i:])
            if named and not in_class:
                out.append(f"(?P={named.group(1)})")
                i += len(named.group(0))
                continue
            out.append(pair)
            i += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        elif pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            char, i = "(?P<", i + 2
        out.append(char)
        i += 1
    return re.compile("".join(out), re.ASCII)
