"""promptfoo's trajectory assertions and its simulated-user provider, in a promptfoo config
run by `gate run` against the model server stand-in: each assertion on the calls the agent
made, with promptfoo's semantics (`not-` included); what does not map onto the gate's path
refused by name; the simulated user opening the conversation and the output written as
promptfoo writes it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.agents import KEY, tool
from helpers.cli import Project, gate_here
from helpers.servers.model_server import ModelServer, agent_model

PROMPT = (
    "You are a support agent.\n"
    'PLAN 1: lookup_order {"order_id": "{{ order }}"} && issue_refund {"order_id": "{{ order }}", "amount": 3}\n'
    "{{ question }}\n"
)

# (assertion, passes on a path of lookup_order(A17) then issue_refund(A17, 3))
ASSERTIONS: list[tuple[dict[str, Any], bool]] = [
    ({"type": "trajectory:tool-used", "value": "lookup_order"}, True),
    ({"type": "trajectory:tool-used", "value": ["lookup_*", "issue_refund"]}, True),
    ({"type": "trajectory:tool-used", "value": ["lookup_order", "delete_account"]}, False),
    ({"type": "not-trajectory:tool-used", "value": ["delete_account", "LOOKUP_ORDER"]}, False),
    ({"type": "not-trajectory:tool-used", "value": "delete_account"}, True),
    ({"type": "trajectory:tool-used", "value": {"name": "lookup_order", "min": 2}}, False),
    ({"type": "trajectory:tool-sequence", "value": ["lookup_order", "issue_refund"]}, True),
    ({"type": "trajectory:tool-sequence", "value": ["issue_refund", "lookup_order"]}, False),
    ({"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["lookup_order"]}}, False),
    ({"type": "trajectory:tool-sequence", "value": {"mode": "exact", "steps": ["lookup_?rder", {"name": "issue_refund"}]}}, True),
    ({"type": "trajectory:step-count", "value": {"type": "tool", "max": 1}}, False),
    ({"type": "trajectory:step-count", "value": {"type": "tool", "pattern": "issue_*", "min": 1, "max": 1}}, True),
    ({"type": "trajectory:tool-args-match", "value": {"name": "issue_refund", "args": {"order_id": "A17"}}}, True),
    ({"type": "trajectory:tool-args-match", "value": {"name": "issue_refund", "args": {"order_id": "A17"}, "mode": "exact"}}, False),
    ({"type": "trajectory:tool-args-match", "value": {"name": "issue_refund", "args": {"order_id": "A17"}, "mode": "exact", "ignore": "amount"}}, True),
    ({"type": "trajectory:tool-args-match", "value": {"name": "issue_refund", "args": {"order_id": "A17", "amount": 3}, "mode": "exact", "defaults": {"amount": 3}}}, False),
]  # fmt: skip


MODEL_SERVER = {"responder": agent_model, "spec_check": True}  # `server`'s options (conftest.py)


def project(root: Path, server: ModelServer, promptfoo: dict[str, Any]) -> Project:
    p = Project(root)
    (root / ".git").mkdir()
    p.write("prompt.txt", PROMPT)
    p.write("promptfooconfig.yaml", yaml.safe_dump(promptfoo, sort_keys=False))
    model = {"kind": "openai", "base_url": server.openai_base_url, "api_key_env": "AGENT_KEY"}
    p.config(
        {
            "suites": [{"name": "agent", "promptfoo": "promptfooconfig.yaml"}],
            "simulated_user": {**model, "model": "user-sim"},
            "cache": {"dir": "cache"},
        }
    )
    return p


def provider(server: ModelServer) -> dict[str, Any]:
    tools = [tool(n) for n in ("lookup_order", "issue_refund", "delete_account")]
    config = {"apiBaseUrl": server.openai_base_url, "apiKeyEnvar": "AGENT_KEY", "tools": tools}
    return {"id": "openai:chat:agent-1", "config": config}


def run(p: Project, code: int | None = None) -> list[dict[str, Any]]:
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"AGENT_KEY": KEY})
    assert done.code in ((0, 1) if code is None else (code,)), done.err
    return [json.loads(x) for x in (p.root / "reports" / "run.jsonl").read_text().splitlines()[1:]]


def test_each_trajectory_assertion_as_promptfoo_decides_it(
    tmp_path: Path, server: ModelServer
) -> None:
    tests = [
        {"description": f"assertion {i}", "vars": {"question": "Refund A17", "order": "A17"}, "assert": [a]}
        for i, (a, _) in enumerate(ASSERTIONS)
    ]  # fmt: skip
    p = project(
        tmp_path,
        server,
        {"prompts": ["file://prompt.txt"], "providers": [provider(server)], "tests": tests},
    )
    lines = {line["id"]: line for line in run(p)}
    wrong = [
        (i, assertion, lines[f"assertion {i}"]["checks"])
        for i, (assertion, passes) in enumerate(ASSERTIONS)
        if (lines[f"assertion {i}"]["status"] == "pass") != passes
    ]
    assert not wrong
    missing = lines["assertion 2"]["checks"][0]["detail"]
    assert missing == (
        "Missing required tool(s): delete_account. "
        "Actual tools: tool:lookup_order, tool:issue_refund"
    )
    assert server.violations == []


@pytest.mark.parametrize(
    ("assertion", "said"),
    [
        ({"type": "trajectory:goal-success", "value": "refunded"}, "promptfoo's own grading prompt"),
        ({"type": "trajectory:step-count", "value": {"max": 3}}, "add `type: tool`"),
        ({"type": "trajectory:tool-used", "value": {"name": "pytest", "type": "command"}}, "command steps"),
        ({"type": "trajectory:tool-sequence", "value": []}, "at least one expected step"),
        ({"type": "trajectory:tool-args-match", "value": {"name": "x"}}, "args or arguments"),
    ],
)  # fmt: skip
def test_what_does_not_map_is_refused_by_name(
    tmp_path: Path, server: ModelServer, assertion: dict[str, Any], said: str
) -> None:
    tests = [{"vars": {"question": "q", "order": "A1"}, "assert": [assertion]}]
    p = project(
        tmp_path,
        server,
        {"prompts": ["file://prompt.txt"], "providers": [provider(server)], "tests": tests},
    )
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"AGENT_KEY": KEY})
    assert done.code == 2 and "Traceback" not in done.err, done.err
    assert "promptfooconfig.yaml" in done.err and assertion["type"] in done.err
    assert said in done.err
    assert server.requests == 0


SAY_PROMPT = (
    "You are a support agent.\nSAY 1: Which order is it?\nSAY 2: Refund for {{ order }} done.\n"
)


def test_the_simulated_user_provider_opens_and_the_output_is_promptfoos(
    tmp_path: Path, server: ModelServer
) -> None:
    config = {
        "prompts": ["file://prompt.txt"],
        "providers": [provider(server)],
        "defaultTest": {"provider": {"id": "promptfoo:simulated-user", "config": {"maxTurns": 4}}},
        "tests": [
            {
                "vars": {
                    "order": "A17",
                    "instructions": "You want a refund for {{ order }}.\nSAYS: I want a refund.\nSAYS: Order {{ order }}.",
                },
                "assert": [{"type": "contains", "value": "Assistant: Refund for A17 done."}],
            }
        ],
    }  # fmt: skip
    p = project(tmp_path, server, config)
    p.write("prompt.txt", SAY_PROMPT)
    (line,) = run(p)
    assert line["status"] == "pass", line["checks"]
    assert line["output"] == "Refund for A17 done."
    roles = [(m["role"], m["turn"]) for m in line["messages"]]
    assert roles == [("system", 1), ("user", 1), ("assistant", 1), ("user", 2), ("assistant", 2)]
    agent_requests = [e.body for e in server.log if e.body.get("model") == "agent-1"]
    assert agent_requests[0]["messages"][0] == {
        "role": "system",
        "content": SAY_PROMPT.replace("{{ order }}", "A17").strip(),
    }
    user_requests = [e.body for e in server.log if e.body.get("model") == "user-sim"]
    assert len(user_requests) == 3  # two messages, then ###STOP###
    assert "You want a refund for A17." in user_requests[0]["messages"][0]["content"]
    assert server.violations == []


def test_the_simulated_user_provider_refuses_what_it_cannot_do(
    tmp_path: Path, server: ModelServer
) -> None:
    seeded = {
        "id": "promptfoo:simulated-user",
        "config": {"initialMessages": [{"role": "user", "content": "hi"}]},
    }
    config = {"prompts": ["file://prompt.txt"], "providers": [provider(server)], "tests": [{"vars": {"instructions": "x"}, "provider": seeded}]}  # fmt: skip
    p = project(tmp_path, server, config)
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"AGENT_KEY": KEY})
    assert done.code == 2 and "`provider.config.initialMessages`" in done.err, done.err
    other = {"id": "openai:gpt-4o"}
    config["tests"] = [{"vars": {"instructions": "x"}, "provider": other}]
    p.write("promptfooconfig.yaml", yaml.safe_dump(config))
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"AGENT_KEY": KEY})
    assert done.code == 2 and "is not supported (but `promptfoo:simulated-user`)" in done.err, (
        done.err
    )
