"""Turn a case's `expect` into checks and evaluate them on an output.

Deterministic checks (text, then code) run first; the judge runs only when they all hold,
because a failed deterministic check is never overridden by a judge.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gate.checks.base import Check, CheckContext, CheckResult
from gate.checks.code import CodeChecks
from gate.checks.rubric import RubricCheck
from gate.checks.text import Equals, Json, Length, MustInclude, MustNotInclude, Regex
from gate.expect import Expect

if TYPE_CHECKING:
    from gate.cases import Case
    from gate.systems.base import SystemOutput

__all__ = ["CheckContext", "CheckPlan", "CheckResult", "plan_checks"]


@dataclass
class CheckPlan:
    deterministic: list[Check] = field(default_factory=list)
    judge: Check | None = None

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        results: list[CheckResult] = []
        for check in self.deterministic:
            results.extend(check.run(output, case, ctx))
        if self.judge is not None and all(r.passed for r in results):
            results.extend(self.judge.run(output, case, ctx))
        return results


def plan_checks(expect: Expect) -> CheckPlan:
    plan = CheckPlan()
    add = plan.deterministic.extend
    add(MustInclude(n) for n in expect.must_include)
    add(MustNotInclude(n) for n in expect.must_not_include)
    add(Regex(p) for p in expect.regex)
    add(Regex(p, negate=True) for p in expect.not_regex)
    if expect.equals is not None:
        add([Equals(expect.equals)])
    if expect.max_chars is not None:
        add([Length(expect.max_chars, maximum=True)])
    if expect.min_chars is not None:
        add([Length(expect.min_chars, maximum=False)])
    if expect.json_ is not None and expect.json_ is not False:
        add([Json(expect.json_ if isinstance(expect.json_, dict) else None)])
    if expect.has_code_checks:
        add([CodeChecks()])
    if expect.rubric:
        plan.judge = RubricCheck()
    return plan
