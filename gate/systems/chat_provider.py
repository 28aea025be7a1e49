"""A model config may name its provider: then it, not the suite's `kind`, decides where a
chat side's calls go.

So a provider switch can be one file's change (`config/model.yaml`: `provider: anthropic`,
`model: claude-3-5-sonnet-latest`), the way teams think of it, and each side of a PR reads its
own model config: the base keeps calling the provider its model config names.
"""

from __future__ import annotations

from pathlib import Path

from gate.inputs.config import AnthropicSystem, OpenAISystem
from gate.providers.prompts import ModelSettings, load_model_settings

ChatConfig = OpenAISystem | AnthropicSystem
KINDS: dict[str, type[ChatConfig]] = {"openai": OpenAISystem, "anthropic": AnthropicSystem}


def _settings(config: ChatConfig, root: Path) -> ModelSettings | None:
    path = (root / config.model_config_file).resolve()
    if not path.is_file():
        return None  # the chat system itself reports the missing file
    settings, _ = load_model_settings(path, config.model_config_file)
    return settings


def chat_config(config: ChatConfig, root: Path) -> ChatConfig:
    """The suite's chat config with the model config's `provider`, `base_url` and
    `api_key_env` applied. Another provider than the suite's `kind` starts from that
    provider's defaults (its base URL and key variable), not the suite's."""
    settings = _settings(config, root)
    if settings is None:
        return config
    kind = settings.provider or config.kind
    fields = config.model_dump(by_alias=True)
    if kind != config.kind:
        fields = {k: v for k, v in fields.items() if k not in ("base_url", "api_key_env")}
    fields["kind"] = kind
    if settings.base_url:
        fields["base_url"] = settings.base_url
    if settings.api_key_env:
        fields["api_key_env"] = settings.api_key_env
    return KINDS[kind].model_validate(fields)
