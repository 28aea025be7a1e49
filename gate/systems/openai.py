"""`openai` kind: chat completions on any OpenAI-compatible endpoint.

OpenAI, Azure deployments (`base_url` of the deployment, `api-key` header), vLLM, Ollama and
llama.cpp servers. `base_url` defaults to $OPENAI_BASE_URL, then the public endpoint; the key
comes from the environment variable named by `api_key_env` (default OPENAI_API_KEY).
"""

from __future__ import annotations

from gate.inputs.config import OpenAISystem
from gate.providers.endpoints import openai_endpoint
from gate.providers.wire_formats import OpenAIChatFormat
from gate.systems.base import SystemEnv
from gate.systems.chat import ChatSystem


class OpenAIChatSystem(ChatSystem):
    kind = "openai"

    def __init__(self, config: OpenAISystem, env: SystemEnv) -> None:
        endpoint = openai_endpoint(config.base_url, config.api_key_env, env.environ, "system")
        super().__init__(config, env, endpoint, OpenAIChatFormat())
