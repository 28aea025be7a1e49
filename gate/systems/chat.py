"""What the `openai` and `anthropic` kinds share: prompt files in, one chat call per case out."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from gate.inputs.config import AnthropicSystem, JudgeConfig, OpenAISystem
from gate.providers.cache import ResponseCache
from gate.providers.client import ConnectionSettings, ProviderClient, open_client
from gate.providers.endpoints import anthropic_endpoint, openai_endpoint, service_endpoint
from gate.providers.pricing import cost_usd
from gate.providers.prompts import ChatPrompt, provider_problem
from gate.providers.transport import Endpoint
from gate.providers.wire_formats import (
    AnthropicMessagesFormat,
    ChatFormat,
    OpenAIChatFormat,
    Reply,
    ServiceChatFormat,
)
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest
from gate.systems.tool_loop import ChatModel, ChatSession


def client_for(
    endpoint: Endpoint, settings: ConnectionSettings, env: SystemEnv, role: str = "system"
) -> ProviderClient:
    """A provider client with the run's cache, environment and pool size; its HTTP counts
    are shown in the run's progress and summary under `role`."""
    cache = ResponseCache(env.cache_dir, enabled=env.use_cache)
    client = open_client(
        endpoint, settings, cache=cache, environ=env.environ, concurrency=env.concurrency
    )
    env.traffic[role] = client.transport.stats
    return client


def model_endpoint(config: JudgeConfig, env: SystemEnv, role: str) -> tuple[Endpoint, ChatFormat]:
    """Where a model of the instrument (the judge, the simulated user) is asked, and how."""
    if config.kind == "openai":
        endpoint = openai_endpoint(config.base_url, config.api_key_env, env.environ, role)
        return endpoint, OpenAIChatFormat()
    if config.kind == "anthropic":
        endpoint = anthropic_endpoint(config.base_url, config.api_key_env, env.environ, role)
        return endpoint, AnthropicMessagesFormat()
    assert config.url is not None  # JudgeConfig's validator requires it for `http`
    return service_endpoint(config.url, config.headers, env.environ, role), ServiceChatFormat()


def to_output(reply: Reply, env: SystemEnv, requested_model: str | None) -> SystemOutput:
    """A reply as the runner sees it; the cost is what the call costs (cached or not)."""
    return SystemOutput(
        text=reply.text,
        tool_calls=reply.tool_calls,
        finish_reason=reply.finish_reason,
        usage=reply.usage,
        data=reply.data,
        cached=reply.cached,
        latency_ms=reply.latency_ms,
        cost_usd=cost_usd(env.prices, reply.usage, requested_model, reply.model),
        model=reply.model or requested_model,
    )


def chat_description(
    kind: str, client: ProviderClient, model: str, params: dict[str, Any]
) -> dict[str, Any]:
    """A chat system as the report's metadata shows it: never a secret."""
    endpoint = client.endpoint
    return {
        "kind": kind,
        "provider": endpoint.provider,
        "model": model,
        "base_url": endpoint.display_url,
        "params": params,
    }


class ChatSystem:
    kind = "chat"

    def __init__(
        self,
        config: OpenAISystem | AnthropicSystem,
        env: SystemEnv,
        endpoint: Endpoint,
        fmt: ChatFormat,
    ) -> None:
        self.env = env
        self.prompt = ChatPrompt(env.root, config.model_config_file, config.prompt, "system")
        self.settings = self.prompt.settings
        problem = provider_problem(
            self.settings, self.prompt.locator, self.kind, config.model_config_file
        )
        if problem is not None:
            raise problem
        self.format = fmt
        self.client = client_for(endpoint, config, env)

    def session(self, request: SystemRequest) -> ChatSession:
        """The case's conversation: its tool loop, turn by turn (`gate.systems.tool_loop`)."""
        assert request.agent is not None
        model = ChatModel(
            self.client,
            self.format,
            self.settings.model,
            self.settings.params(),
            lambda reply: to_output(reply, self.env, self.settings.model),
        )
        return ChatSession(
            model,
            request.agent,
            self.prompt.render(request.input),
            request.repeat,
            time.monotonic() + request.timeout_s,
        )

    def call(self, request: SystemRequest) -> SystemOutput:
        deadline = time.monotonic() + request.timeout_s
        messages = self.prompt.render(request.input)
        reply = self.client.chat(
            self.format,
            self.settings.model,
            messages,
            self.settings.params(),
            repeat=request.repeat,
            deadline=deadline,
        )
        return to_output(reply, self.env, self.settings.model)

    def describe(self) -> dict[str, Any]:
        return chat_description(self.kind, self.client, self.settings.model, self.settings.params())

    def files(self) -> list[Path]:
        return list(self.prompt.files)

    def close(self) -> None:
        self.client.close()
