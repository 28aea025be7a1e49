"""promptfoo's trajectory assertions' values (`trajectory:tool-used`, `tool-sequence`,
`tool-args-match`, `step-count`), read as promptfoo reads them and put in one shape for
`gate.checks.trajectory_assertions`. Pure.

promptfoo matches the steps of its traces (tools, commands, messages, reasoning, spans); the
gate's path holds the tool calls of the agent (`gate.report.output.Step`). A matcher for tool
steps maps onto it; one for another kind of step (`type: command`), and a `step-count`
without `type: tool` (which counts every traced step), does not, and is refused by name.
A step is matched by `name` or `pattern`: a glob (`*`, `?`) of the tool's name, ignoring case.
"""

from __future__ import annotations

from typing import Any

TOOL = "tool"
OTHER_STEPS = (
    "the gate's path holds tool calls only; promptfoo's {kinds} steps come from its traces"
)


class TrajectoryValueError(ValueError):
    """A value promptfoo would refuse, or one that does not map onto the gate's path."""


def _types(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _matcher(value: Any, what: str) -> dict[str, Any]:
    """`{pattern}` of a string or a `{name | pattern, type?}` mapping (type tool)."""
    if isinstance(value, str):
        return {"pattern": value}
    if not isinstance(value, dict):
        raise TrajectoryValueError(f"{what} must be a string or a mapping")
    kinds = _types(value["type"]) if "type" in value else [TOOL]
    if TOOL not in kinds:
        raise TrajectoryValueError(OTHER_STEPS.format(kinds=", ".join(map(str, kinds))))
    pattern = value.get("pattern") or value.get("name")
    if not isinstance(pattern, str) or not pattern:
        raise TrajectoryValueError(f"{what} must include a name or pattern property")
    return {"pattern": pattern}


def _bounds(value: dict[str, Any], what: str) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key in ("min", "max"):
        bound = value.get(key)
        if isinstance(bound, int | float) and not isinstance(bound, bool):
            found[key] = bound
        elif bound is not None:
            raise TrajectoryValueError(f"{what}: `{key}` must be a number")
    return found


def tool_used(value: Any) -> dict[str, Any]:
    """A list of tools that must all be used, or one tool used `min`..`max` times."""
    what = "trajectory:tool-used assertion"
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        if not value:
            raise TrajectoryValueError(f"{what} requires at least one expected tool")
        return {"tools": [_matcher(v, what) for v in value]}
    if isinstance(value, dict):
        matcher = _matcher(value, f"{what} object")
        return {"count": {**matcher, "min": 1, **_bounds(value, what)}}
    raise TrajectoryValueError(f"{what} must have a string, string array, or object value")


def tool_sequence(value: Any) -> dict[str, Any]:
    """Steps in order (`in_order`: among other calls; `exact`: the whole path)."""
    what = "trajectory:tool-sequence assertion"
    if isinstance(value, list):
        mode, steps = "in_order", value
    elif isinstance(value, dict):
        mode, steps = value.get("mode") or "in_order", value.get("steps") or []
    else:
        raise TrajectoryValueError(f"{what} must have an array or object value")
    if mode not in ("in_order", "exact"):
        raise TrajectoryValueError(f"{what}: `mode` must be in_order or exact")
    if not isinstance(steps, list) or not steps:
        raise TrajectoryValueError(f"{what} requires at least one expected step")
    matchers = [_matcher(s, f"{what} step {i + 1}") for i, s in enumerate(steps)]
    return {"mode": mode, "steps": matchers}


def step_count(value: Any) -> dict[str, Any]:
    """Tool calls (of a pattern, if given) between `min` and `max`."""
    what = "trajectory:step-count assertion"
    if not isinstance(value, dict):
        raise TrajectoryValueError(f"{what} must have an object value")
    if TOOL not in _types(value.get("type")):
        raise TrajectoryValueError(
            f"{what} counts every step promptfoo traces (model calls, messages, commands) "
            "unless `type: tool`; the gate's path holds tool calls only: add `type: tool`"
        )
    pattern = value.get("pattern") or value.get("name")
    bounds = _bounds(value, what)
    if not bounds:
        raise TrajectoryValueError(f"{what} must include a min or max property")
    return {"pattern": pattern if isinstance(pattern, str) and pattern else None, **bounds}


def tool_args_match(value: Any) -> dict[str, Any]:
    """A call of the tool whose arguments match (`partial`: a subset, `exact`: equal)."""
    what = "trajectory:tool-args-match assertion"
    if not isinstance(value, dict):
        raise TrajectoryValueError(f"{what} must have an object value")
    matcher = _matcher(value, what)
    args = value["args"] if "args" in value else value.get("arguments")
    if args is None:
        raise TrajectoryValueError(f"{what} must include an args or arguments property")
    mode = value.get("mode") or "partial"
    if mode not in ("partial", "exact"):
        raise TrajectoryValueError(f'{what} mode must be "partial" or "exact"')
    defaults = value.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise TrajectoryValueError(f"{what} defaults must be an object")
    ignore = value.get("ignore") or []
    ignore = [ignore] if isinstance(ignore, str) else ignore
    if not isinstance(ignore, list) or not all(isinstance(i, str) and i.strip() for i in ignore):
        raise TrajectoryValueError(f"{what} ignore must be a string or an array of strings")
    return {**matcher, "args": args, "mode": mode, "defaults": defaults, "ignore": ignore}


READERS = {
    "trajectory:tool-used": tool_used,
    "trajectory:tool-sequence": tool_sequence,
    "trajectory:step-count": step_count,
    "trajectory:tool-args-match": tool_args_match,
}
