"""A support agent project for the agent tests and the benchmark: a chat model (the model
server's `agent_model`) that looks an order up and refunds it, scripted by its system prompt,
and cases that hold its tools' results, a second user turn and the checks of its path."""

from __future__ import annotations

import json
from typing import Any

import yaml

TOOL_NAMES = ("lookup_order", "issue_refund", "delete_account", "lookup_user")
KEY = "sk-agent-test-0123456789"

PLAN = {
    "lookup": 'PLAN 1: lookup_order {"order_id": "{{ order }}"}\n',
    "say1": "SAY 1: Order {{ order }} was delivered ($RESULTS). Shall I refund it?\n",
    "refund": 'PLAN 2: issue_refund {"order_id": "{{ order }}"}\n',
    "say2": "SAY 2: Done: your refund for {{ order }} is on its way ($RESULTS).\n",
}


def agent_prompt(**replace: str) -> str:
    """The system prompt: who the agent is, then its plan (`replace` swaps plan lines)."""
    plan = {**PLAN, **replace}
    return "You are the support agent of an online shop.\n" + "".join(plan.values())


def tool(name: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": f"The shop's {name.replace('_', ' ')}",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
            },
        },
    }


def model_config() -> str:
    tools = [tool(name) for name in TOOL_NAMES]
    config = {"model": "agent-1", "max_tokens": 200, "system": "prompts/agent.md", "tools": tools}
    return yaml.safe_dump(config, sort_keys=False)


REFUND = {
    "id": "refund-01",
    "task": "agent",
    "input": {"question": "I want a refund for order A17", "order": "A17"},
    "tools": {
        "lookup_order": {"returns": {"status": "delivered", "days_ago": 12}},
        "issue_refund": {"when": [{"arguments": {"order_id": "A17"}, "returns": {"ok": True}}]},
    },
    "max_steps": 8,
    "turns": [{"user": "Yes, please go ahead.", "expect": {"must_include": ["refund"]}}],
    "expect": {
        "trajectory": {
            "calls": [
                {"name": "lookup_order"},
                {"name": "issue_refund", "arguments": {"order_id": "A17"}},
            ],
            "match": "strict",
        },
        "forbidden_tools": ["delete_account"],
        "max_tool_calls": 3,
    },
}
STATUS = {
    "id": "status-02",
    "task": "agent",
    "input": {"question": "Where is my order B2?", "order": "B2"},
    "tools": {"lookup_order": {"returns": {"status": "delivered", "days_ago": 2}}},
    "expect": {
        "trajectory": {"calls": [{"name": "lookup_order", "arguments": {"order_id": "B2"}}]},
        "must_include": ["delivered"],
    },
}


def gate_yml(kind: str, base_url: str, **more: Any) -> str:
    system = {
        "kind": kind,
        "model_config": "config/model.yaml",
        "prompt": "prompts/ask.j2",
        "base_url": base_url,
        "api_key_env": "AGENT_KEY",
        "max_retries": 0,
    }
    config = {
        "watch": ["prompts/**", "config/**"],
        "threshold": 3,
        **more,
        "suites": [{"name": "support", "cases": "cases/support.jsonl", "system": system}],
    }
    return yaml.safe_dump(config, sort_keys=False)


def project_files(
    kind: str, base_url: str, cases: list[dict[str, Any]] | None = None
) -> dict[str, str]:
    rows = cases if cases is not None else [REFUND, STATUS]
    return {
        "gate.yml": gate_yml(kind, base_url),
        "config/model.yaml": model_config(),
        "prompts/agent.md": agent_prompt(),
        "prompts/ask.j2": "{{ question }}\n",
        "cases/support.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
    }


def base_url_of(server: Any, kind: str) -> str:
    return server.openai_base_url if kind == "openai" else server.url
