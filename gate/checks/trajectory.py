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

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate.checks.base import CheckContext
from gate.checks.tools import assign, call_mismatch
from gate.inputs.expect import ExpectedToolCall, ExpectedTrajectory
from gate.report.models import CheckResult
from gate.report.output import ToolCall

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput

SHOWN_CALLS = 8


def path_names(calls: list[ToolCall] | tuple[ExpectedToolCall, ...]) -> str:
    """`lookup_order → issue_refund`, cut after a few."""
    names = [c.name for c in calls[:SHOWN_CALLS]]
    more = f" → … ({len(calls) - SHOWN_CALLS} more)" if len(calls) > SHOWN_CALLS else ""
    return (" → ".join(names) or "no tool call") + more


def strict_problem(expected: tuple[ExpectedToolCall, ...], calls: list[ToolCall]) -> str | None:
    """Where the calls part from the expected ones, in order."""
    for index, want in enumerate(expected):
        if index >= len(calls):
            return f"step {index + 1}: {want.name} was expected, the path ended"
        problem = call_mismatch(want, calls[index])
        if problem is not None:
            return f"step {index + 1}: {problem}"
    if len(calls) > len(expected):
        extra = calls[len(expected)]
        return f"step {len(expected) + 1}: {extra.shown()} was not expected"
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


def trajectory_problem(want: ExpectedTrajectory, calls: list[ToolCall]) -> str | None:
    expected = tuple(want.calls)
    if want.match == "strict":
        return strict_problem(expected, calls)
    every_call = want.match in ("unordered", "subset")
    every_want = want.match in ("unordered", "superset")
    return unmatched_problem(expected, calls, every_call=every_call, every_want=every_want)


@dataclass(frozen=True)
class TrajectoryCheck:
    expected: ExpectedTrajectory

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        calls = [step.call() for step in output.path]
        problem = trajectory_problem(self.expected, calls)
        detail = ""
        if problem is not None:
            shape = f"expected {path_names(tuple(self.expected.calls))}, made {path_names(calls)}"
            detail = f"{problem} ({shape})"
        name = f"trajectory:{self.expected.match}"
        return [CheckResult(name=name, passed=problem is None, detail=detail)]


@dataclass(frozen=True)
class ForbiddenTools:
    tools: tuple[str, ...]

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        results = []
        steps = output.path
        for tool in self.tools:
            made = [(i, s) for i, s in enumerate(steps, start=1) if s.name == tool]
            detail = ""
            if made:
                index, step = made[0]
                times = f" ({len(made)} times)" if len(made) > 1 else ""
                detail = f"step {index} called {step.call().shown()}{times}"
            results.append(
                CheckResult(name=f"forbidden_tool:{tool}", passed=not made, detail=detail)
            )
        return results


@dataclass(frozen=True)
class MaxToolCalls:
    limit: int

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        made = len(output.path)
        ok = made <= self.limit
        detail = (
            ""
            if ok
            else f"the path made {made} tool calls: {path_names([s.call() for s in output.path])}"
        )
        return [CheckResult(name=f"max_tool_calls:{self.limit}", passed=ok, detail=detail)]


@dataclass(frozen=True)
class AnsweredWithinSteps:
    """The conversation did not stop at `max_steps` with a tool call unanswered by text."""

    max_steps: int

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        stopped = output.finish_reason == "max_steps"
        detail = ""
        if stopped:
            turn = output.turns
            last = [s.name for s in output.trajectory if s.turn == turn][-3:]
            detail = (
                f"turn {turn} made {self.max_steps} model calls without an answer "
                f"(its last calls: {', '.join(last) or 'none'})"
            )
        return [CheckResult(name=f"max_steps:{self.max_steps}", passed=not stopped, detail=detail)]
