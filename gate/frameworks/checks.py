"""The check results of framework suites, built here and only here: an inspect scorer's verdict
on a sample (`score:NAME`) and a pytest test's outcome (`test`). What a reader of the report or
the comment needs of them is in these results' fields."""

from __future__ import annotations

from gate.report.models import CheckResult

DETAIL_CHARS = 500


def score_check(
    scorer: str,
    passed: bool,
    value: object,
    wanted: object,
    explanation: str,
    fraction: float | None,
) -> CheckResult:
    """A scorer's value against the suite's `pass:`; `fraction`: the value as a share of full
    credit, when it is one."""
    detail = f"{value!r} (passes at {wanted!r})" + (f": {explanation}" if explanation else "")
    return CheckResult(
        name=f"score:{scorer}", passed=passed, detail=detail[:DETAIL_CHARS], fraction=fraction
    )


def outcome_check(passed: bool, detail: str = "") -> CheckResult:
    """A test's run: passed, or failed with its assertion's message."""
    return CheckResult(name="test", passed=passed, detail=detail[:DETAIL_CHARS])
