"""Turn a case's `expect` into checks and evaluate them on an output.

Deterministic checks (text, tool calls, then code) run first; the team's own Python checks
run only when they all hold, and the judge only when those hold too: a failed deterministic
check is never overridden (not even by a Python check that errs, which would make the case an
`error` instead of a `fail`). A case's promptfoo assertions (`case.assertions`) run as
promptfoo runs them, every one, scored (`gate.promptfoo.checks`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gate.checks.base import Check, CheckContext
from gate.checks.text import (
    Contains,
    ContainsSome,
    Equals,
    Json,
    Length,
    MustInclude,
    MustNotInclude,
    Regex,
    StartsWith,
)
from gate.checks.tools import NoToolCalls, ToolCallsCheck
from gate.checks.trajectory import (
    AnsweredWithinSteps,
    ForbiddenTools,
    MaxToolCalls,
    TrajectoryCheck,
)
from gate.inputs.expect import Expect
from gate.report.checks import CheckResult, TurnCheckResult, TurnEnding, TurnReachedResult
from gate.report.models import JudgeCall, add_calls

# Code, the team's Python checks, the judge and promptfoo's assertions load with the first
# case that has one: a suite of text checks starts without them.
if TYPE_CHECKING:
    from gate.checks.python import PythonCheck
    from gate.checks.rubric import RubricCheck
    from gate.inputs.cases import Case
    from gate.promptfoo.inputs.assertions import AssertionSet
    from gate.report.output import SystemOutput

__all__ = ["CheckContext", "CheckPlan", "Evaluation", "plan_case", "plan_checks"]


@dataclass(frozen=True)
class Evaluation:
    results: list[CheckResult]
    judge: JudgeCall | None = None  # set when the judge was asked


@dataclass
class CheckPlan:
    deterministic: list[Check] = field(default_factory=list)
    python: list[PythonCheck] = field(default_factory=list)
    judge: RubricCheck | None = None
    assertions: AssertionSet | None = None
    turns: list[tuple[int, Expect, CheckPlan]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """No check at all: the case passes whatever the system answers."""
        promptfoo = self.assertions is not None and bool(self.assertions.assertions)
        return not (self.deterministic or self.python or self.judge or promptfoo or self.turns)

    def evaluate(self, output: SystemOutput, case: Case, ctx: CheckContext) -> Evaluation:
        found = self._own(output, case, ctx)
        for number, expect, plan in self.turns:
            turn = turn_evaluation(number, expect, plan, output, case, ctx)
            judge = add_calls(found.judge, turn.judge) if turn.judge else found.judge
            found = Evaluation(found.results + turn.results, judge)
        return found

    def _own(self, output: SystemOutput, case: Case, ctx: CheckContext) -> Evaluation:
        if self.assertions is not None:
            from gate.promptfoo.checks import run_assertions

            found, call = run_assertions(self.assertions, output, case, ctx)
            rest = self._gate_checks(output, case, ctx)
            judge = add_calls(call, rest.judge) if call and rest.judge else call or rest.judge
            return Evaluation(found + rest.results, judge)
        return self._gate_checks(output, case, ctx)

    def _gate_checks(self, output: SystemOutput, case: Case, ctx: CheckContext) -> Evaluation:
        results: list[CheckResult] = []
        for check in self.deterministic:
            results.extend(check.run(output, case, ctx))
        if self.python and all(r.passed for r in results):
            for own in self.python:
                results.extend(own.run(output, case, ctx))
        if self.judge is None or not all(r.passed for r in results):
            return Evaluation(results)
        verdict = self.judge.run(output, case, ctx)
        return Evaluation(results + verdict.results, verdict.call)

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        return self.evaluate(output, case, ctx).results


ENDINGS: dict[str, TurnEnding] = {"max_steps": "max_steps", "forbidden_tool": "forbidden_tool"}
ENDED_WORDS: dict[TurnEnding, str] = {
    "max_steps": "at max_steps",
    "forbidden_tool": "at a forbidden tool's call",
    "early": "early",
}


def turn_evaluation(
    number: int,
    expect: Expect,
    plan: CheckPlan,
    output: SystemOutput,
    case: Case,
    ctx: CheckContext,
) -> Evaluation:
    """A scripted turn's own `expect`, judged on that turn's answer (each result a `turn`
    result holding the check's own); a turn the conversation never reached fails. An answer
    that holds no conversation (a case's `reference`, checked by `gate validate`) has no turns
    to judge."""
    if not output.messages:
        return Evaluation([])
    if number > output.turns:
        ended = ENDINGS.get(output.finish_reason or "", "early")
        reached = TurnReachedResult(
            kind="turn_reached",
            name=f"turn{number}:reached",
            passed=False,
            detail=f"the conversation ended {ENDED_WORDS[ended]}, after turn {output.turns}",
            turn=number,
            held=output.turns,
            ended=ended,
        )
        return Evaluation([reached])
    scoped = case.model_copy(update={"expect": expect})
    found = plan.evaluate(output.turn(number), scoped, ctx)
    results: list[CheckResult] = [TurnCheckResult.of(number, r) for r in found.results]
    return Evaluation(results, found.judge)


def plan_case(case: Case) -> CheckPlan:
    """The checks of a case: its `expect`, its promptfoo assertions, and for a conversation
    each scripted turn's `expect` and that no turn ran out of `max_steps`."""
    plan = plan_checks(case.expect)
    plan.assertions = case.assertions
    agent = case.agent
    if agent is not None:
        plan.deterministic.append(AnsweredWithinSteps(agent.max_steps))
        plan.turns = [
            (number, turn.expect, plan_checks(turn.expect))
            for number, turn in enumerate(agent.turns, start=2)
            if turn.expect != Expect()
        ]
    return plan


def plan_checks(expect: Expect) -> CheckPlan:
    plan = CheckPlan()
    add = plan.deterministic.extend
    add(MustInclude(n) for n in expect.must_include)
    add(MustNotInclude(n) for n in expect.must_not_include)
    add(Contains(n) for n in expect.contains)
    if expect.contains_any:
        add([ContainsSome(tuple(expect.contains_any), every=False)])
    if expect.contains_all:
        add([ContainsSome(tuple(expect.contains_all), every=True)])
    if expect.starts_with is not None:
        add([StartsWith(expect.starts_with)])
    add(Regex(p) for p in expect.regex)
    add(Regex(p, negate=True) for p in expect.not_regex)
    if expect.equals is not None:
        add([Equals(expect.equals)])
    if expect.max_chars is not None:
        add([Length(expect.max_chars, maximum=True)])
    if expect.min_chars is not None:
        add([Length(expect.min_chars, maximum=False)])
    if (expect.json_ is not None and expect.json_ is not False) or expect.json_exact:
        schema = expect.json_ if isinstance(expect.json_, dict) else None
        add([Json(schema, exact=bool(expect.json_exact))])
    if expect.tool_calls:
        exact = expect.tool_calls_order == "exact"
        add([ToolCallsCheck(tuple(expect.tool_calls), exact=exact)])
    if expect.no_tool_calls:
        add([NoToolCalls()])
    if expect.trajectory is not None:
        add([TrajectoryCheck(expect.trajectory)])
    if expect.forbidden_tools:
        add([ForbiddenTools(tuple(expect.forbidden_tools))])
    if expect.max_tool_calls is not None:
        add([MaxToolCalls(expect.max_tool_calls)])
    if expect.has_code_checks:
        from gate.checks.code import CodeChecks

        add([CodeChecks()])
    if expect.python:
        from gate.checks.python import PythonCheck

        plan.python = [PythonCheck(t, expect.pass_threshold) for t in expect.python]
    if expect.rubric:
        from gate.checks.rubric import RubricCheck

        plan.judge = RubricCheck()
    return plan
