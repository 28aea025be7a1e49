"""`anthropic` kind: the Messages API (`POST /v1/messages`).

`base_url` defaults to $ANTHROPIC_BASE_URL, then the public endpoint; the key comes from the
environment variable named by `api_key_env` (default ANTHROPIC_API_KEY). Tools in the model
config are written as OpenAI does and converted (`gate.providers.tool_formats`); one that has
no Anthropic equivalent stops the run before the first call, naming the model config's key.
"""

from __future__ import annotations

from gate.errors import InputError
from gate.inputs.config import AnthropicSystem
from gate.providers.endpoints import anthropic_endpoint
from gate.providers.prompts import ChatPrompt
from gate.providers.tool_formats import ToolFormatError, anthropic_tool_params
from gate.providers.wire_formats import AnthropicMessagesFormat
from gate.systems.base import SystemEnv
from gate.systems.chat import ChatSystem


def tools_problem(prompt: ChatPrompt, model_config: str) -> InputError | None:
    """Why the model config's tools cannot reach Anthropic, if they cannot."""
    try:
        anthropic_tool_params(prompt.settings.params())
    except ToolFormatError as exc:
        line = prompt.locator.line(exc.path)
        return InputError(exc.message, file=model_config, line=line, key=exc.key)
    return None


class AnthropicMessagesSystem(ChatSystem):
    kind = "anthropic"

    def __init__(self, config: AnthropicSystem, env: SystemEnv) -> None:
        endpoint = anthropic_endpoint(config.base_url, config.api_key_env, env.environ, "system")
        super().__init__(config, env, endpoint, AnthropicMessagesFormat())
        problem = tools_problem(self.prompt, config.model_config_file)
        if problem is not None:
            self.close()
            raise problem
