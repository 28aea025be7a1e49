"""`expect.rubric`: scores from a judge model; the judge itself is passed in."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gate.checks.base import CheckContext, JudgeVerdict
from gate.errors import CheckInfraError

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput


class RubricCheck:
    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> JudgeVerdict:
        if ctx.judge is None:
            raise CheckInfraError("`expect.rubric` needs a `judge` in gate.yml")
        return ctx.judge.score(case, output)
