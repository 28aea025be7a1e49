"""Wire formats of the chat APIs: request bodies out, validated replies in. Pure functions.

Responses are validated with pydantic at this boundary; a reply of the wrong shape raises
`ValueError` with a short reason (the caller reports it as a provider error).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.providers.tool_formats import anthropic_tool_params
from gate.report.output import ToolCall, Usage, tool_calls_from

Role = Literal["system", "user", "assistant"]
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


# A message already in one vendor's shape (an assistant turn with its tool calls, the tools'
# results), sent as it is.
WireMessage = dict[str, Any]
Conversation = Sequence[Message | WireMessage]


class Reply(BaseModel):
    """One answer of a chat model, whatever the provider."""

    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = Field(None, description="finish_reason, or stop_reason")
    usage: Usage | None = None
    model: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False
    latency_ms: float | None = Field(None, description="Of the call a cached reply replaces")
    call_ids: list[str] = Field(
        default_factory=list, description="The id of each tool call, for its result"
    )
    turn: Any = Field(
        None, description="The answer as the vendor takes it back (the next request's message)"
    )


class ChatFormat(Protocol):
    def body(
        self, model: str, messages: Conversation, params: dict[str, Any]
    ) -> dict[str, Any]: ...

    def parse(self, data: Any) -> Reply: ...

    def assistant_message(self, reply: Reply) -> WireMessage:
        """The reply as the next request's assistant message."""
        ...

    def tool_messages(self, reply: Reply, results: list[str]) -> list[WireMessage]:
        """The results of the reply's tool calls (in order) as the next request's messages."""
        ...


def result_text(result: Any) -> str:
    """A tool's result as the model reads it: a string as it is, other JSON as JSON."""
    return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)


def _dumped(messages: Conversation) -> list[WireMessage]:
    return [m.model_dump() if isinstance(m, Message) else m for m in messages]


def _first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "response"
    return f"unexpected response shape at `{where}`: {first['msg']}"


# --- OpenAI chat completions -------------------------------------------------------------


class _TextPart(BaseModel):
    type: str = "text"
    text: str | None = None


class _OpenAIFunction(BaseModel):
    name: str
    arguments: str | dict[str, Any] | None = None


class _OpenAICustom(BaseModel):
    name: str
    input: str | None = None


class _OpenAIToolCall(BaseModel):
    """A `function` call, or a `custom` tool's (its input is free text)."""

    id: str | None = None
    type: str = "function"
    function: _OpenAIFunction | None = None
    custom: _OpenAICustom | None = None

    def call(self) -> ToolCall | None:
        if self.function is not None:
            return ToolCall.parsed(self.function.name, self.function.arguments)
        if self.custom is not None:
            return ToolCall(name=self.custom.name, arguments=self.custom.input or "")
        return None


class _OpenAIMessage(BaseModel):
    content: str | list[_TextPart] | None = None
    refusal: str | None = None
    tool_calls: list[_OpenAIToolCall] | None = None
    function_call: _OpenAIFunction | None = Field(None, description="legacy, before tool_calls")

    def calls(self) -> list[ToolCall]:
        calls = [c for c in (t.call() for t in self.tool_calls or []) if c is not None]
        if self.function_call is not None:
            calls.append(ToolCall.parsed(self.function_call.name, self.function_call.arguments))
        return calls


class _OpenAIChoice(BaseModel):
    message: _OpenAIMessage
    finish_reason: str | None = None


class _OpenAIUsage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _OpenAIResponse(BaseModel):
    choices: list[_OpenAIChoice] = Field(min_length=1)
    usage: _OpenAIUsage | None = None
    model: str | None = None


def _openai_call(call: Any, index: int) -> WireMessage:
    """A tool call of a reply as a request's assistant message carries it (its arguments as
    the model wrote them)."""
    kind = call.get("type", "function")
    shape: WireMessage = {"id": call.get("id") or f"call_{index}", "type": kind}
    if kind == "custom":
        custom = call.get("custom") or {}
        shape["custom"] = {"name": custom.get("name"), "input": custom.get("input") or ""}
    else:
        function = call.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        shape["function"] = {"name": function.get("name"), "arguments": arguments}
    return shape


def _openai_turn(message: dict[str, Any]) -> WireMessage:
    """The assistant message of a response as the next request sends it back."""
    turn: WireMessage = {"role": "assistant", "content": message.get("content")}
    calls = message.get("tool_calls") or []
    if calls:
        turn["tool_calls"] = [_openai_call(c, i) for i, c in enumerate(calls)]
    if message.get("function_call"):
        turn["function_call"] = message["function_call"]
    if turn["content"] is None and not (calls or message.get("function_call")):
        turn["content"] = ""
    return turn


class OpenAIChatFormat:
    def body(self, model: str, messages: Conversation, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "model": model, "messages": _dumped(messages)}

    def assistant_message(self, reply: Reply) -> WireMessage:
        if isinstance(reply.turn, dict):
            return reply.turn
        return {"role": "assistant", "content": reply.text}

    def tool_messages(self, reply: Reply, results: list[str]) -> list[WireMessage]:
        """`tool` messages answering each `tool_call_id`; the legacy `function_call` is
        answered by a `function` message."""
        turn = reply.turn if isinstance(reply.turn, dict) else {}
        if turn.get("function_call") and not turn.get("tool_calls"):
            name = turn["function_call"].get("name")
            return [{"role": "function", "name": name, "content": results[0]}]
        return [
            {"role": "tool", "tool_call_id": call_id, "content": result}
            for call_id, result in zip(reply.call_ids, results, strict=True)
        ]

    def parse(self, data: Any) -> Reply:
        try:
            response = _OpenAIResponse.model_validate(data)
        except ValidationError as err:
            raise ValueError(_first_error(err)) from None
        choice = response.choices[0]
        content = choice.message.content
        if isinstance(content, list):
            content = "".join(p.text or "" for p in content if p.type == "text")
        extra: dict[str, Any] = {}
        if choice.message.refusal:
            extra["refusal"] = choice.message.refusal
        message = data["choices"][0]["message"]
        if choice.message.tool_calls or choice.message.function_call:
            extra["message"] = message  # as it came (promptfoo's output)
        usage = response.usage
        turn = _openai_turn(message)
        return Reply(
            call_ids=[c["id"] for c in turn.get("tool_calls", [])],
            turn=turn,
            text=content or "",
            tool_calls=choice.message.calls(),
            finish_reason=choice.finish_reason,
            usage=Usage(
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
            if usage
            else None,
            model=response.model,
            data=extra,
        )


# --- Anthropic Messages ------------------------------------------------------------------


class _AnthropicUsage(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0


class _AnthropicBlock(BaseModel):
    """A text block, a `tool_use` block, or another kind (thinking, ...) that is skipped."""

    type: str = "text"
    id: str | None = None
    text: str | None = None
    name: str | None = None
    input: Any = None


# What each kind of block keeps when it goes back as the next request's assistant message.
_BLOCK_KEYS = {
    "text": ("type", "text"),
    "tool_use": ("type", "id", "name", "input"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
}


def _anthropic_turn(blocks: list[Any]) -> list[WireMessage]:
    """The reply's content blocks as the next request sends them back: known kinds with only
    their request keys, a tool use with its id, other kinds (server tools) as they came."""
    turn: list[WireMessage] = []
    for index, block in enumerate(blocks):
        keys = _BLOCK_KEYS.get(block.get("type"))
        if keys is None:
            turn.append(block)
            continue
        shaped = {k: block[k] for k in keys if k in block}
        if shaped["type"] == "tool_use":
            shaped.setdefault("id", f"toolu_{index}")
            shaped.setdefault("input", {})
        if shaped["type"] != "text" or shaped.get("text"):
            turn.append(shaped)  # an empty text block is refused by the API
    return turn


class _AnthropicResponse(BaseModel):
    content: list[_AnthropicBlock]
    usage: _AnthropicUsage | None = None
    model: str | None = None
    stop_reason: str | None = None


class AnthropicMessagesFormat:
    """System messages go to the top-level `system`; `max_tokens` is required by the API; tools
    written in OpenAI's format are converted (`gate.providers.tool_formats`)."""

    def body(self, model: str, messages: Conversation, params: dict[str, Any]) -> dict[str, Any]:
        said = [m for m in messages if isinstance(m, Message)]
        system = "\n\n".join(m.content for m in said if m.role == "system")
        chat = _dumped([m for m in messages if not isinstance(m, Message) or m.role != "system"])
        converted = anthropic_tool_params(params)
        body: dict[str, Any] = {"max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS, **converted}
        body.update(model=model, messages=chat)
        if system:
            body["system"] = system
        return body

    def parse(self, data: Any) -> Reply:
        try:
            response = _AnthropicResponse.model_validate(data)
        except ValidationError as err:
            raise ValueError(_first_error(err)) from None
        usage = response.usage
        blocks = response.content
        texts = [b for b in blocks if b.type == "text"]
        extra: dict[str, Any] = {}
        if len(texts) > 1 or any(b.type == "tool_use" for b in blocks):
            extra["content"] = data["content"]  # the blocks as they came (promptfoo's output)
        turn = _anthropic_turn(data["content"])
        return Reply(
            call_ids=[b["id"] for b in turn if b.get("type") == "tool_use"],
            turn=turn,
            text="".join(b.text or "" for b in blocks if b.type == "text"),
            tool_calls=[
                ToolCall.parsed(b.name, b.input)
                for b in blocks
                if b.type == "tool_use" and b.name is not None
            ],
            finish_reason=response.stop_reason,
            usage=Usage(prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens)
            if usage
            else None,
            model=response.model,
            data=extra,
        )

    def assistant_message(self, reply: Reply) -> WireMessage:
        return _anthropic_assistant(reply)

    def tool_messages(self, reply: Reply, results: list[str]) -> list[WireMessage]:
        return _anthropic_results(reply, results)


def _anthropic_assistant(reply: Reply) -> WireMessage:
    blocks = reply.turn if isinstance(reply.turn, list) else []
    return {"role": "assistant", "content": blocks or reply.text}


def _anthropic_results(reply: Reply, results: list[str]) -> list[WireMessage]:
    """One user message holding a `tool_result` block for each `tool_use` id."""
    blocks = [
        {"type": "tool_result", "tool_use_id": call_id, "content": result}
        for call_id, result in zip(reply.call_ids, results, strict=True)
    ]
    return [{"role": "user", "content": blocks}]


# --- the user's own service (`http` kind) ------------------------------------------------


def parse_service_reply(data: Any) -> Reply:
    """`http` kind: a JSON object carrying a string `text`, maybe `usage`, `model`,
    `tool_calls` (`[{name, arguments}]`) and `finish_reason`."""
    if not isinstance(data, dict):
        raise ValueError(f"the service answered a JSON {type(data).__name__}, expected an object")
    text = data.get("text")
    if not isinstance(text, str):
        raise ValueError("the service's answer has no string `text`")
    usage = data.get("usage")
    try:
        parsed = Usage.model_validate(usage) if isinstance(usage, dict) else None
    except ValidationError as err:
        raise ValueError(_first_error(err)) from None
    try:
        calls = tool_calls_from(data.get("tool_calls"), where="the service")
    except TypeError as exc:
        raise ValueError(str(exc)) from None
    model = data.get("model")
    finish = data.get("finish_reason")
    known = ("text", "usage", "model", "tool_calls", "finish_reason")
    return Reply(
        text=text,
        tool_calls=calls,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=parsed,
        model=model if isinstance(model, str) else None,
        data={k: v for k, v in data.items() if k not in known},
    )


class ServiceChatFormat:
    """A chat request to the user's own service (`http` judge): messages out, `text` back."""

    def body(self, model: str, messages: Conversation, params: dict[str, Any]) -> dict[str, Any]:
        body = {**params, "messages": _dumped(messages)}
        return {"model": model, **body} if model else body

    def parse(self, data: Any) -> Reply:
        return parse_service_reply(data)

    def assistant_message(self, reply: Reply) -> WireMessage:
        return {"role": "assistant", "content": reply.text}

    def tool_messages(self, reply: Reply, results: list[str]) -> list[WireMessage]:
        return [{"role": "tool", "content": result} for result in results]
