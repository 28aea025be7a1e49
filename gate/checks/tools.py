"""Tool-call checks: `tool_calls` (each expected call is among the answer's) and
`no_tool_calls`. Pure functions of the output's tool calls.

Arguments match as a subset: every key the case names must be in the call's arguments with a
matching value, objects matched the same way at every depth, lists element by element (same
length), anything else equal (`1` matches `1.0`, never `true`). With `tool_calls_order: any`
each expected call needs its own call of the answer (two expected calls need two), found by a
matching over all pairs; with `exact`, the answer makes exactly the expected calls, in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate.checks.base import CheckContext
from gate.inputs.arguments import short as _short
from gate.inputs.arguments import subset_mismatch
from gate.inputs.expect import ExpectedToolCall
from gate.report.checks import CheckResult, PlainResult, ToolCallResult
from gate.report.output import ToolCall

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput


def call_mismatch(expected: ExpectedToolCall, call: ToolCall) -> str | None:
    if call.name != expected.name:
        return f"called {call.name}, not {expected.name}"
    if expected.arguments is None:
        return None
    if call.invalid_arguments:
        return f"its arguments are not JSON: {_short(call.arguments, raw=True)}"
    problem = subset_mismatch(expected.arguments, call.arguments)
    return None if problem is None else f"{problem} (arguments {_short(call.arguments)})"


def assign(matches: list[list[int]], count: int) -> list[int | None]:
    """A maximum matching of expected calls (rows) to the answer's calls (Kuhn's algorithm):
    `assigned[i]` is the answer's call given to expected call `i`, or None."""
    owner: list[int | None] = [None] * count

    def take(row: int, seen: set[int]) -> bool:
        for column in matches[row]:
            if column in seen:
                continue
            seen.add(column)
            current = owner[column]
            if current is None or take(current, seen):
                owner[column] = row
                return True
        return False

    for start in range(len(matches)):
        take(start, set())
    assigned: list[int | None] = [None] * len(matches)
    for column, holder in enumerate(owner):
        if holder is not None:
            assigned[holder] = column
    return assigned


def _names(calls: list[ToolCall]) -> str:
    return ", ".join(c.name for c in calls) or "no tool"


@dataclass(frozen=True)
class ToolCallsCheck:
    expected: tuple[ExpectedToolCall, ...]
    exact: bool = False

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        calls = list(output.tool_calls)
        if self.exact:
            return self._in_order(calls)
        matches = [
            [j for j, call in enumerate(calls) if call_mismatch(want, call) is None]
            for want in self.expected
        ]
        assigned = assign(matches, len(calls))
        results: list[CheckResult] = []
        for want, column in zip(self.expected, assigned, strict=True):
            detail = "" if column is not None else self._why_not(want, calls)
            name, passed = f"tool_call:{want.name}", column is not None
            results.append(
                ToolCallResult(
                    kind="tool_call", name=name, passed=passed, detail=detail, tool=want.name
                )
            )
        return results

    def _why_not(self, want: ExpectedToolCall, calls: list[ToolCall]) -> str:
        same = [c for c in calls if c.name == want.name]
        if not same:
            return f"{want.name} was not called (the answer called {_names(calls)})"
        problems = [call_mismatch(want, c) for c in same]
        if all(p is None for p in problems):  # every such call matched another expected one
            return f"{want.name} was called {len(same)} time(s), fewer than expected"
        return next(p for p in problems if p is not None)

    def _in_order(self, calls: list[ToolCall]) -> list[CheckResult]:
        results: list[CheckResult] = []
        for index, want in enumerate(self.expected):
            name = f"tool_call:{index + 1}:{want.name}"
            if index >= len(calls):
                detail, passed = f"the answer made {len(calls)} call(s) ({_names(calls)})", False
            else:
                problem = call_mismatch(want, calls[index])
                detail, passed = problem or "", problem is None
            results.append(
                ToolCallResult(
                    kind="tool_call",
                    name=name,
                    passed=passed,
                    detail=detail,
                    tool=want.name,
                    position=index + 1,
                )
            )
        extra = calls[len(self.expected) :]
        ok = not extra
        detail = "" if ok else f"{len(extra)} more call(s): {_names(extra)}"
        order = "tool_calls_order:exact"
        results.append(PlainResult(kind="tool_calls_order", name=order, passed=ok, detail=detail))
        return results


@dataclass(frozen=True)
class NoToolCalls:
    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        calls = output.tool_calls
        shown = ", ".join(c.shown() for c in calls[:3]) + (" …" if len(calls) > 3 else "")
        detail = f"the answer called {shown}" if calls else ""
        name = "no_tool_calls"
        return [PlainResult(kind="no_tool_calls", name=name, passed=not calls, detail=detail)]
