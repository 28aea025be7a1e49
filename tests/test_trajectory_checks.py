"""The path checks and the tool results of a case, as pure functions: each match mode on a
table of paths, their relations as properties (Hypothesis), the result a `when` picks, and the
wire messages that carry results back, checked against the vendors' own request descriptions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.servers.model_specs import anthropic_violations, openai_violations
from hypothesis import given, settings
from hypothesis import strategies as st

from gate.checks import CheckContext, plan_checks
from gate.checks.trajectory import parting, worded
from gate.inputs.agent import ToolResults, UnansweredCall, tool_result
from gate.inputs.cases import Case, parse_case
from gate.inputs.expect import Expect, ExpectedToolCall, ExpectedTrajectory
from gate.providers.wire_formats import AnthropicMessagesFormat, Message, OpenAIChatFormat
from gate.report.output import Step, SystemOutput, ToolCall


def trajectory_problem(expected: ExpectedTrajectory, made: list[ToolCall]) -> str | None:
    """Why the path does not match, as the check's detail begins; None when it does."""
    return worded(parting(expected, made))


def calls(*names: str, **arguments: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall(name=n, arguments=arguments.get(n, {})) for n in names]


def want(match: str, *names: str, **arguments: dict[str, Any]) -> ExpectedTrajectory:
    expected = [ExpectedToolCall(name=n, arguments=arguments.get(n)) for n in names]
    return ExpectedTrajectory(calls=expected, match=match)  # type: ignore[arg-type]


# (match, expected names, made names, passes)
TABLE = [
    ("strict", ("a", "b"), ("a", "b"), True),
    ("strict", ("a", "b"), ("b", "a"), False),
    ("strict", ("a", "b"), ("a",), False),
    ("strict", ("a", "b"), ("a", "b", "c"), False),
    ("unordered", ("a", "b"), ("b", "a"), True),
    ("unordered", ("a", "b"), ("a", "b", "b"), False),
    ("unordered", ("a", "a"), ("a",), False),
    ("subset", ("a", "b", "c"), ("c", "a"), True),
    ("subset", ("a", "b"), ("a", "d"), False),
    ("subset", ("a",), ("a", "a"), False),
    ("subset", ("a",), (), True),
    ("superset", ("a", "b"), ("x", "b", "y", "a"), True),
    ("superset", ("a", "b"), ("a", "x"), False),
    ("superset", ("a", "a"), ("a", "x", "a"), True),
]


@pytest.mark.parametrize(("match", "expected", "made", "passes"), TABLE)
def test_each_match_mode(
    match: str, expected: tuple[str, ...], made: tuple[str, ...], passes: bool
) -> None:
    problem = trajectory_problem(want(match, *expected), calls(*made))
    assert (problem is None) == passes, problem


def test_arguments_match_as_tool_calls_match_them() -> None:
    expected = want("strict", "issue_refund", issue_refund={"order_id": "A17"})
    made = calls("issue_refund", issue_refund={"order_id": "A17", "amount": 3})
    assert trajectory_problem(expected, made) is None
    other = calls("issue_refund", issue_refund={"order_id": "B2"})
    problem = trajectory_problem(expected, other)
    assert problem == 'step 1: order_id is "B2", expected "A17" (arguments {"order_id": "B2"})'


NAMES = st.lists(st.sampled_from("abcd"), max_size=5)


@settings(max_examples=300, deadline=None)
@given(expected=NAMES, made=NAMES)
def test_the_modes_relate_as_their_definitions_say(expected: list[str], made: list[str]) -> None:
    result = {
        match: trajectory_problem(want(match, *expected), calls(*made)) is None
        for match in ("strict", "unordered", "subset", "superset")
    }
    assert result["unordered"] == (result["subset"] and result["superset"])
    assert result["unordered"] == (sorted(expected) == sorted(made))
    assert result["strict"] == (expected == made)
    assert not result["strict"] or result["unordered"]


def test_the_checks_read_the_path_and_name_what_failed() -> None:
    expect = Expect.model_validate(
        {
            "trajectory": {"calls": [{"name": "lookup_order"}, {"name": "issue_refund"}]},
            "forbidden_tools": "delete_account",
            "max_tool_calls": 2,
        }
    )
    path = [
        Step(name=n, arguments={"order_id": "A17"})
        for n in ("lookup_order", "delete_account", "issue_refund")
    ]
    output = SystemOutput(text="done", trajectory=path)
    case = Case(id="c", task="t", expect=expect)
    results = {r.name: r for r in plan_checks(expect).run(output, case, CheckContext())}
    assert results["trajectory:strict"].detail.startswith(
        "step 2: called delete_account, not issue_refund (expected lookup_order → issue_refund"
    )
    assert results["forbidden_tool:delete_account"].detail == (
        'step 2 called delete_account({"order_id": "A17"})'
    )
    assert results["max_tool_calls:2"].passed is False


def test_a_result_by_arguments_the_first_that_matches_then_otherwise() -> None:
    tools = {
        "refund": ToolResults.model_validate(
            {
                "when": [
                    {"arguments": {"order_id": "A17"}, "returns": {"ok": True}},
                    {"arguments": {}, "returns": {"ok": False}},
                ]
            }
        ),
        "lookup": ToolResults.model_validate(
            {"when": [{"arguments": {"id": 1}, "returns": 1}], "otherwise": None}
        ),
    }
    assert tool_result(tools, "refund", {"order_id": "A17", "why": "late"}) == {"ok": True}
    assert tool_result(tools, "refund", {"order_id": "B2"}) == {"ok": False}
    assert tool_result(tools, "lookup", {"id": 2}) is None  # otherwise: null is a result
    with pytest.raises(
        UnansweredCall, match=r"called delete\(\{\"x\": 1\}\).*no result for delete"
    ):
        tool_result(tools, "delete", {"x": 1})


def test_results_go_back_in_each_vendors_format() -> None:
    """The next request after a reply with two tool calls, as each API takes it."""
    opening = [
        Message(role="system", content="Be brief."),
        Message(role="user", content="Refund A17"),
    ]
    openai = OpenAIChatFormat()
    reply = openai.parse(
        {
            "choices": [
                {
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "refusal": None,
                        "annotations": [],
                        "tool_calls": [
                            {
                                "id": "call_a",
                                "type": "function",
                                "function": {"name": "lookup", "arguments": '{"id": "A17"}'},
                            },
                            {
                                "id": "call_b",
                                "type": "function",
                                "function": {"name": "refund", "arguments": '{ "id":"A17" }'},
                            },
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        }
    )
    wire = [
        *opening,
        openai.assistant_message(reply),
        *openai.tool_messages(reply, ['{"ok": true}', "done"]),
    ]
    body = openai.body("gpt-4o", wire, {"tools": []})
    assert openai_violations(body) == []
    assert body["messages"][2]["tool_calls"][1]["function"]["arguments"] == '{ "id":"A17" }'
    assert [m.get("tool_call_id") for m in body["messages"][3:]] == ["call_a", "call_b"]

    anthropic = AnthropicMessagesFormat()
    reply = anthropic.parse(
        {
            "content": [
                {"type": "thinking", "thinking": "look it up", "signature": "sig"},
                {"type": "text", "text": "Let me check.", "citations": None},
                {"type": "tool_use", "id": "toolu_a", "name": "lookup", "input": {"id": "A17"}},
                {"type": "tool_use", "id": "toolu_b", "name": "refund", "input": {"id": "A17"}},
            ],
            "stop_reason": "tool_use",
        }
    )
    wire = [
        *opening,
        anthropic.assistant_message(reply),
        *anthropic.tool_messages(reply, ["1", "2"]),
    ]
    body = anthropic.body("claude", wire, {})
    assert anthropic_violations(body) == []
    assert body["system"] == "Be brief." and body["messages"][1]["content"][0]["signature"] == "sig"
    results = body["messages"][2]["content"]
    assert [(b["type"], b["tool_use_id"]) for b in results] == [
        ("tool_result", "toolu_a"),
        ("tool_result", "toolu_b"),
    ]


def test_the_stand_in_refuses_what_the_apis_refuse() -> None:
    """The rules the checks above rely on: a result answering no call, a call left unanswered."""
    stray = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "x"},
            {"role": "tool", "tool_call_id": "c", "content": "1"},
        ],
    }
    assert openai_violations(stray)
    unanswered = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "x"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "go on"},
        ],
    }
    assert anthropic_violations(unanswered)


def test_the_cases_of_docs_agents_md_load() -> None:
    import json
    import re

    from helpers.cli import REPO

    page = (REPO / "docs" / "agents.md").read_text()
    blocks = [
        b
        for b in re.findall(r"```json\n(.*?)```", page, re.DOTALL)
        if b.startswith('{"id"') and '"input"' in b
    ]
    assert len(blocks) == 2
    for block in blocks:
        case = parse_case(json.loads(block), file=Path("agents.md"), display="agents.md", line=1)
        assert case.agent is not None and (case.agent.tools or case.agent.user)


def test_the_path_checks_results_read_back_typed_from_a_report_line() -> None:
    """Each path check's result, and a turn's own check, is a kind with its parts: written to
    a report line and read back, the comment reads the same parts (never the name)."""
    from gate.checks import plan_case
    from gate.report.checks import (
        ForbiddenToolResult,
        MaxStepsResult,
        MaxToolCallsResult,
        PhraseResult,
        TrajectoryResult,
        TurnCheckResult,
        TurnReachedResult,
    )
    from gate.report.models import CaseResult
    from gate.report.output import TranscriptMessage

    case = parse_case(
        {
            "id": "c",
            "input": {"question": "refund A17"},
            "tools": {"lookup_order": {"returns": 1}, "delete_account": {"returns": 2}},
            "turns": [
                {"user": "go on", "expect": {"must_include": ["refund"]}},
                {"user": "thanks", "expect": {"must_include": ["bye"]}},
            ],
            "expect": {
                "trajectory": {"calls": [{"name": "lookup_order"}, {"name": "issue_refund"}]},
                "forbidden_tools": ["delete_account"],
                "max_tool_calls": 1,
            },
        },
        file=Path("cases.jsonl"),
        display="cases.jsonl",
        line=1,
    )
    said = [
        TranscriptMessage(role="user", content="refund A17"),
        TranscriptMessage(role="assistant", content="looked", turn=1),
        TranscriptMessage(role="user", content="go on", turn=2),
        TranscriptMessage(role="assistant", content="deleted", turn=2),
    ]
    path = [Step(name="lookup_order"), Step(name="delete_account", turn=2)]
    output = SystemOutput(text="deleted", messages=said, trajectory=path, finish_reason="stop")
    results = plan_case(case).run(output, case, CheckContext())
    line = CaseResult(id="c", task="t", status="fail", passed=False, checks=results)
    back = {c.name: c for c in CaseResult.model_validate_json(line.model_dump_json()).checks}
    trajectory = back["trajectory:strict"]
    assert isinstance(trajectory, TrajectoryResult) and trajectory.step == 2
    assert (trajectory.expected, trajectory.made) == (
        ["lookup_order", "issue_refund"],
        ["lookup_order", "delete_account"],
    )
    forbidden = back["forbidden_tool:delete_account"]
    assert isinstance(forbidden, ForbiddenToolResult) and (forbidden.step, forbidden.times) == (
        2,
        1,
    )
    most = back["max_tool_calls:1"]
    assert isinstance(most, MaxToolCallsResult) and (most.limit, most.made) == (1, 2)
    steps = back["max_steps:10"]
    assert isinstance(steps, MaxStepsResult) and steps.passed and steps.turn is None
    turn = back["turn2:include:refund"]
    assert isinstance(turn, TurnCheckResult) and turn.turn == 2 and turn.passed is False
    assert isinstance(turn.check, PhraseResult) and turn.check.phrase == "refund"
    never = back["turn3:reached"]
    assert isinstance(never, TurnReachedResult)
    assert (never.turn, never.held, never.ended) == (3, 2, "early")


def test_an_agent_case_reaches_a_sides_runner_whole() -> None:
    """A side's runner reads its cases back from JSON (`SideSpec`): a tool's result keeps
    what the case gave (`returns: null` is a result; `when` without `returns` is not)."""
    from gate.inputs.agent import AgentCase

    tools = {
        "a": ToolResults.model_validate({"returns": None}),
        "b": ToolResults.model_validate({"when": [{"arguments": {"x": 1}, "returns": 2}]}),
        "c": ToolResults.model_validate(
            {"when": [{"arguments": {}, "returns": 3}], "otherwise": 4}
        ),
    }
    agent = AgentCase(tools=tools, max_steps=3)
    back = AgentCase.model_validate_json(agent.model_dump_json())
    assert back == agent
    assert tool_result(back.tools, "a", {}) is None
    assert tool_result(back.tools, "b", {"x": 1}) == 2
    with pytest.raises(UnansweredCall):
        tool_result(back.tools, "b", {"x": 5})
