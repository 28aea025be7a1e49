"""Wire formats of the chat APIs: request bodies out, validated replies in. Pure functions.

Responses are validated with pydantic at this boundary; a reply of the wrong shape raises
`ValueError` with a short reason (the caller reports it as a provider error).
"""

from __future__ import annotations

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


class ChatFormat(Protocol):
    def body(
        self, model: str, messages: list[Message], params: dict[str, Any]
    ) -> dict[str, Any]: ...

    def parse(self, data: Any) -> Reply: ...


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


class OpenAIChatFormat:
    def body(self, model: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "model": model, "messages": [m.model_dump() for m in messages]}

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
        if choice.message.tool_calls or choice.message.function_call:
            extra["message"] = data["choices"][0]["message"]  # as it came (promptfoo's output)
        usage = response.usage
        return Reply(
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
    text: str | None = None
    name: str | None = None
    input: Any = None


class _AnthropicResponse(BaseModel):
    content: list[_AnthropicBlock]
    usage: _AnthropicUsage | None = None
    model: str | None = None
    stop_reason: str | None = None


class AnthropicMessagesFormat:
    """System messages go to the top-level `system`; `max_tokens` is required by the API; tools
    written in OpenAI's format are converted (`gate.providers.tool_formats`)."""

    def body(self, model: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        chat = [m.model_dump() for m in messages if m.role != "system"]
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
        return Reply(
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

    def body(self, model: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        body = {**params, "messages": [m.model_dump() for m in messages]}
        return {"model": model, **body} if model else body

    def parse(self, data: Any) -> Reply:
        return parse_service_reply(data)
