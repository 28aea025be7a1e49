"""`expect.python`: the team's own check, `module:function`, run in the sandbox that the
runner passes in through `CheckContext`; here is what it is given and what its answer means.

The function is called as `function(output, case)` with plain data: `output` is `{"text",
"tool_calls": [{"name", "arguments"}], "finish_reason"}`, `case` is `{"id", "input", "expect",
"task", "severity"}`. It returns a bool (pass or fail), a number in [0, 1] (a score that
passes at the case's `threshold`, default 0.5) or a dict `{pass, score, reason}` (`pass`
decides when present, else `score` against the threshold; `reason` is shown). Anything else,
an exception, a timeout or an import that fails makes the case an `error`: never a pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.checks.base import CheckContext
from gate.errors import CheckInfraError
from gate.report.checks import CheckResult, PythonResult

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput

REASON_CHARS = 300
SHOWN = 80


def output_data(output: SystemOutput) -> dict[str, Any]:
    return {
        "text": output.text,
        "tool_calls": [call.model_dump() for call in output.tool_calls],
        "finish_reason": output.finish_reason,
    }


def case_data(case: Case) -> dict[str, Any]:
    return {
        "id": case.id,
        "input": case.input,
        "expect": case.expect.model_dump(mode="json", by_alias=True, exclude_defaults=True),
        "task": case.task,
        "severity": case.severity,
    }


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _score(value: Any, what: str) -> float:
    if not _is_number(value) or math.isnan(value) or not 0 <= value <= 1:
        raise ValueError(f"{what} {_shown(value)}: a score must be a number in [0, 1]")
    return float(value)


def judge_answer(value: Any, threshold: float) -> tuple[bool, float | None, str]:
    """(passed, score, reason) of what the check returned; ValueError saying what came back."""
    if isinstance(value, bool):
        return value, None, ""
    if _is_number(value):
        score = _score(value, "returned")
        return score >= threshold, score, f"score {score:g} (passes at {threshold:g})"
    if isinstance(value, dict):
        return _judge_dict(value, threshold)
    got = "None" if value is None else f"a {type(value).__name__} ({_shown(value)})"
    raise ValueError(
        f"returned {got}; expected a bool, a score in [0, 1] or a dict {{pass, score, reason}}"
    )


def _judge_dict(value: dict[Any, Any], threshold: float) -> tuple[bool, float | None, str]:
    verdict, score, reason = value.get("pass"), value.get("score"), value.get("reason", "")
    if verdict is not None and not isinstance(verdict, bool):
        raise ValueError(f"returned `pass` = {_shown(verdict)}, which is not a bool")
    if score is not None:
        score = _score(score, "returned `score` =")
    if verdict is None and score is None:
        raise ValueError(f"returned a dict without `pass` or `score`: {_shown(value)}")
    if not isinstance(reason, str):
        raise ValueError(f"returned `reason` = {_shown(reason)}, which is not a string")
    passed = verdict if verdict is not None else score >= threshold  # type: ignore[operator]
    if not reason and score is not None:
        reason = f"score {score:g} (passes at {threshold:g})"
    return passed, score, reason[:REASON_CHARS]


@dataclass(frozen=True)
class PythonCheck:
    target: str
    threshold: float

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        if ctx.python is None:
            raise CheckInfraError(f"python check {self.target}: the sandbox is not available")
        try:
            value = ctx.python.call_check(self.target, output_data(output), case_data(case))
        except CheckInfraError as exc:
            raise CheckInfraError(f"python check {self.target}: {exc}") from None
        try:
            passed, score, reason = judge_answer(value, self.threshold)
        except ValueError as exc:
            raise CheckInfraError(f"python check {self.target} {exc}") from None
        name = f"python:{self.target}"
        return [
            PythonResult(
                kind="python",
                name=name,
                passed=passed,
                detail=reason,
                target=self.target,
                fraction=score,
            )
        ]
