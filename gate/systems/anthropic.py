"""`anthropic` kind: the Messages API (`POST /v1/messages`).

`base_url` defaults to $ANTHROPIC_BASE_URL, then the public endpoint; the key comes from the
environment variable named by `api_key_env` (default ANTHROPIC_API_KEY).
"""

from __future__ import annotations

from gate.inputs.config import AnthropicSystem
from gate.providers.endpoints import anthropic_endpoint
from gate.providers.wire_formats import AnthropicMessagesFormat
from gate.systems.base import SystemEnv
from gate.systems.chat import ChatSystem


class AnthropicMessagesSystem(ChatSystem):
    kind = "anthropic"

    def __init__(self, config: AnthropicSystem, env: SystemEnv) -> None:
        endpoint = anthropic_endpoint(config.base_url, config.api_key_env, env.environ, "system")
        super().__init__(config, env, endpoint, AnthropicMessagesFormat())
