"""What a system answered for one call: the text, the tool calls and the usage the checks read
and the runner records as an attempt. Below systems and checks, so both (and the providers'
wire formats) speak it without importing each other."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Literal

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


class Step(BaseModel):
    """One step of an agent's path: the tool it called, with what, the result it got and in
    which user turn (1: the case's input)."""

    model_config = ConfigDict(frozen=True)

    name: str
    arguments: JsonValue = Field(default_factory=dict)
    result: JsonValue = None
    invalid_arguments: bool = Field(False, description="`arguments` is the raw, unparsed string")
    turn: int = 1
    unanswered: bool = Field(
        False, description="a forbidden tool the case gives no result for: the path ended here"
    )

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not self.invalid_arguments:
            data.pop("invalid_arguments", None)
        if not self.unanswered:
            data.pop("unanswered", None)
        return data

    @classmethod
    def of(cls, call: ToolCall, result: JsonValue = None, turn: int = 1) -> Step:
        return cls(
            name=call.name,
            arguments=call.arguments,
            invalid_arguments=call.invalid_arguments,
            result=result,
            turn=turn,
        )

    def call(self) -> ToolCall:
        return ToolCall(
            name=self.name, arguments=self.arguments, invalid_arguments=self.invalid_arguments
        )


ChatRole = Literal["system", "user", "assistant", "tool"]


class TranscriptMessage(BaseModel):
    """One message of a conversation as the report keeps it, whatever the vendor: an assistant
    message carries the tool calls it made, a `tool` message the result of one (`name`)."""

    model_config = ConfigDict(frozen=True)

    role: ChatRole
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    name: str | None = Field(None, description="A tool message: the tool it answers")
    turn: int = Field(1, description="The user turn it belongs to (1: the case's input)")

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        if not self.tool_calls:
            data.pop("tool_calls", None)
        if self.name is None:
            data.pop("name", None)
        return data


def steps_from(value: JsonValue, *, where: str) -> list[Step]:
    """`trajectory` of a system's own answer: a list of `{name, arguments, result}`."""
    items = _named_items(value, where, "`trajectory`", "a trajectory step")
    return [
        Step.of(ToolCall.parsed(name, item.get("arguments")), item.get("result"))
        for name, item in items
    ]


def _named_items(
    value: JsonValue, where: str, what: str, item_noun: str
) -> Iterator[tuple[str, dict[str, JsonValue]]]:
    """A system's list of objects that each carry a string `name`, one by one with their
    names; a TypeError naming `where` when it is not a list or an item has no such name."""
    if value is None:
        return
    if not isinstance(value, list):
        raise TypeError(f"{where} returned {what} that is not a list")
    for item in value:
        fields = item if isinstance(item, dict) else {}
        name = fields.get("name")
        if not isinstance(name, str):
            raise TypeError(f"{where} returned {item_noun} without a string `name`")
        yield name, fields


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
    items = _named_items(value, where, "`tool_calls`", "a tool call")
    return [ToolCall.parsed(name, item.get("arguments")) for name, item in items]


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
    messages: list[TranscriptMessage] = Field(
        default_factory=list, description="A conversation's transcript (none for one answer)"
    )
    trajectory: list[Step] = Field(
        default_factory=list, description="The tool calls of an agent's path and their results"
    )

    @property
    def path(self) -> list[Step]:
        """The agent's path: its trajectory, or else the answer's tool calls (no results)."""
        return self.trajectory or [Step.of(call) for call in self.tool_calls]

    @property
    def turns(self) -> int:
        """User turns the conversation held (1 for one answer)."""
        return max((m.turn for m in self.messages), default=1)

    def turn(self, number: int) -> SystemOutput:
        """The answer of one user turn, with that turn's tool calls as its path."""
        steps = [s for s in self.trajectory if s.turn == number]
        said = [m for m in self.messages if m.turn == number and m.role == "assistant"]
        return SystemOutput(
            text=said[-1].content if said else "",
            tool_calls=[s.call() for s in steps],
            trajectory=steps,
            messages=[m for m in self.messages if m.turn <= number],
            finish_reason=self.finish_reason if number == self.turns else None,
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
            known = ("text", "usage", "tool_calls", "finish_reason", "trajectory")
            return cls(
                text=text,
                tool_calls=tool_calls_from(value.get("tool_calls"), where=where),
                trajectory=steps_from(value.get("trajectory"), where=where),
                finish_reason=finish if isinstance(finish, str) else None,
                usage=Usage.model_validate(usage) if isinstance(usage, dict) else None,
                data={k: v for k, v in value.items() if k not in known},
            )
        raise TypeError(f"{where} returned {type(value).__name__}, expected str or dict")
