"""promptfoo's trajectory assertions on the agent's path, with promptfoo's semantics (its
`trajectory.ts`), the values read by `gate.inputs.promptfoo.trajectory_values`. Pure.

- `trajectory:tool-used`: every listed tool is called (`not-`: none of them is); or one tool
  is called `min` (default 1) to `max` times.
- `trajectory:tool-sequence`: the steps are called in this order, other calls between them
  allowed (`in_order`, the default), or the path is exactly these calls (`exact`).
- `trajectory:tool-args-match`: some call of the tool has arguments that match: `partial`
  (the default) every expected key with a matching value, lists of the same length element
  by element; `exact` equal; `ignore`d keys left out of both, arguments equal to their
  `defaults` left out of the call's.
- `trajectory:step-count`: the tool calls (of the pattern, if given) are between `min` and
  `max`.

A tool matches a `name` or `pattern`: a glob (`*`, `?`) of its name, ignoring case. `not-`
inverts the pass, except for a list of tools, whose inverse is that none was used.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gate.promptfoo.inputs.assertions import Assertion
from gate.report.output import Step

Graded = tuple[bool, str]  # (passes, promptfoo's reason)


def glob(pattern: str, name: str) -> bool:
    """promptfoo's `matchesPattern`: `*` any characters, `?` one, the rest literal; any case."""
    parts = ["." if c == "?" else ".*" if c == "*" else re.escape(c) for c in pattern]
    return re.fullmatch("".join(parts), name, re.IGNORECASE | re.DOTALL) is not None


def matches(step: Step, matcher: dict[str, Any]) -> bool:
    pattern = matcher.get("pattern")
    return not pattern or glob(pattern, step.name)


def _names(steps: list[Step]) -> str:
    return ", ".join(f"tool:{s.name}" for s in steps) or "(none)"


def tool_used(value: dict[str, Any], steps: list[Step], inverse: bool) -> Graded:
    if "tools" in value:
        wanted = value["tools"]
        used = [m for m in wanted if any(matches(s, m) for s in steps)]
        missing = [m["pattern"] for m in wanted if m not in used]
        if inverse:
            shown = ", ".join(m["pattern"] for m in used)
            return not used, f"Forbidden tool(s) were used: {shown}. Actual tools: {_names(steps)}"
        return not missing, (
            f"Missing required tool(s): {', '.join(missing)}. Actual tools: {_names(steps)}"
        )
    count = value["count"]
    made = [s for s in steps if matches(s, count)]
    low, high = count.get("min", 1), count.get("max")
    holds = len(made) >= low and (high is None or len(made) <= high)
    expected = f"at least {low:g}" if high is None else f"{low:g}-{high:g}"
    reason = f'Matched tool "{count["pattern"]}" {len(made)} time(s) (expected {expected})'
    return holds != inverse, reason


def tool_sequence(value: dict[str, Any], steps: list[Step], inverse: bool) -> Graded:
    wanted = value["steps"]
    if value["mode"] == "exact":
        holds = len(steps) == len(wanted) and all(
            matches(s, m) for s, m in zip(steps, wanted, strict=False)
        )
        order = ", ".join(m["pattern"] for m in wanted)
        reason = f"Expected exact tool sequence of {order}, but actual tools were {_names(steps)}"
    else:
        found = 0
        for step in steps:
            if found < len(wanted) and matches(step, wanted[found]):
                found += 1
        holds = found == len(wanted)
        missing = wanted[found]["pattern"] if found < len(wanted) else ""
        reason = (
            f'Expected tool "{missing}" was not observed in order. Actual tools: {_names(steps)}'
        )
    if inverse:
        reason = f"Forbidden tool sequence was observed. Actual tools: {_names(steps)}"
    return holds != inverse, reason


def _partial(actual: Any, expected: Any) -> bool:
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_partial(a, e) for a, e in zip(actual, expected, strict=True))
        )
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and _partial(actual[k], v) for k, v in expected.items()
        )
    return _strict_equal(actual, expected)


def _strict_equal(a: Any, b: Any) -> bool:
    """node's `isDeepStrictEqual` on JSON values: `true` is not `1`; `1` is `1.0`."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b and (isinstance(a, int | float) == isinstance(b, int | float))


def _ignored(key: str, ignore: list[str]) -> bool:
    return any(
        entry == key or (re.search(r"[*?]", entry) is not None and glob(entry, key))
        for entry in ignore
    )


def _without(value: Any, ignore: list[str], defaults: dict[str, Any]) -> Any:
    if not isinstance(value, dict):
        return value
    return {
        k: v
        for k, v in value.items()
        if not _ignored(k, ignore) and not (k in defaults and _strict_equal(v, defaults[k]))
    }


def tool_args_match(value: dict[str, Any], steps: list[Step], inverse: bool) -> Graded:
    ignore, defaults = value["ignore"], value["defaults"]
    expected = _without(value["args"], ignore, {})
    calls = [s for s in steps if matches(s, value)]
    found = [
        s
        for s in calls
        if not s.invalid_arguments
        and (
            _strict_equal(_without(s.arguments, ignore, defaults), expected)
            if value["mode"] == "exact"
            else _partial(_without(s.arguments, ignore, defaults), expected)
        )
    ]
    observed = ", ".join(json.dumps(s.arguments) for s in calls) or "(none)"
    reason = (
        f'No call to tool "{value["pattern"]}" matched expected arguments ({value["mode"]}): '
        f"{json.dumps(value['args'])}. Observed args: {observed}"
    )
    if inverse:
        reason = f'Forbidden argument match for tool "{value["pattern"]}" was observed'
    return bool(found) != inverse, reason


def step_count(value: dict[str, Any], steps: list[Step], inverse: bool) -> Graded:
    count = sum(1 for s in steps if matches(s, value))
    low, high = value.get("min"), value.get("max")
    holds = (low is None or count >= low) and (high is None or count <= high)
    bounds = " and ".join(
        f"{word} {bound:g}"
        for word, bound in (("at least", low), ("at most", high))
        if bound is not None
    )
    return holds != inverse, f"Matched {count} trajectory step(s) for type=tool (expected {bounds})"


HANDLERS = {
    "trajectory:tool-used": tool_used,
    "trajectory:tool-sequence": tool_sequence,
    "trajectory:tool-args-match": tool_args_match,
    "trajectory:step-count": step_count,
}


def trajectory_assertion(a: Assertion, steps: list[Step]) -> Graded:
    """Whether the assertion passes on the path (`not-` applied), and promptfoo's reason."""
    return HANDLERS[a.type](a.value, steps, a.negated)
