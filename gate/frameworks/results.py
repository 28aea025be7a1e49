"""What a framework's run gives back: the suite's cases and each run case's attempts."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gate.inputs.cases import Case
from gate.report.models import Attempt


@dataclass(frozen=True)
class FrameworkRun:
    """`cases`: every case of the suite, in its order (the task's samples, the collected
    tests); `attempts`: the runs of the cases that ran, by id, numbered from their start;
    `notes`: what the run left out and why (tests their marks skip), for the report's meta."""

    cases: list[Case]
    attempts: dict[str, list[Attempt]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def start_of(start: int | Mapping[str, int], case_id: str) -> int:
    """A case's first repeat index in this run (a later round continues its numbering)."""
    return start if isinstance(start, int) else start.get(case_id, 0)


def missing_attempts(case_id: str, first: int, repeats: int, why: str) -> list[Attempt]:
    """Runs a case was asked for that left no result: errors, never a pass or a fail."""
    return [Attempt(repeat=first + k, status="error", error=why) for k in range(repeats)]
