"""Agents through `gate run`: the simulated user, the team's own agent code, a loop out of
steps, the judge reading the whole transcript, replay and record, repeats: against the model
server stand-in (its scripted agent, requests checked against the vendors' descriptions)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.agents import KEY, REFUND, agent_prompt, base_url_of, project_files
from helpers.cli import Project, gate_here
from helpers.servers.model_server import Answer, ChatRequest, ModelServer, agent_model

PERSONA = "A customer who bought a lamp. SAYS: Yes, please go ahead."
SIMULATED = {
    "id": "sim-01",
    "task": "agent",
    "input": {"question": "I want a refund for order A17", "order": "A17"},
    "tools": REFUND["tools"],
    "user": {"persona": PERSONA, "goal": "get a refund for order A17", "max_turns": 4},
    "expect": {"trajectory": REFUND["expect"]["trajectory"], "must_include": ["refund"]},
}


def judging_agent(request: ChatRequest) -> str | Answer:
    """The agent, and a judge that scores 2 only when it saw the tools' results."""
    if "evaluation judge" in request.system:
        saw = "TOOL RESULT (lookup_order)" in request.user and "turn 2" in request.user
        scores = {"helpful": {"score": 2 if saw else 0, "reason": "saw the whole path"}}
        return json.dumps({"scores": scores})
    return agent_model(request)


MODEL_SERVER = {"responder": judging_agent, "spec_check": True}  # `server`'s options (conftest.py)


def project(root: Path, server: ModelServer, kind: str, cases: list[dict[str, Any]]) -> Project:
    p = Project(root)
    for name, text in project_files(kind, base_url_of(server, kind), cases).items():
        p.write(name, text)
    config = yaml.safe_load((root / "gate.yml").read_text())
    config["cache"] = {"dir": "cache"}
    model = {"kind": "openai", "base_url": server.openai_base_url, "api_key_env": "AGENT_KEY"}
    config["simulated_user"] = {**model, "model": "user-sim"}
    config["judge"] = {**model, "model": "judge-1"}
    p.config(config)
    return p


def gate_run(p: Project, *args: str, label: str = "run", code: int | None = None) -> list[dict]:
    done = gate_here(
        "run", "--out", "reports", "--label", label, *args, cwd=p.root, env={"AGENT_KEY": KEY}
    )
    assert done.code in ((0, 1) if code is None else (code,)), done.err
    _, lines, _ = p.read_report(label=label)
    return lines


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_simulated_user_holds_the_conversation_through_the_cache(
    tmp_path: Path, server: ModelServer, kind: str
) -> None:
    p = project(tmp_path, server, kind, [SIMULATED])
    (line,) = gate_run(p)
    assert line["status"] == "pass", line
    users = [m["content"] for m in line["messages"] if m["role"] == "user"]
    assert users == ["I want a refund for order A17", "Yes, please go ahead."]
    assert [(s["name"], s["turn"]) for s in line["trajectory"]] == [
        ("lookup_order", 1),
        ("issue_refund", 2),
    ]
    user_calls = [e for e in server.log if e.body.get("model") == "user-sim"]
    assert len(user_calls) == 2  # its next message, then ###STOP###
    assert "get a refund for order A17" in user_calls[0].body["messages"][0]["content"]
    summary = json.loads((p.root / "reports" / "run.summary.json").read_text())
    assert summary["http"]["simulated user"]["requests"] == 2
    calls = server.requests
    (again,) = gate_run(p, label="again")
    assert server.requests == calls and again["cached"]
    assert again["trajectory"] == line["trajectory"]
    assert server.violations == []


def test_a_simulated_user_needs_a_model_named_in_gate_yml(
    tmp_path: Path, server: ModelServer
) -> None:
    p = project(tmp_path, server, "openai", [SIMULATED])
    config = yaml.safe_load((p.root / "gate.yml").read_text())
    del config["simulated_user"]
    p.config(config)
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"AGENT_KEY": KEY})
    assert done.code == 2 and "Traceback" not in done.err
    assert "cases/support.jsonl:1" in done.err and "simulated_user" in done.err
    assert server.requests == 0


def test_the_simulated_users_key_is_checked_before_anything_runs(
    tmp_path: Path, server: ModelServer
) -> None:
    """Like the judge's: its API key, missing, is named at gate.yml's `simulated_user` line
    by gate run and gate validate alike, exit 2, no call made."""
    p = project(tmp_path, server, "openai", [SIMULATED])
    config = yaml.safe_load((p.root / "gate.yml").read_text())
    config["simulated_user"] = {"kind": "openai", "model": "gpt-4o-mini"}
    p.config(config)
    env = {"AGENT_KEY": KEY, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}
    for command in (["run", "--out", "reports"], ["validate"]):
        done = gate_here(*command, cwd=p.root, env=env)
        assert done.code == 2 and "Traceback" not in done.err, done.err
        assert "gate.yml" in done.err and "simulated_user" in done.err, done.err
        assert "OPENAI_API_KEY" in done.err
    assert server.requests == 0


def test_a_turn_out_of_steps_fails_and_says_where(tmp_path: Path, server: ModelServer) -> None:
    looping = agent_prompt(lookup='PLAN 1: lookup_order {"order_id": "{{ order }}"}\n' * 5)
    p = project(tmp_path, server, "anthropic", [{**REFUND, "max_steps": 3}])
    p.write("prompts/agent.md", looping)
    (line,) = gate_run(p)
    assert line["status"] == "fail" and line["finish_reason"] == "max_steps"
    failed = {c["name"]: c["detail"] for c in line["checks"] if not c["passed"]}
    assert failed["max_steps:3"].startswith("turn 1 made 3 model calls without an answer")
    assert failed["turn2:reached"] == "the conversation ended at max_steps, after turn 1"
    assert len(line["trajectory"]) == 3 and server.requests == 3
    assert server.violations == []


def test_the_judge_grades_the_whole_transcript(tmp_path: Path, server: ModelServer) -> None:
    case = {**REFUND, "expect": {**REFUND["expect"], "rubric": {"helpful": 2}}}
    p = project(tmp_path, server, "openai", [case])
    (line,) = gate_run(p)
    assert line["status"] == "pass", line["checks"]
    assert line["scores"] == {"helpful": 2}


def test_record_and_replay_keep_the_loop(tmp_path: Path, server: ModelServer) -> None:
    p = project(tmp_path, server, "openai", [REFUND])
    (first,) = gate_run(p, "--record", "recorded.jsonl", label="first")
    calls = server.requests
    config = yaml.safe_load((p.root / "gate.yml").read_text())
    config["suites"][0]["system"] = {"kind": "replay", "file": "recorded.jsonl"}
    p.config(config)
    (replayed,) = gate_run(p, label="replayed")
    assert server.requests == calls
    for key in ("status", "checks", "messages", "trajectory", "output", "finish_reason"):
        assert replayed[key] == first[key], key


def test_repeats_run_the_loop_again_each_time(tmp_path: Path, server: ModelServer) -> None:
    p = project(tmp_path, server, "openai", [REFUND])
    config = yaml.safe_load((p.root / "gate.yml").read_text())
    p.config({**config, "repeats": 3})
    (line,) = gate_run(p)
    assert line["repeats"] == 3 and line["pass_fraction"] == 1.0
    assert [len(a["trajectory"]) for a in line["attempts"]] == [2, 2, 2]
    assert server.requests == 3 * 4  # each run its own calls (the repeat is in the cache key)


OWN_AGENT = """
import json

def answer(inputs):
    said = inputs["messages"]
    if not said:
        return {"text": "Which order?"}
    order = said[-1]["content"]
    steps = [
        {"name": "lookup_order", "arguments": {"order_id": order}, "result": {"ok": True}},
        {"name": "issue_refund", "arguments": {"order_id": order}, "result": {"ok": True}},
    ]
    return {"text": f"Refunded {order}. I saw: " + json.dumps(said), "trajectory": steps}
"""


def own_project(root: Path, case: dict[str, Any]) -> Project:
    p = Project(root)
    p.write("app/agent.py", OWN_AGENT)
    p.cases("cases.jsonl", [case])
    p.config({"cases": "cases.jsonl", "system": {"kind": "python", "target": "app.agent:answer"}})
    return p


def test_own_code_gets_the_conversation_and_returns_its_path(tmp_path: Path) -> None:
    case = {
        "id": "own-01",
        "input": {"question": "I want a refund"},
        "turns": [{"user": "A17", "expect": {"must_include": ["Refunded A17"]}}],
        "expect": {
            "trajectory": {"calls": [{"name": "issue_refund", "arguments": {"order_id": "A17"}}],
                           "match": "superset"},
            "forbidden_tools": ["delete_account"],
            "max_tool_calls": 2,
        },
    }  # fmt: skip
    p = own_project(tmp_path, case)
    (line,) = gate_run(p)
    assert line["status"] == "pass", line["checks"]
    seen = [{"role": "assistant", "content": "Which order?"}, {"role": "user", "content": "A17"}]
    assert line["output"] == "Refunded A17. I saw: " + json.dumps(seen)
    assert [(s["name"], s["turn"]) for s in line["trajectory"]] == [
        ("lookup_order", 2),
        ("issue_refund", 2),
    ]


def test_own_code_is_not_given_tool_results_it_would_not_use(tmp_path: Path) -> None:
    case = {"id": "own-02", "input": {}, "tools": {"lookup_order": {"returns": 1}}}
    (line,) = gate_run(own_project(tmp_path, case), code=3)
    assert line["status"] == "error"
    assert (
        "gives results for lookup_order in `tools`, but a python system runs its own"
        in (line["error"])
    )
