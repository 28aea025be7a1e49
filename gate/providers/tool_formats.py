"""Tools between the vendors' formats: a model config writes them as OpenAI does, Anthropic's
Messages API gets them converted. Pure functions.

OpenAI (and what a model config holds): `tools: [{type: function, function: {name,
description, parameters}}]`, `tool_choice: auto | required | none | {type: function,
function: {name}}`, `parallel_tool_calls`, and the legacy `functions` / `function_call`.
Anthropic: `tools: [{name, description, input_schema}]`, `tool_choice: {type: auto | any |
tool | none, name, disable_parallel_tool_use}`. A tool or choice already in Anthropic's shape
passes unchanged. What has no Anthropic equivalent (OpenAI's `custom` tools, an
`allowed_tools` choice) raises `ToolFormatError` naming the parameter; `strict` is dropped.
"""

from __future__ import annotations

from typing import Any

EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}
# The parameters this module reads; none of them reaches Anthropic as it is.
OPENAI_TOOL_PARAMS = ("tools", "functions", "tool_choice", "function_call", "parallel_tool_calls")


class ToolFormatError(ValueError):
    """A tool parameter Anthropic cannot be given; `key` names it (`tools[0].function`) and
    `path` is the same as a key path (`("tools", 0, "function")`)."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        self.path = tuple(
            int(part) if part.isdigit() else part
            for part in key.replace("[", ".").replace("]", "").split(".")
        )
        super().__init__(f"`{key}`: {message}")


CHOICE_MODES = {"auto": "auto", "required": "any", "none": "none", "any": "any"}
ANTHROPIC_CHOICES = ("auto", "any", "tool", "none")


def _function_tool(function: Any, where: str) -> dict[str, Any]:
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise ToolFormatError(where, "a function needs a string `name`")
    tool: dict[str, Any] = {"name": function["name"]}
    if function.get("description"):
        tool["description"] = function["description"]
    tool["input_schema"] = function.get("parameters") or EMPTY_SCHEMA
    return tool


def anthropic_tool(tool: Any, where: str) -> dict[str, Any]:
    """One tool in Anthropic's shape."""
    if not isinstance(tool, dict):
        raise ToolFormatError(where, f"a tool must be a mapping, got {type(tool).__name__}")
    kind = tool.get("type")
    if kind == "function" or "function" in tool:
        return _function_tool(tool.get("function"), f"{where}.function")
    if kind == "custom":
        raise ToolFormatError(where, "OpenAI's custom tools have no Anthropic equivalent")
    if "input_schema" in tool or (isinstance(kind, str) and "name" in tool):
        return tool  # Anthropic's own shape (a client tool, or a server tool like web search)
    raise ToolFormatError(where, "neither an OpenAI function tool nor an Anthropic tool")


def anthropic_choice(choice: Any, where: str) -> dict[str, Any]:
    """`tool_choice` (or the legacy `function_call`) in Anthropic's shape."""
    if isinstance(choice, str):
        if choice not in CHOICE_MODES:
            raise ToolFormatError(where, f"{choice!r} is not auto, required or none")
        return {"type": CHOICE_MODES[choice]}
    if not isinstance(choice, dict):
        raise ToolFormatError(where, "must be a string or a mapping")
    kind = choice.get("type")
    function = choice.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        return {"type": "tool", "name": function["name"]}
    if kind is None and isinstance(choice.get("name"), str):  # legacy {"name": ...}
        return {"type": "tool", "name": choice["name"]}
    if kind in ANTHROPIC_CHOICES and (kind != "tool" or isinstance(choice.get("name"), str)):
        return choice
    if kind == "allowed_tools":
        raise ToolFormatError(where, "OpenAI's allowed_tools has no Anthropic equivalent")
    if kind == "custom":
        raise ToolFormatError(where, "OpenAI's custom tools have no Anthropic equivalent")
    raise ToolFormatError(where, f"not a tool choice: {choice!r}")


def anthropic_tool_params(params: dict[str, Any]) -> dict[str, Any]:
    """The request parameters with the tools and the tool choice in Anthropic's shape."""
    if not any(key in params for key in OPENAI_TOOL_PARAMS):
        return params
    out = {k: v for k, v in params.items() if k not in OPENAI_TOOL_PARAMS}
    tools: list[Any] = []
    for key in ("tools", "functions"):
        value = params.get(key)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ToolFormatError(key, "must be a list")
        if key == "functions":
            value = [{"type": "function", "function": f} for f in value]
        tools += [anthropic_tool(tool, f"{key}[{i}]") for i, tool in enumerate(value)]
    if tools:
        out["tools"] = tools
    choice: dict[str, Any] | None = None
    for key in ("tool_choice", "function_call"):
        if params.get(key) is not None:
            choice = anthropic_choice(params[key], key)
            break
    if params.get("parallel_tool_calls") is False:
        choice = dict(choice or {"type": "auto"})
        if choice["type"] != "none":
            choice["disable_parallel_tool_use"] = True
    if choice is not None:
        out["tool_choice"] = choice
    return out
