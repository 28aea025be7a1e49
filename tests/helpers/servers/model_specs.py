"""The chat APIs' own request descriptions, for the model server stand-in to check requests
against (vendored by tests/fixtures/refresh-model-apis.sh):

- OpenAI: `CreateChatCompletionRequest` of OpenAI's OpenAPI description (openai-openapi);
- Anthropic: `MessageCreateParams` as Anthropic's Python SDK types it.

Beside the shapes, the rules the APIs enforce on a conversation with tools, which no schema
states: OpenAI's `tool` message answers a `tool_call_id` of the assistant message just before
it, and every call of that message is answered before the next other message; Anthropic's
`tool_result` blocks come first in the user message right after the assistant's `tool_use`
blocks and answer each of their ids.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from referencing.jsonschema import DRAFT202012

try:
    from helpers.servers.openapi_schema import as_json_schema
except ImportError:  # the model server run alone, from its own folder
    from openapi_schema import as_json_schema  # type: ignore[no-redef]

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
OPENAI_URI = "urn:openai-openapi"


@cache
def _openai_validator() -> jsonschema.Draft202012Validator:
    doc = json.loads((FIXTURES / "openai-chat-openapi.json").read_text(encoding="utf-8"))
    resource = DRAFT202012.create_resource(as_json_schema(doc, OPENAI_URI))
    registry: referencing.Registry = referencing.Registry().with_resource(OPENAI_URI, resource)
    schema = {"$ref": f"{OPENAI_URI}#/components/schemas/CreateChatCompletionRequest"}
    return jsonschema.Draft202012Validator(schema, registry=registry)


@cache
def _anthropic_validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((FIXTURES / "anthropic-messages-request.json").read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: jsonschema.Draft202012Validator, body: Any) -> list[str]:
    found = []
    for error in validator.iter_errors(body):
        where = "/".join(str(p) for p in error.absolute_path) or "<root>"
        found.append(f"{where}: {error.message[:300]}")
    return found


def _openai_tool_rules(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    waiting: list[str] = []  # ids of the last assistant message's calls not answered yet
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            if message.get("tool_call_id") not in waiting:
                problems.append(
                    f"messages/{index}: a `tool` message must answer a tool_call_id of the "
                    "assistant message before it"
                )
            else:
                waiting.remove(message["tool_call_id"])
            continue
        if waiting:
            problems.append(
                f"messages/{index}: an assistant message with `tool_calls` must be followed by "
                f"tool messages answering each tool_call_id; not answered: {', '.join(waiting)}"
            )
        waiting = (
            [c.get("id") for c in message.get("tool_calls") or []] if role == "assistant" else []
        )
    return problems


def _blocks(message: Any) -> list[Any]:
    content = message.get("content")
    return content if isinstance(content, list) else []


def _anthropic_tool_rules(messages: list[Any]) -> list[str]:
    problems: list[str] = []
    for index, message in enumerate(messages):
        blocks = _blocks(message)
        uses = [b.get("id") for b in blocks if b.get("type") == "tool_use"]
        results = [b for b in blocks if b.get("type") == "tool_result"]
        if results and any(b.get("type") != "tool_result" for b in blocks[: len(results)]):
            problems.append(f"messages/{index}: tool_result blocks must come first")
        previous = messages[index - 1] if index else {}
        asked = [b.get("id") for b in _blocks(previous) if b.get("type") == "tool_use"]
        for block in results:
            if block.get("tool_use_id") not in asked:
                problems.append(
                    f"messages/{index}: tool_result for {block.get('tool_use_id')!r} has no "
                    "tool_use block in the previous message"
                )
        if uses:
            following = messages[index + 1] if index + 1 < len(messages) else None
            answered = {
                b.get("tool_use_id")
                for b in _blocks(following or {})
                if b.get("type") == "tool_result"
            }
            missing = [u for u in uses if u not in answered]
            if following is not None and missing:
                problems.append(
                    f"messages/{index}: tool_use ids were found without tool_result blocks "
                    f"immediately after: {', '.join(map(str, missing))}"
                )
        if len(set(uses)) != len(uses):
            problems.append(f"messages/{index}: tool_use ids must be unique")
    return problems


def openai_violations(body: Any) -> list[str]:
    """What OpenAI's API would refuse in this chat completions request."""
    found = _errors(_openai_validator(), body)
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        found += _openai_tool_rules(body["messages"])
    return found


def anthropic_violations(body: Any) -> list[str]:
    """What Anthropic's API would refuse in this Messages request."""
    found = _errors(_anthropic_validator(), body)
    if isinstance(body, dict) and isinstance(body.get("messages"), list):
        found += _anthropic_tool_rules(body["messages"])
    return found
