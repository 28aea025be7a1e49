"""Wire formats of the chat APIs: request bodies out, validated replies in. Pure functions.

Responses are validated with pydantic at this boundary; a reply of the wrong shape raises
`ValueError` with a short reason (the caller reports it as a provider error).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.report.output import Usage

Role = Literal["system", "user", "assistant"]
ANTHROPIC_DEFAULT_MAX_TOKENS = 1024


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class Reply(BaseModel):
    """One answer of a chat model, whatever the provider."""

    text: str
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


class _OpenAIMessage(BaseModel):
    content: str | list[_TextPart] | None = None
    refusal: str | None = None


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
        extra: dict[str, Any] = {"finish_reason": choice.finish_reason}
        if choice.message.refusal:
            extra["refusal"] = choice.message.refusal
        usage = response.usage
        return Reply(
            text=content or "",
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


class _AnthropicResponse(BaseModel):
    content: list[_TextPart]
    usage: _AnthropicUsage | None = None
    model: str | None = None
    stop_reason: str | None = None


class AnthropicMessagesFormat:
    """System messages go to the top-level `system`; `max_tokens` is required by the API."""

    def body(self, model: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        system = "\n\n".join(m.content for m in messages if m.role == "system")
        chat = [m.model_dump() for m in messages if m.role != "system"]
        body: dict[str, Any] = {"max_tokens": ANTHROPIC_DEFAULT_MAX_TOKENS, **params}
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
        return Reply(
            text="".join(b.text or "" for b in response.content if b.type == "text"),
            usage=Usage(prompt_tokens=usage.input_tokens, completion_tokens=usage.output_tokens)
            if usage
            else None,
            model=response.model,
            data={"stop_reason": response.stop_reason},
        )


# --- the user's own service (`http` kind) ------------------------------------------------


def parse_service_reply(data: Any) -> Reply:
    """`http` kind: a JSON object carrying a string `text`, maybe `usage` and `model`."""
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
    model = data.get("model")
    extra = {k: v for k, v in data.items() if k not in ("text", "usage", "model")}
    return Reply(
        text=text, usage=parsed, model=model if isinstance(model, str) else None, data=extra
    )


class ServiceChatFormat:
    """A chat request to the user's own service (`http` judge): messages out, `text` back."""

    def body(self, model: str, messages: list[Message], params: dict[str, Any]) -> dict[str, Any]:
        body = {**params, "messages": [m.model_dump() for m in messages]}
        return {"model": model, **body} if model else body

    def parse(self, data: Any) -> Reply:
        return parse_service_reply(data)
