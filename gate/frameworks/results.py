"""What a framework's side gives back: the suite's cases when it opens, each asked case's runs
when it runs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from gate.inputs.cases import Case
from gate.report.models import Attempt

Runs = dict[str, list[Attempt]]  # by case id: the runs of one request, numbered from its start


@dataclass(frozen=True)
class Listing:
    """The suite's cases in its order (the task's samples, the collected tests), and what it
    leaves out and why (tests their marks skip), for the report's meta."""

    cases: list[Case]
    notes: dict[str, str] = field(default_factory=dict)


def completed(
    found: Mapping[str, list[Attempt]], starts: Mapping[str, int], repeats: int, why: str
) -> Runs:
    """Each asked case's (`starts`: its id and first repeat index) `repeats` runs: the ones
    the framework reported, and an error for each run that left no result (never a pass or a
    fail) saying `why`."""
    runs: Runs = {}
    for key, first in starts.items():
        got = {a.repeat: a for a in found.get(key, [])}
        runs[key] = [
            got.get(first + k) or Attempt(repeat=first + k, status="error", error=why)
            for k in range(repeats)
        ]
    return runs
