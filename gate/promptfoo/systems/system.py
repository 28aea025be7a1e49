"""`promptfoo` kind: one prompt and one provider of a promptfoo config, called as promptfoo
calls them. Each side reads its own config (in its checkout): the system is each side's own.

The request is promptfoo's: the prompt rendered (`gate.promptfoo.systems.prompts`), read as
messages the way the provider reads them, and the provider's `config` as parameters, with
promptfoo's defaults (`temperature: 0`, `max_tokens: 1024`; none for OpenAI's reasoning
models). OpenAI's endpoint is `config.apiHost`, `config.apiBaseUrl`, `$OPENAI_API_HOST`,
`$OPENAI_API_BASE_URL` or `$OPENAI_BASE_URL`; Anthropic's `config.apiBaseUrl` or
`$ANTHROPIC_BASE_URL`; the key comes from `config.apiKeyEnvar` or the provider's usual variable.
The answer keeps what promptfoo's assertions read: the output as promptfoo's provider returns
it, the tools offered and the rendered prompt.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from gate.errors import InputError, SystemCallError
from gate.inputs.config import PromptfooSystem
from gate.inputs.paths import relative_posix
from gate.promptfoo.inputs.chat import ChatPromptError, anthropic_messages, openai_messages
from gate.promptfoo.inputs.config import read_promptfoo
from gate.promptfoo.inputs.files import DiskFiles, load_ref
from gate.promptfoo.inputs.js import js_json_loads, js_stringify
from gate.promptfoo.inputs.providers import ProviderSpec
from gate.promptfoo.systems.prompts import PromptfooPrompt
from gate.providers.endpoints import anthropic_endpoint, openai_endpoint
from gate.providers.transport import Endpoint
from gate.providers.wire_formats import (
    AnthropicMessagesFormat,
    ChatFormat,
    Message,
    OpenAIChatFormat,
    Reply,
)
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest
from gate.systems.chat import chat_description, client_for, to_output
from gate.systems.tool_loop import ChatModel, ChatSession

OPENAI_PARAMS = (
    "seed", "top_p", "presence_penalty", "frequency_penalty", "functions", "function_call",
    "tools", "tool_choice", "response_format", "stop", "max_completion_tokens", "service_tier",
    "user", "metadata", "store", "prompt_cache_key", "parallel_tool_calls", "logit_bias",
)  # fmt: skip
ANTHROPIC_PARAMS = (
    "top_p",
    "top_k",
    "stop_sequences",
    "metadata",
    "tools",
    "tool_choice",
    "thinking",
)
REASONING = ("o1", "o3", "o4", "gpt-5")


def _reasoning(model: str) -> bool:
    name = model.split("/")[-1].removeprefix("ft:")
    return name.startswith(REASONING)


def openai_params(provider: ProviderSpec, tools: Any) -> dict[str, Any]:
    config = provider.config
    params: dict[str, Any] = {}
    if not _reasoning(provider.model):
        params["max_tokens"] = config.get("max_tokens", 1024)
        params["temperature"] = config.get("temperature", 0)
    elif config.get("reasoning_effort"):
        params["reasoning_effort"] = config["reasoning_effort"]
    params.update({k: config[k] for k in OPENAI_PARAMS if config.get(k) is not None})
    if tools:
        params["tools"] = tools
    params.update(config.get("passthrough") or {})
    return params


def anthropic_params(provider: ProviderSpec, tools: Any) -> dict[str, Any]:
    config = provider.config
    params: dict[str, Any] = {"max_tokens": config.get("max_tokens", 1024)}
    if config.get("top_p") is None and not config.get("thinking"):
        params["temperature"] = config.get("temperature", 0)
    params.update({k: config[k] for k in ANTHROPIC_PARAMS if config.get(k) is not None})
    if tools:
        params["tools"] = tools
    params.update(config.get("extra_body") or {})
    return params


def endpoint_for(provider: ProviderSpec, environ: dict[str, str]) -> Endpoint:
    config = provider.config
    key_env = config.get("apiKeyEnvar")
    if provider.vendor == "anthropic":
        endpoint = anthropic_endpoint(config.get("apiBaseUrl"), key_env, environ, "provider")
    else:
        host = config.get("apiHost") or environ.get("OPENAI_API_HOST")
        base = (
            f"https://{config['apiHost']}/v1" if config.get("apiHost")
            else config.get("apiBaseUrl")
            or (f"https://{host}/v1" if host else None)
            or environ.get("OPENAI_API_BASE_URL")
        )  # fmt: skip
        endpoint = openai_endpoint(base, key_env, environ, "provider")
        if config.get("organization"):
            endpoint = with_headers(endpoint, {"OpenAI-Organization": config["organization"]})
    headers = config.get("headers")
    if isinstance(headers, dict):
        endpoint = with_headers(endpoint, {k: str(v) for k, v in headers.items()})
    return endpoint


def with_headers(endpoint: Endpoint, headers: dict[str, str]) -> Endpoint:
    """`endpoint` sending `headers` too (as written in the config: the cache's key sees them)."""
    written = {**(endpoint.written_headers or {}), **headers}
    return replace(endpoint, headers={**endpoint.headers, **headers}, written_headers=written)


def promptfoo_output(provider: ProviderSpec, reply: Reply) -> Any:
    """The output as promptfoo's provider returns it."""
    if provider.vendor == "anthropic":
        blocks = reply.data.get("content")
        if not blocks:
            return reply.text
        if any(b.get("type") == "tool_use" for b in blocks):
            parts = [
                b.get("text", "") if b.get("type") == "text" else js_stringify(b) for b in blocks
            ]
            return "\n\n".join(p for p in parts if p != "")
        return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    if reply.data.get("refusal"):
        return reply.data["refusal"]
    message = reply.data.get("message")
    if isinstance(message, dict):
        calls = message.get("function_call") or message.get("tool_calls")
        if message.get("content") and calls:
            return message
        if calls:
            return calls
    output: Any = reply.text
    response_format = provider.config.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        with contextlib.suppress(ValueError):
            output = js_json_loads(output)
    return output


def promptfoo_conversation(output: SystemOutput) -> SystemOutput:
    """The output as promptfoo's simulated-user provider returns it: each user message and
    each answer, `User: ...` and `Assistant: ...`, joined by `---` lines."""
    said = []
    for turn in range(1, output.turns + 1):
        messages = [m for m in output.messages if m.turn == turn]
        users = [m.content for m in messages if m.role == "user"]
        answers = [m.content for m in messages if m.role == "assistant"]
        said += [f"User: {users[-1]}"] if users else []
        said += [f"Assistant: {answers[-1]}"] if answers else []
    return output.model_copy(update={"data": {**output.data, "output": "\n---\n".join(said)}})


class Pair:
    """The side's own prompt and provider of the suite, read from its checkout `root`."""

    def __init__(self, config: PromptfooSystem, root: Path) -> None:
        relative = relative_posix(Path(config.config), root)
        if relative is None:
            raise InputError(
                f"promptfoo config {config.config!r} is outside the checkout {root}",
                key="system.config",
            )
        self.files = DiskFiles(root)
        self.source = read_promptfoo(self.files, relative)
        prompt, self.provider = self.source.pair(config.prompt, config.provider)
        display = prompt.file or f"{self.source.path}, prompt {prompt.name!r}"
        self.prompt = PromptfooPrompt(prompt.raw, display, self.source.env)
        where = self.source.path
        self.tools = load_ref(
            self.files, self.source.base, self.provider.config.get("tools"), where
        )

    def messages(self, variables: dict[str, Any]) -> tuple[str, list[Message]]:
        """The rendered prompt and the messages the provider reads in it."""
        rendered = self.prompt.render(variables)
        parse = anthropic_messages if self.provider.vendor == "anthropic" else openai_messages
        try:
            pairs = parse(rendered)
        except ChatPromptError as exc:
            raise SystemCallError(f"prompt {self.prompt.display}: {exc}") from None
        messages = [Message(role=role, content=content) for role, content in pairs]  # type: ignore[arg-type]
        return rendered, messages


def prompt_renderer(config: PromptfooSystem, root: Path) -> Callable[[dict[str, Any]], Any]:
    """What renders the side's prompt of the pair for a case's vars (as the provider reads it):
    an InputError when the config cannot be read, a GateError from the renderer when a case's
    vars do not render (`gate validate`'s preflight)."""
    return Pair(config, root).messages


class PromptfooChatSystem:
    kind = "promptfoo"

    def __init__(self, config: PromptfooSystem, env: SystemEnv) -> None:
        self.env = env
        self.pair = Pair(config, env.root)
        self.provider, self.tools = self.pair.provider, self.pair.tools
        if self.provider.vendor == "anthropic":
            self.format: ChatFormat = AnthropicMessagesFormat()
            self.params = anthropic_params(self.provider, self.tools)
        else:
            self.format = OpenAIChatFormat()
            self.params = openai_params(self.provider, self.tools)
        self.client = client_for(endpoint_for(self.provider, env.environ), config, env)
        seen = dict.fromkeys(self.pair.files.seen)
        self._files = [env.root / f for f in seen if (env.root / f).is_file()]

    def _output(self, reply: Reply, rendered: str) -> SystemOutput:
        output = to_output(reply, self.env, self.provider.model)
        data = {**output.data, "output": promptfoo_output(self.provider, reply), "prompt": rendered}
        if self.tools:
            data["tools"] = self.tools
        return output.model_copy(update={"data": data})

    def session(self, request: SystemRequest) -> ChatSession:
        """The case's conversation: the provider's tool loop (`gate.systems.tool_loop`). Under
        promptfoo's simulated user the rendered prompt is the system message, the simulated
        user opens, and the output is the conversation as promptfoo writes it."""
        agent = request.agent
        assert agent is not None
        rendered, messages = self.pair.messages(request.input)
        model = ChatModel(
            self.client,
            self.format,
            self.provider.model,
            self.params,
            lambda reply: self._output(reply, rendered),
        )
        if agent.user_first:
            messages = [Message(role="system", content=rendered)]
            model.finish = promptfoo_conversation
        deadline = time.monotonic() + request.timeout_s
        return ChatSession(model, agent, messages, request.repeat, deadline)

    def call(self, request: SystemRequest) -> SystemOutput:
        deadline = time.monotonic() + request.timeout_s
        rendered, messages = self.pair.messages(request.input)
        reply = self.client.chat(
            self.format,
            self.provider.model,
            messages,
            self.params,
            repeat=request.repeat,
            deadline=deadline,
        )
        return self._output(reply, rendered)

    def describe(self) -> dict[str, Any]:
        params = {k: v for k, v in self.params.items() if k != "tools"}
        described = chat_description(self.kind, self.client, self.provider.model, params)
        pair = self.pair
        where = {
            "config": pair.source.path,
            "prompt": pair.prompt.display,
            "provider": self.provider.name,
        }
        return {**described, "promptfoo": where}

    def files(self) -> list[Path]:
        return self._files

    def close(self) -> None:
        self.client.close()
