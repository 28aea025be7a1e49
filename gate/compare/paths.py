"""An agent's path and turns, as a comparison keeps them for the comment: each step's tool,
arguments and result (long values cut), and for a conversation each user turn's message,
answer and the checks of that turn that failed. Pure.

Two paths differ when their calls differ (tool or arguments, in order); the results come from
the case, so the calls say where the paths part.
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field, JsonValue

from gate.report.checks import TurnCheckResult, TurnReachedResult
from gate.report.models import CaseResult
from gate.report.output import Step

KEPT_STEPS = 50
VALUE_CHARS = 400
TEXT_CHARS = 600


class TurnSide(BaseModel):
    """One user turn of a conversation on one side."""

    number: int
    user: str | None = Field(None, description="what the user said (cut)")
    answer: str | None = Field(None, description="the system's answer (cut)")
    tool_calls: int = 0
    failed: list[str] = Field(
        default_factory=list, description="the names of this turn's own checks that failed"
    )


def _cut_text(text: str | None, limit: int = TEXT_CHARS) -> str | None:
    return text if text is None or len(text) <= limit else text[: limit - 1] + "…"


def _cut_value(value: JsonValue) -> JsonValue:
    """A value as it is, or, when its JSON is long, that JSON cut (shown, never parsed)."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value if len(text) <= VALUE_CHARS else text[: VALUE_CHARS - 1] + "…"


def kept_path(steps: list[Step]) -> list[Step]:
    return [
        s.model_copy(update={"arguments": _cut_value(s.arguments), "result": _cut_value(s.result)})
        for s in steps[:KEPT_STEPS]
    ]


def call_key(step: Step) -> tuple[str, str]:
    return step.name, json.dumps(step.arguments, ensure_ascii=False, sort_keys=True)


def parting_step(base: list[Step], head: list[Step]) -> int | None:
    """The index of the first step where two paths differ; None when they are the same."""
    for index, (b, h) in enumerate(zip(base, head, strict=False)):
        if call_key(b) != call_key(h):
            return index
    return None if len(base) == len(head) else min(len(base), len(head))


def path_changed(base: CaseResult, head: CaseResult) -> bool:
    """The agent took another path on head (or held another number of turns)."""
    if not (base.trajectory or head.trajectory or base.messages or head.messages):
        return False
    turns = (_turn_count(base), _turn_count(head))
    return turns[0] != turns[1] or parting_step(base.trajectory, head.trajectory) is not None


def _turn_count(result: CaseResult) -> int:
    return max((m.turn for m in result.messages), default=1)


def _turn_failures(result: CaseResult) -> dict[int, list[str]]:
    """The failed checks of each scripted turn, by turn: its own checks' names, and
    `reached` for a turn the conversation never got to."""
    failed: dict[int, list[str]] = {}
    for check in result.checks:
        if isinstance(check, TurnCheckResult | TurnReachedResult):
            names = failed.setdefault(check.turn, [])
            if isinstance(check, TurnReachedResult):
                names.append("reached")
            elif check.passed is False:
                names.append(check.check.name)
    return failed


def turn_sides(result: CaseResult) -> list[TurnSide]:
    """Each user turn of a conversation (none for a one-turn case)."""
    failed = _turn_failures(result)
    count = max(_turn_count(result), *failed) if failed else _turn_count(result)
    if count < 2:
        return []
    sides = []
    for number in range(1, count + 1):
        said = [m for m in result.messages if m.turn == number]
        users = [m.content for m in said if m.role == "user"]
        answers = [m.content for m in said if m.role == "assistant"]
        sides.append(
            TurnSide(
                number=number,
                user=_cut_text(users[-1] if users else None),
                answer=_cut_text(answers[-1] if answers else None),
                tool_calls=sum(1 for s in result.trajectory if s.turn == number),
                failed=failed.get(number, []),
            )
        )
    return sides


def path_details(result: CaseResult) -> dict[str, object]:
    """What `SideCase` keeps of an agent case's path and turns (`path`, `path_steps`,
    `turns`); nothing for a one-answer case."""
    if not (result.trajectory or result.messages):
        return {}
    return {
        "path": kept_path(result.trajectory),
        "path_steps": len(result.trajectory),
        "turns": turn_sides(result),
    }
