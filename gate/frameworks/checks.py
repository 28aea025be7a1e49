"""The check results of framework suites, built here and only here: an inspect scorer's verdict
on a sample (`score`, named `score:NAME`) and a pytest test's run (`pytest`, named `test`).
What a reader of the report or the comment needs of them is in these results' fields
(`gate.report.checks`)."""

from __future__ import annotations

from gate.report.checks import PlainResult, ScoreResult

DETAIL_CHARS = 500


def score_check(
    scorer: str,
    passed: bool,
    value: str | float | bool,
    wanted: str | float | bool,
    explanation: str,
    fraction: float | None,
) -> ScoreResult:
    """A scorer's value against the suite's `pass:`; `fraction`: the value as a share of full
    credit, when it is one."""
    detail = f"{value!r} (passes at {wanted!r})" + (f": {explanation}" if explanation else "")
    return ScoreResult(
        kind="score",
        name=f"score:{scorer}",
        passed=passed,
        detail=detail[:DETAIL_CHARS],
        scorer=scorer,
        value=value,
        wanted=wanted,
        fraction=fraction,
    )


def outcome_check(passed: bool, detail: str = "") -> PlainResult:
    """A test's run: passed, or failed with its assertion's message."""
    return PlainResult(kind="pytest", name="test", passed=passed, detail=detail[:DETAIL_CHARS])
