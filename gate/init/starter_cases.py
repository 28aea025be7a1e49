"""The starter cases `gate init` writes: three examples in the published JSONL format, each
marked as one to replace, with inputs of the shape the system reads."""

from __future__ import annotations

import json
from typing import Any

from gate.init.detect import Shape
from gate.init.plan import Suite

EXAMPLE_MARK = "written by `gate init`: replace with a real case"


def example_value(key: str, n: int, shape: Shape) -> Any:
    if shape == "list":
        return []
    if isinstance(shape, tuple):
        return {k: f"example {k} {n}" for k in shape}
    return f"example {key} {n}"


def example_input(suite: Suite, n: int) -> dict[str, Any]:
    if not suite.input_keys:
        return {"question": f"example question {n}"}
    return {k: example_value(k, n, suite.shapes.get(k, "text")) for k in suite.input_keys}


def cases_text(suite: Suite) -> str:
    """Three example cases in the published JSONL format (format A), one per check family."""
    mark = {"example": EXAMPLE_MARK}
    cases = [
        {
            "id": "example-1",
            "task": "example",
            "input": example_input(suite, 1),
            "expect": {"min_chars": 1},
            "metadata": mark,
        },
        {
            "id": "example-2",
            "task": "example",
            "input": example_input(suite, 2),
            "expect": {"max_chars": 4000, "must_not_include": ["as an AI language model"]},
            "metadata": mark,
        },
        {
            "id": "example-3",
            "task": "example",
            "severity": "minor",
            "input": example_input(suite, 3),
            "expect": {"not_regex": ["(?i)traceback \\(most recent call last\\)"]},
            "reference": "A good answer to example 3, as you would want it.",
            "metadata": mark,
        },
    ]
    if suite.tools:
        cases.append(agent_case(suite))
    return "".join(json.dumps(case) + "\n" for case in cases)


def agent_case(suite: Suite) -> dict[str, Any]:
    """An agent case (docs/agents.md): a result for each tool the model config offers, a
    second user turn, and checks of the path: its first tool is called, at most a few calls."""
    first = suite.tools[0]
    return {
        "id": "example-agent",
        "task": "example",
        "severity": "minor",
        "input": example_input(suite, 4),
        "tools": {
            name: {"returns": {"example": f"what {name} returns in this case"}}
            for name in suite.tools
        },
        "max_steps": 6,
        "turns": [{"user": "example follow-up from the user", "expect": {"min_chars": 1}}],
        "expect": {
            "trajectory": {"calls": [{"name": first}], "match": "superset"},
            "max_tool_calls": 6,
        },
        "metadata": {"example": EXAMPLE_MARK},
    }
