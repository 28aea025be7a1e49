"""What a system answered for one call: the text, the tool calls and the usage the checks read
and the runner records as an attempt. Below systems and checks, so both (and the providers'
wire formats) speak it without importing each other."""

from __future__ import annotations

import json
from collections.abc import Sequence

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
)

CALL_ARROW = "→"


class Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ToolCall(BaseModel):
    """One tool (function) call of an answer. `arguments` is the parsed JSON the model sent;
    when that did not parse, it is the raw string and `invalid_arguments` says so."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: JsonValue = Field(default_factory=dict)
    invalid_arguments: bool = Field(False, description="`arguments` is the raw, unparsed string")

    @classmethod
    def parsed(cls, name: str, arguments: JsonValue) -> ToolCall:
        """A call whose arguments may come as a JSON string (OpenAI) or as data (Anthropic)."""
        if not isinstance(arguments, str):
            return cls(name=name, arguments={} if arguments is None else arguments)
        if not arguments.strip():
            return cls(name=name, arguments={})
        try:
            return cls(name=name, arguments=json.loads(arguments))
        except ValueError:
            return cls(name=name, arguments=arguments, invalid_arguments=True)

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not self.invalid_arguments:
            data.pop("invalid_arguments", None)
        return data

    def shown(self) -> str:
        """`name({"location": "Paris"})`; raw arguments are shown as they came."""
        if self.invalid_arguments:
            return f"{self.name}({self.arguments})"
        return f"{self.name}({json.dumps(self.arguments, ensure_ascii=False, sort_keys=True)})"


def readable_output(text: str | None, tool_calls: Sequence[ToolCall] = ()) -> str | None:
    """An answer as a reader sees it: its text, then one line per tool call
    (`→ get_current_weather({"location": "Paris"})`). Pure."""
    if not tool_calls:
        return text
    lines = [f"{CALL_ARROW} {call.shown()}" for call in tool_calls]
    return "\n".join([text, *lines] if text else lines)


def tool_calls_from(value: JsonValue, *, where: str) -> list[ToolCall]:
    """`tool_calls` of a system's own answer (python, command, http, replay): a list of
    `{name, arguments}`, the arguments as data or as a JSON string."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"{where} returned `tool_calls` that is not a list")
    calls = []
    for item in value:
        call = item if isinstance(item, dict) else {}
        name = call.get("name")
        if not isinstance(name, str):
            raise TypeError(f"{where} returned a tool call without a string `name`")
        calls.append(ToolCall.parsed(name, call.get("arguments")))
    return calls


class SystemOutput(BaseModel):
    """What the system answered. `data` keeps any extra fields the checks may read."""

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = Field(
        None, description="OpenAI's finish_reason, Anthropic's stop_reason"
    )
    usage: Usage | None = None
    data: dict[str, JsonValue] = Field(default_factory=dict)
    cached: bool = False
    cost_usd: float | None = None
    model: str | None = None
    latency_ms: float | None = Field(
        None, description="A cached answer reports the latency of the call it replaces"
    )

    @classmethod
    def from_value(cls, value: JsonValue, *, where: str) -> SystemOutput:
        """Accept the protocol's shapes: a string, or an object carrying `text` (and maybe
        `tool_calls`, `finish_reason`, `usage`)."""
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, dict):
            text = value.get("text")
            if not isinstance(text, str):
                raise TypeError(f"{where} returned an object without a string `text`")
            usage = value.get("usage")
            finish = value.get("finish_reason")
            known = ("text", "usage", "tool_calls", "finish_reason")
            return cls(
                text=text,
                tool_calls=tool_calls_from(value.get("tool_calls"), where=where),
                finish_reason=finish if isinstance(finish, str) else None,
                usage=Usage.model_validate(usage) if isinstance(usage, dict) else None,
                data={k: v for k, v in value.items() if k not in known},
            )
        raise TypeError(f"{where} returned {type(value).__name__}, expected str or dict")
