"""An agent's path in the PR comment, as GitHub renders it (cmarkgfm): both paths side by
side, the step where they part, the turns; hostile tool names, arguments, results and user
turns stay inert and cut; a path that changed without changing the outcome is listed apart;
held-out cases show none of it; the terminal text shows the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.github_html import CONTROL, CTX, LIVE_MENTION, LIVE_REFERENCE, github_html, structure
from helpers.reports import HOSTILE_OUTPUTS, case, check, report

from gate.compare.pairing import compare
from gate.inputs.policy import Policy
from gate.render import render_comment
from gate.render.plain import PlainStyle
from gate.render.view import COMMENT_LIMITS, explained_cases
from gate.report.checks import (
    ForbiddenToolResult,
    MaxStepsResult,
    MaxToolCallsResult,
    TrajectoryResult,
    TurnCheckResult,
    TurnReachedResult,
)


def step(name: str, turn: int = 1, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "result": {"ok": True}, "turn": turn}


def messages(*turns: tuple[str, str]) -> list[dict[str, Any]]:
    said = []
    for number, (user, answer) in enumerate(turns, start=1):
        said += [
            {"role": "user", "content": user, "turn": number},
            {"role": "assistant", "content": answer, "turn": number},
        ]
    return said


BASE_PATH = [step("lookup_order", order_id="A17"), step("issue_refund", 2, order_id="A17")]
HEAD_PATH = [step("issue_refund", order_id="A17"), step("delete_account", 2, order_id="A17")]
TALK = messages(("I want a refund", "Shall I refund it?"), ("Yes please", "Done: refunded."))


def agent_case(id: str, status: str, path: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return case(id, status, task="agent", trajectory=path, **{"messages": TALK, **extra})


def comparison(tmp_path: Path, base: list[dict], head: list[dict]) -> Any:
    return compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())


def test_the_paths_side_by_side_and_where_they_part(tmp_path: Path) -> None:
    turn = TurnCheckResult.of(2, check("include:refund", False, "missing"))
    path = TrajectoryResult(
        kind="trajectory",
        name="trajectory:strict",
        passed=False,
        detail="step 1: called issue_refund, not lookup_order",
        match="strict",
        expected=["lookup_order", "issue_refund"],
        made=["issue_refund", "delete_account"],
        step=1,
    )
    failed = [path, turn]
    c = comparison(
        tmp_path,
        [agent_case("refund-01", "pass", BASE_PATH), case("other")],
        [agent_case("refund-01", "fail", HEAD_PATH, checks=failed), case("other")],
    )
    html = github_html(render_comment(c, CTX))
    part = html[html.index("The paths part at") :]
    assert part.startswith(
        "The paths part at <strong>step 1</strong> (➡️): base called <code>lookup_order</code>, "
        "head called <code>issue_refund</code>. In all: base 2 tool calls, head 2."
    )
    rows = part[: part.index("</table>")].split("<tr>")[2:]
    assert len(rows) == 2 and "➡️ <strong>1</strong>" in rows[0]
    assert "turn 1: <strong><code>lookup_order</code></strong>" in rows[0]
    assert "turn 2: <strong><code>delete_account</code></strong>" in rows[1]
    turns = html[html.index("<th>User</th>") :]
    assert "<td>Yes please</td>" in turns and "❌ Done: refunded." in turns
    assert "<code>include:refund</code>" in turns
    assert (
        "in turn 2, the required phrase <code>refund</code> is <strong>missing</strong> on head"
        in html
    )
    assert (
        "the agent's path parts from the expected one (<code>strict</code>) at <strong>step 1"
        "</strong> on head: expected <code>lookup_order</code> → <code>issue_refund</code>, "
        "made <code>issue_refund</code> → <code>delete_account</code>"
    ) in html


def test_a_path_that_changed_but_not_the_outcome_is_listed_apart(tmp_path: Path) -> None:
    longer = [*BASE_PATH, step("lookup_order", 2, order_id="A17")]
    c = comparison(
        tmp_path,
        [agent_case("refund-01", "pass", BASE_PATH)],
        [agent_case("refund-01", "pass", longer)],
    )
    assert c.verdict == "pass" and c.path_changed == ["refund-01"]
    html = github_html(render_comment(c, CTX))
    section = html[html.index("Agent paths that changed (1)") :]
    assert "The paths part at <strong>step 3</strong>" in section
    assert "base called nothing more, head called <code>lookup_order</code>" in section


def test_hostile_steps_and_turns_stay_inert_and_cut(tmp_path: Path) -> None:
    base, head = [], []
    for i, hostile in enumerate(HOSTILE_OUTPUTS):
        evil = {"name": hostile[:80], "arguments": {"q": hostile}, "result": hostile, "turn": 1}
        said = messages((hostile, hostile), (hostile, hostile))
        base.append(agent_case(f"c{i}", "pass", BASE_PATH, messages=said))
        head.append(agent_case(f"c{i}", "fail", [evil, *HEAD_PATH], messages=said))
    c = comparison(tmp_path, base, head)
    markdown = render_comment(c, CTX)
    parsed = structure(markdown)
    assert parsed.tags["img"] == parsed.tags["script"] == 0
    assert not [a for a in parsed.attributes if a.startswith("on")]
    assert not LIVE_MENTION.search("".join(parsed.scanned_text))
    assert not LIVE_REFERENCE.search("".join(parsed.scanned_text))
    assert not CONTROL.search("".join(parsed.all_text))
    assert parsed.tags["details"] == parsed.tags["summary"]
    # every path table kept its shape: three cells a row, whatever a step held
    for table in github_html(markdown).split("<th>Step</th>")[1:]:
        body = table[: table.index("</table>")]
        for row in body.split("<tr>")[1:]:
            assert row.count("<td") == 3, row[:200]
    assert len(markdown) < 65_536


def test_a_held_out_case_shows_no_path(tmp_path: Path) -> None:
    c = comparison(
        tmp_path,
        [agent_case("secret", "pass", BASE_PATH, heldout=True)],
        [agent_case("secret", "fail", HEAD_PATH, heldout=True)],
    )
    markdown = render_comment(c, CTX)
    assert "lookup" not in markdown and "delete_account" not in markdown
    assert "Yes please" not in markdown


def test_the_terminal_shows_the_paths_too(tmp_path: Path) -> None:
    c = comparison(
        tmp_path,
        [agent_case("refund-01", "pass", BASE_PATH)],
        [agent_case("refund-01", "fail", HEAD_PATH)],
    )
    (x,), _ = explained_cases(c, COMMENT_LIMITS, PlainStyle())
    assert x.path is not None
    assert x.path.intro.startswith("The paths part at step 1 (➡️): base called lookup_order")
    assert x.path.rows[0]["head"].startswith("turn 1: issue_refund")


def test_each_path_check_is_worded_from_its_parts(tmp_path: Path) -> None:
    """The comment's reasons read the results' parts: a forbidden tool's step and count, the
    most tool calls against the calls made, the turn out of steps, a turn never reached."""
    failed = [
        ForbiddenToolResult(
            kind="forbidden_tool",
            name="forbidden_tool:delete_account",
            passed=False,
            detail="step 2 called delete_account({})",
            tool="delete_account",
            step=2,
            times=3,
        ),
        MaxToolCallsResult(
            kind="max_tool_calls", name="max_tool_calls:3", passed=False, limit=3, made=6
        ),
        MaxStepsResult(kind="max_steps", name="max_steps:4", passed=False, limit=4, turn=1),
    ]
    unreached = [
        TurnReachedResult(
            kind="turn_reached",
            name="turn2:reached",
            passed=False,
            turn=2,
            held=1,
            ended="max_steps",
        ),
    ]
    c = comparison(
        tmp_path,
        [agent_case("refund-01", "pass", BASE_PATH), agent_case("sim-02", "pass", BASE_PATH)],
        [
            agent_case("refund-01", "fail", HEAD_PATH, checks=failed),
            agent_case("sim-02", "fail", HEAD_PATH, checks=unreached),
        ],
    )
    said = " ".join(github_html(render_comment(c, CTX)).split())
    for sentence in (
        "the forbidden tool <code>delete_account</code> was <strong>called</strong> on head at "
        "step 2, 3 times",
        "the path made <strong>6 tool calls</strong> on head, more than the case's 3",
        "turn 1 <strong>ran out of steps</strong> on head: 4 model calls without an answer",
        "the conversation <strong>never reached</strong> turn 2 on head: it ended after turn 1, "
        "out of steps",
    ):
        assert sentence in said
