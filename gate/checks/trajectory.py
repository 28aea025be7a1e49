"""Checks of an agent's path (docs/agents.md): `trajectory`, `forbidden_tools`,
`max_tool_calls`, and that no turn ran out of `max_steps`. Pure functions of the output's path
(its trajectory; for one answer, its tool calls).

`trajectory: {calls, match}` compares the calls made with the expected ones, arguments matched
as `tool_calls` matches them (a subset): `strict` the same calls in the same order, `unordered`
the same calls in any order (each expected call its own call, and no other call), `subset`
every call made is among the expected (each its own), `superset` every expected call is made
(each its own). The result names the first step where the paths part, or the call left over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate.checks.base import CheckContext
from gate.checks.tools import assign, call_mismatch
from gate.inputs.expect import ExpectedToolCall, ExpectedTrajectory
from gate.report.checks import (
    CheckResult,
    ForbiddenToolResult,
    MaxStepsResult,
    MaxToolCallsResult,
    TrajectoryResult,
)
from gate.report.output import Step, ToolCall

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput

SHOWN_CALLS = 8


def path_names(calls: Sequence[ToolCall | Step | ExpectedToolCall]) -> str:
    """`lookup_order → issue_refund`, cut after a few."""
    names = [c.name for c in calls[:SHOWN_CALLS]]
    more = f" → … ({len(calls) - SHOWN_CALLS} more)" if len(calls) > SHOWN_CALLS else ""
    return (" → ".join(names) or "no tool call") + more


def strict_problem(
    expected: tuple[ExpectedToolCall, ...], calls: list[ToolCall]
) -> tuple[int, str] | None:
    """The first step (from 1) where the calls part from the expected ones, in order, and
    why."""
    for index, want in enumerate(expected):
        if index >= len(calls):
            return index + 1, f"{want.name} was expected, the path ended"
        problem = call_mismatch(want, calls[index])
        if problem is not None:
            return index + 1, problem
    if len(calls) > len(expected):
        extra = calls[len(expected)]
        return len(expected) + 1, f"{extra.shown()} was not expected"
    return None


def _matched(expected: tuple[ExpectedToolCall, ...], calls: list[ToolCall]) -> list[int | None]:
    """Each expected call's own call (a maximum matching), or None."""
    matches = [
        [j for j, call in enumerate(calls) if call_mismatch(want, call) is None]
        for want in expected
    ]
    return assign(matches, len(calls))


def unmatched_problem(
    expected: tuple[ExpectedToolCall, ...],
    calls: list[ToolCall],
    *,
    every_call: bool,
    every_want: bool,
) -> str | None:
    assigned = _matched(expected, calls)
    if every_want:
        missing = [w for w, column in zip(expected, assigned, strict=True) if column is None]
        if missing:
            return f"{missing[0].name} was not called as expected"
    if every_call:
        used = {column for column in assigned if column is not None}
        extra = [c for j, c in enumerate(calls) if j not in used]
        if extra:
            return f"{extra[0].shown()} was not expected"
    return None


def parting(want: ExpectedTrajectory, calls: list[ToolCall]) -> tuple[int | None, str] | None:
    """Why the calls do not match `want`, with, in order (`strict`), the step where they part;
    None when they match."""
    expected = tuple(want.calls)
    if want.match == "strict":
        return strict_problem(expected, calls)
    every_call = want.match in ("unordered", "subset")
    every_want = want.match in ("unordered", "superset")
    problem = unmatched_problem(expected, calls, every_call=every_call, every_want=every_want)
    return None if problem is None else (None, problem)


def worded(found: tuple[int | None, str] | None) -> str | None:
    """A `parting` as the result's detail begins: `step N: ...` where the paths part."""
    if found is None:
        return None
    step, problem = found
    return f"step {step}: {problem}" if step is not None else problem


@dataclass(frozen=True)
class TrajectoryCheck:
    expected: ExpectedTrajectory

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        calls = [step.call() for step in output.path]
        found = parting(self.expected, calls)
        problem = worded(found)
        expected = tuple(self.expected.calls)
        detail = ""
        if problem is not None:
            detail = f"{problem} (expected {path_names(expected)}, made {path_names(calls)})"
        result = TrajectoryResult(
            kind="trajectory",
            name=f"trajectory:{self.expected.match}",
            passed=found is None,
            detail=detail,
            match=self.expected.match,
            expected=[c.name for c in expected],
            made=[c.name for c in calls],
            step=found[0] if found is not None else None,
        )
        return [result]


@dataclass(frozen=True)
class ForbiddenTools:
    tools: tuple[str, ...]

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        results: list[CheckResult] = []
        steps = output.path
        for tool in self.tools:
            made = [(i, s) for i, s in enumerate(steps, start=1) if s.name == tool]
            first, detail = None, ""
            if made:
                first, step = made[0]
                times = f" ({len(made)} times)" if len(made) > 1 else ""
                detail = f"step {first} called {step.call().shown()}{times}"
            result = ForbiddenToolResult(
                kind="forbidden_tool",
                name=f"forbidden_tool:{tool}",
                passed=not made,
                detail=detail,
                tool=tool,
                step=first,
                times=len(made),
            )
            results.append(result)
        return results


@dataclass(frozen=True)
class MaxToolCalls:
    limit: int

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        made = len(output.path)
        ok = made <= self.limit
        detail = "" if ok else f"the path made {made} tool calls: {path_names(output.path)}"
        result = MaxToolCallsResult(
            kind="max_tool_calls",
            name=f"max_tool_calls:{self.limit}",
            passed=ok,
            detail=detail,
            limit=self.limit,
            made=made,
        )
        return [result]


@dataclass(frozen=True)
class AnsweredWithinSteps:
    """The conversation did not stop at `max_steps` with a tool call unanswered by text."""

    max_steps: int

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        stopped = output.finish_reason == "max_steps"
        turn, detail = None, ""
        if stopped:
            turn = output.turns
            last = [s.name for s in output.trajectory if s.turn == turn][-3:]
            detail = (
                f"turn {turn} made {self.max_steps} model calls without an answer "
                f"(its last calls: {', '.join(last) or 'none'})"
            )
        result = MaxStepsResult(
            kind="max_steps",
            name=f"max_steps:{self.max_steps}",
            passed=not stopped,
            detail=detail,
            limit=self.max_steps,
            turn=turn,
        )
        return [result]
