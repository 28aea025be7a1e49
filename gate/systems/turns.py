"""What one user turn of a conversation makes, and the session that takes the turns
(`gate.systems.conversation` drives them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from gate.report.output import Step, SystemOutput, TranscriptMessage


@dataclass
class TurnResult:
    """What one user turn made: the answer, what it added to the transcript (its user message
    first), the tools it called and each model call's output (for usage, cost and latency)."""

    text: str
    finish_reason: str | None = None
    messages: list[TranscriptMessage] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    outputs: list[SystemOutput] = field(default_factory=list)
    # why the conversation ends with this turn: `max_steps` (it still called a tool), or
    # `forbidden_tool` (it called a forbidden tool the case gives no result for)
    stopped: str | None = None


class Session(Protocol):
    """One conversation of a system: it keeps what was said and takes one turn at a time."""

    def turn(self, number: int, user: str | None) -> TurnResult:
        """Answer user turn `number`: the case's input (`user` None), or this message."""
        ...
