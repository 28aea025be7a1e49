"""promptfoo's providers as the gate runs them: `openai:<model>`, `openai:chat:<model>` and
`anthropic:messages:<model>`, with their `config`. Any other provider is an error naming it.

An entry is a string (`openai:gpt-4o-mini`), a mapping with `id` (and `label`, `config`,
`prompts`), or promptfoo's older `{id: {config: ...}}`. A list may also name a YAML or JSON
file of such entries (`file://providers.yaml`). The grading provider of `llm-rubric`
(`options.provider`, an assertion's `provider`) is read the same way.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gate.errors import InputError

Vendor = Literal["openai", "anthropic"]
_ID = re.compile(
    r"^(?:openai:(?:chat:)?(?P<openai>[^:]+(?::[^:]+)*)|anthropic:messages:(?P<claude>.+))$"
)
_OPENAI_KINDS = (
    "assistant", "completion", "embedding", "embeddings", "image", "moderation", "realtime",
    "responses", "transcription", "chatkit", "agents", "codex-sdk", "tts",
)  # fmt: skip
KEY_ENVS = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
SUPPORTED = "openai:<model>, openai:chat:<model> or anthropic:messages:<model>"
ENTRY_KEYS = {"id", "label", "config", "prompts", "delay"}
NOT_RUN = {
    "transform": "a JavaScript transform of the output",
    "env": "environment overrides per provider",
    "inputs": "multi-input targets",
}
# Config keys that change what promptfoo does and that the gate does not do.
UNSUPPORTED_CONFIG = {
    "apiKey": "a key written in the config: name its environment variable with `apiKeyEnvar`",
    "functionToolCallbacks": "JavaScript callbacks that answer tool calls",
    "mcp": "MCP servers",
    "transform": "a JavaScript transform of the output",
    "responseParser": "a JavaScript parser of the response",
}


class ProviderSpec(BaseModel):
    """One provider of a promptfoo config (or a grading provider)."""

    model_config = ConfigDict(frozen=True)

    id: str
    label: str | None = None
    vendor: Vendor
    model: str
    config: dict[str, Any] = Field(default_factory=dict)
    prompts: tuple[str, ...] | None = Field(None, description="the prompts it runs (labels)")

    @property
    def name(self) -> str:
        """How suites and comments name it: its label, else its id."""
        return self.label or self.id

    @property
    def key_env(self) -> str:
        """The environment variable its API key is read from."""
        named = self.config.get("apiKeyEnvar")
        return named if isinstance(named, str) and named else KEY_ENVS[self.vendor]

    @property
    def key(self) -> str:
        """What tells two graders apart: vendor, model and config."""
        return json.dumps([self.vendor, self.model, self.config], sort_keys=True, default=str)


def parse_id(provider_id: str, where: str | None = None) -> tuple[Vendor, str]:
    found = _ID.match(provider_id.strip())
    model = found and (found["openai"] or found["claude"])
    if found is None or not model or model.split(":")[0] in _OPENAI_KINDS:
        raise InputError(
            f"provider {provider_id!r} is not one the gate runs (it runs {SUPPORTED})",
            file=where,
        )
    return ("openai" if found["openai"] else "anthropic"), model


def _check_config(config: Any, provider_id: str, where: str | None) -> dict[str, Any]:
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise InputError(f"provider {provider_id!r}: `config` must be a mapping", file=where)
    for key, why in UNSUPPORTED_CONFIG.items():
        if key in config:
            raise InputError(
                f"provider {provider_id!r}: `config.{key}` ({why}) is not supported", file=where
            )
    return dict(config)


def parse_provider(entry: Any, where: str | None = None) -> ProviderSpec:
    """One provider entry; errors name `where` (the config file and line)."""
    if isinstance(entry, str):
        vendor, model = parse_id(entry, where)
        return ProviderSpec(id=entry, vendor=vendor, model=model)
    if not isinstance(entry, dict):
        raise InputError(f"a provider must be a string or a mapping, got {entry!r}", file=where)
    if "id" not in entry and len(entry) == 1:  # {id: {config, label, prompts}}
        ((provider_id, options),) = entry.items()
        options = options if isinstance(options, dict) else {}
        entry = {**options, "id": options.get("id", provider_id)}
    provider_id = entry.get("id")
    if not isinstance(provider_id, str):
        raise InputError("a provider mapping needs a string `id`", file=where)
    for key, why in NOT_RUN.items():
        if key in entry:
            raise InputError(
                f"provider {provider_id!r}: `{key}` ({why}) is not supported", file=where
            )
    unknown = sorted(set(entry) - ENTRY_KEYS - set(NOT_RUN))
    if unknown:
        raise InputError(f"provider {provider_id!r}: unknown key `{unknown[0]}`", file=where)
    vendor, model = parse_id(provider_id, where)
    prompts = entry.get("prompts")
    if prompts is not None and not (
        isinstance(prompts, list) and all(isinstance(p, str) for p in prompts)
    ):
        raise InputError(
            f"provider {provider_id!r}: `prompts` must be a list of labels", file=where
        )
    label = entry.get("label")
    return ProviderSpec(
        id=provider_id,
        label=label if isinstance(label, str) else None,
        vendor=vendor,
        model=model,
        config=_check_config(entry.get("config"), provider_id, where),
        prompts=tuple(prompts) if prompts is not None else None,
    )


def runs_prompt(provider: ProviderSpec, names: tuple[str, ...]) -> bool:
    """Whether the provider runs a prompt known by any of `names` (its label, id, file)."""
    if provider.prompts is None:
        return True
    return any(allowed_ref(ref, names) for ref in provider.prompts)


def allowed_ref(ref: str, names: tuple[str, ...]) -> bool:
    """promptfoo's prompt and provider filters: an exact name, `Group:*`, or a `Group` prefix
    of `Group:name`."""
    for name in names:
        if ref == name or (ref.endswith("*") and name.startswith(ref[:-1])):
            return True
        if name.startswith(ref + ":"):
            return True
    return False
