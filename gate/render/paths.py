"""An agent case's path, base against head, as a reader of the comment needs it: step by step
side by side, the first step where the paths part marked, each step's tool, arguments and
result; and for a conversation, each user turn's answer on both sides with that turn's failed
checks.

Pure: no I/O. Tool names, arguments, results, the user's and the model's words are untrusted:
they come out inert and cut through the output's `Style`, as outputs do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import JsonValue

from gate.compare.models import CaseChange, SideCase
from gate.compare.paths import TurnSide, parting_step
from gate.render.markdown import Md
from gate.render.style import Style
from gate.report.checks import (
    ForbiddenToolResult,
    MaxStepsResult,
    MaxToolCallsResult,
    TrajectoryResult,
    TurnEnding,
    TurnReachedResult,
)
from gate.report.output import Step

DASH = "—"
PART = "➡️"
SHOWN_TOOLS = 8  # tools named in a sentence about a path
PathResult = TrajectoryResult | ForbiddenToolResult | MaxToolCallsResult | MaxStepsResult
PATH_KINDS = (TrajectoryResult, ForbiddenToolResult, MaxToolCallsResult, MaxStepsResult)
ENDED: dict[TurnEnding, str] = {
    "max_steps": ", out of steps",
    "forbidden_tool": ", at a forbidden tool's call",
    "early": "",
}


def _value(value: JsonValue) -> str:
    return (
        value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    )


def step_cell(step: Step | None, style: Style, chars: int, *, turns: bool = False) -> Md:
    """`tool` `{arguments}` → `result`, each part escaped and cut (after its user turn, in a
    conversation)."""
    if step is None:
        return Md(DASH)
    arguments = style.code(_value(step.arguments), chars)
    result = style.code(_value(step.result), chars)
    if step.unanswered:
        result = style.emphasis("no result: a forbidden tool, the conversation ended here")
    turn = f"turn {step.turn}: " if turns else ""
    return Md(f"{turn}{style.strong(style.code(step.name, 60))} {arguments} → {result}")


def _calls(count: int) -> str:
    return f"{count} tool call{'' if count == 1 else 's'}"


@dataclass
class PathView:
    """Both paths, one row per step (`step`, `base`, `head`), and where they part."""

    rows: list[dict[str, Md]]
    intro: Md
    more: Md | None = None
    conversation: bool = False


def _intro(base: SideCase, head: SideCase, parted: int | None, style: Style) -> Md:
    counts = f"base {_calls(base.path_steps)}, head {head.path_steps}"
    if parted is None:
        return Md(f"The tool calls are the same ({counts}); the turns differ.")
    b = base.path[parted] if parted < len(base.path) else None
    h = head.path[parted] if parted < len(head.path) else None
    said = (
        f"base called {style.code(b.name, 60) if b else 'nothing more'}, "
        f"head called {style.code(h.name, 60) if h else 'nothing more'}"
    )
    if b is not None and h is not None and b.name == h.name:
        said = f"both called {style.code(b.name, 60)}, with other arguments"
    where = style.strong(f"step {parted + 1}")
    return Md(f"The paths part at {where} ({PART}): {said}. In all: {counts}.")


def path_view(case: CaseChange, style: Style, *, steps: int, chars: int) -> PathView | None:
    """Base and head side by side, for a case whose path changed."""
    base, head = case.base, case.head
    if case.heldout or base is None or head is None or not case.path_changed:
        return None
    parted = parting_step(base.path, head.path)
    longest = max(len(base.path), len(head.path))
    first = 0 if parted is None or parted < steps // 2 else min(parted - 1, longest - steps)
    shown = range(max(first, 0), min(max(first, 0) + steps, longest))
    conversation = bool(base.turns or head.turns)
    rows = []
    for index in shown:
        b = base.path[index] if index < len(base.path) else None
        h = head.path[index] if index < len(head.path) else None
        number = f"{PART} {style.strong(str(index + 1))}" if index == parted else str(index + 1)
        rows.append(
            {
                "step": Md(number),
                "base": step_cell(b, style, chars, turns=conversation),
                "head": step_cell(h, style, chars, turns=conversation),
            }
        )
    hidden = max(base.path_steps, head.path_steps) - len(rows)
    more = Md(f"…and {hidden:,} more steps in the full report") if hidden > 0 else None
    return PathView(rows, _intro(base, head, parted, style), more, conversation)


def _turn_cell(turn: TurnSide | None, style: Style, chars: int) -> Md:
    if turn is None or (turn.answer is None and turn.user is None):
        return Md(f"{DASH} not reached")
    mark = "❌" if turn.failed else "✅"
    said = style.text(turn.answer, chars) if turn.answer else style.emphasis("no answer")
    parts = [Md(f"{mark} {said}")]
    if turn.tool_calls:
        parts.append(Md(f"{turn.tool_calls} tool call{'s' if turn.tool_calls > 1 else ''}"))
    parts += [style.code(name, 60) for name in turn.failed[:3]]
    return style.lines(parts)


def turn_rows(case: CaseChange, style: Style, chars: int) -> list[dict[str, Md]]:
    """A conversation's user turns, each side's answer with that turn's failed checks."""
    base = {t.number: t for t in (case.base.turns if case.base else [])}
    head = {t.number: t for t in (case.head.turns if case.head else [])}
    if case.heldout or not (base or head):
        return []
    rows = []
    for number in sorted({*base, *head}):
        b, h = base.get(number), head.get(number)
        source = h or b
        said = source.user if source is not None else None
        rows.append(
            {
                "turn": Md(str(number)),
                "user": style.text(said, chars) if said else Md(DASH),
                "base": _turn_cell(b, style, chars),
                "head": _turn_cell(h, style, chars),
            }
        )
    return rows


@dataclass
class ChangedPath:
    """A case listed for its changed path, with both sides' paths and turns."""

    case: CaseChange
    path: PathView | None
    turns: list[dict[str, Md]] = field(default_factory=list)


# --- why a path check failed, from its parts ---------------------------------------------


def _names(tools: list[str], style: Style) -> Md:
    """`lookup_order` → `issue_refund`, cut after a few."""
    shown = " → ".join(style.code(t, 60) for t in tools[:SHOWN_TOOLS]) or "no tool call"
    more = f" → … ({len(tools) - SHOWN_TOOLS} more)" if len(tools) > SHOWN_TOOLS else ""
    return Md(shown + more)


def _trajectory(check: TrajectoryResult, side: str, style: Style) -> Md:
    match = style.code(check.match, 20)
    shape = f"expected {_names(check.expected, style)}, made {_names(check.made, style)}"
    if check.step is not None:
        where = style.strong(f"step {check.step}")
        return Md(
            f"the agent's path parts from the expected one ({match}) at {where} on {side}: {shape}"
        )
    differs = style.strong("does not match")
    return Md(f"the agent's path {differs} the expected one ({match}) on {side}: {shape}")


def path_reason(check: PathResult, side: str, style: Style) -> Md:
    """A path check's failure on `side`, in words made from its parts."""
    if isinstance(check, TrajectoryResult):
        return _trajectory(check, side, style)
    if isinstance(check, ForbiddenToolResult):
        times = f", {check.times} times" if check.times > 1 else ""
        where = f" at step {check.step}{times}" if check.step is not None else ""
        called = style.strong("called")
        return Md(f"the forbidden tool {style.code(check.tool, 60)} was {called} on {side}{where}")
    if isinstance(check, MaxToolCallsResult):
        made = style.strong(f"{check.made} tool calls")
        return Md(f"the path made {made} on {side}, more than the case's {check.limit}")
    turn = f"turn {check.turn}" if check.turn is not None else "a turn"
    out = style.strong("ran out of steps")
    return Md(f"{turn} {out} on {side}: {check.limit} model calls without an answer")


def unreached(check: TurnReachedResult, side: str, style: Style) -> Md:
    """A turn with its own checks that the conversation never got to."""
    never = style.strong("never reached")
    ended = f"it ended after turn {check.held}{ENDED[check.ended]}"
    return Md(f"the conversation {never} turn {check.turn} on {side}: {ended}")
