"""A rendered promptfoo prompt as chat messages, the way each provider reads it. Pure.

OpenAI (`parseChatPrompt`): a JSON list of `{role, content}` messages, or YAML starting with
`- role:`, is those messages; anything else is one user message, unless it looks like JSON
(then it is an error, as in promptfoo). Anthropic (`parseMessages`): the same JSON list (its
system message goes to `system`); otherwise the text's lines, blank ones dropped, each
`system:`, `user:` or `assistant:` line starting a message of that role.
"""

from __future__ import annotations

import json
from typing import Any

from gate.promptfoo.inputs.js import js_string
from gate.promptfoo.inputs.yaml12 import load_yaml12

Messages = list[tuple[str, str]]  # (role, content)
ROLES = ("system", "user", "assistant", "developer")


class ChatPromptError(ValueError):
    """The rendered prompt cannot be sent as chat messages."""


def _looks_like_json(text: str) -> bool:
    """promptfoo's `looksLikeJson`."""
    t = text.strip()
    if t.startswith("{") and t.endswith("}"):
        return True
    if t.startswith("[") and t.endswith("]"):
        rest = t[1:].lstrip()
        return (
            not rest
            or rest[0] in '"{[-'
            or rest[0].isdigit()
            or rest.startswith(("true", "false", "null"))
        )
    return False


def _content(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(
        isinstance(p, dict) and p.get("type") == "text" for p in value
    ):
        return "".join(js_string(p.get("text", "")) for p in value)
    raise ChatPromptError("a message's content must be text (images and files are not sent here)")


def _messages(parsed: Any) -> Messages:
    if not isinstance(parsed, list):
        raise ChatPromptError("a JSON chat prompt must be a list of messages")
    out: Messages = []
    for message in parsed:
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise ChatPromptError(f"not a chat message: {str(message)[:80]}")
        role = "system" if message["role"] == "developer" else message["role"]
        out.append((role, _content(message.get("content", ""))))
    return out


def openai_messages(prompt: str) -> Messages:
    text = prompt.strip()
    if text.startswith("- role:"):
        try:
            return _messages(load_yaml12(prompt, "prompt")[0])
        except Exception as exc:
            raise ChatPromptError(f"the chat prompt is not valid YAML: {exc}") from None
    try:
        parsed = json.loads(prompt)
    except ValueError:
        if _looks_like_json(text):
            raise ChatPromptError("the chat prompt looks like JSON but does not parse") from None
        return [("user", prompt)]
    if isinstance(parsed, list):
        return _messages(parsed)
    return [("user", prompt)]


def anthropic_messages(prompt: str) -> Messages:
    try:
        parsed = json.loads(prompt)
    except ValueError:
        parsed = None
    if isinstance(parsed, list):
        listed = _messages(parsed)
        return [m for m in listed if m[0] == "system"][:1] + [m for m in listed if m[0] != "system"]
    lines = [line.strip() for line in prompt.split("\n") if line.strip()]
    system: Messages = []
    messages: Messages = []
    role: str | None = None
    content: list[str] = []

    def push() -> None:
        if role and content:
            messages.append((role, "\n".join(content)))

    for line in lines:
        if line.startswith("system:"):
            system = [("system", line[7:].strip())]
        elif line.startswith(("user:", "assistant:")):
            push()
            role, content = line.split(":", 1)[0], [line.split(":", 1)[1].strip()]
        elif role:
            content.append(line)
        else:
            role, content = "user", [line]
    push()
    if not messages and not system:
        messages.append(("user", prompt))
    return system + messages
