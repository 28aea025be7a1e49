"""Systems under test, built from their config by kind."""

from __future__ import annotations

import importlib
from typing import Any

from gate.errors import InputError
from gate.systems.base import System, SystemEnv, SystemRequest

__all__ = ["System", "SystemEnv", "SystemRequest", "build_system"]

# Imported lazily: provider kinds pull in HTTP machinery that offline runs never need.
FACTORIES: dict[str, str] = {
    "python": "gate.systems.python_system:PythonFunctionSystem",
    "command": "gate.systems.command:CommandProcessSystem",
    "replay": "gate.systems.replay:ReplayFileSystem",
    "openai": "gate.systems.openai:OpenAIChatSystem",
    "anthropic": "gate.systems.anthropic:AnthropicMessagesSystem",
    "http": "gate.systems.http:HttpServiceSystem",
    "promptfoo": "gate.promptfoo.systems:PromptfooChatSystem",
}


def build_system(config: Any, env: SystemEnv) -> System:
    if config.kind in ("inspect", "pytest"):  # their tasks and tests are the cases too
        raise InputError(
            f"a suite of another framework ({config.kind}) cannot answer cases of gate.yml: its "
            "measuring suite must be an inspect or pytest suite as well",
            key="system.kind",
        )
    if config.kind in ("openai", "anthropic"):
        from gate.systems.chat_provider import chat_config

        config = chat_config(config, env.root)
    module_name, _, cls_name = FACTORIES[config.kind].partition(":")
    factory = getattr(importlib.import_module(module_name), cls_name)
    system: System = factory(config, env)
    if config.kind == "replay":
        return system  # it gives the recorded conversation back as it was
    from gate.systems.conversation import ConversationSystem

    return ConversationSystem(system, env)
