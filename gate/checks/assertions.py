"""promptfoo's assertions of a case, run with promptfoo's semantics (its `runAssertions`).

Every assertion runs and gets a pass and a score in [0, 1]; `not-` inverts the pass (and an
`llm-rubric`'s score). A test without `threshold` passes when every assertion passes (one of
`weight: 0` always does); with one, when the weighted mean of the scores reaches it: the
assertions' results are then `scored` (shown, not deciding) and a `threshold` result decides.
An `assert-set` is one assertion made of others, with its own threshold. `metric` names an
assertion's result (the comment's per-metric pass rates).

`python` assertions run the team's code in the sandbox (`ctx.python`), called as promptfoo
calls them: `get_assert(output, context)` (inline code: `main(output, context)`), its answer
read as promptfoo reads it (a bool, a number, `{pass, score, reason}`, their JSON). `llm-rubric`
asks the judge (`ctx.judge`, or the grader its `provider` names, `ctx.graders`) with
promptfoo's grading prompt or the test's `rubricPrompt`; an answer without a JSON object makes
the case `needs_review`. A check that raises, hangs or returns anything else makes the case an
`error` (promptfoo counts it a failure): never a pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gate.checks import assertion_types as types
from gate.checks.base import CheckContext
from gate.checks.script_results import script_verdict
from gate.checks.trajectory_assertions import HANDLERS as TRAJECTORY_HANDLERS
from gate.checks.trajectory_assertions import trajectory_assertion
from gate.errors import CheckInfraError
from gate.inputs.promptfoo.assertions import Assertion, AssertionSet
from gate.report.models import CheckResult, JudgeCall, add_calls

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput


@dataclass(frozen=True)
class Graded:
    """One assertion's outcome: `passed` None when it needs a person (an unusable grade)."""

    passed: bool | None
    score: float
    reason: str


class AssertionRun:
    """The assertions of one case on one output (the judge's calls are added up)."""

    def __init__(self, output: SystemOutput, case: Case, ctx: CheckContext) -> None:
        self.output = output
        self.case = case
        self.ctx = ctx
        self.value = types.output_value(output)
        self.text = types.output_string(self.value)
        self.judge: JudgeCall | None = None

    def grade(self, a: Assertion) -> Graded:
        if a.type == "python":
            return self._python(a)
        if a.type == "llm-rubric":
            return self._rubric(a)
        if a.type in TRAJECTORY_HANDLERS:  # `not-` as promptfoo applies it to each
            passed, reason = trajectory_assertion(a, self.output.path)
            return Graded(passed, 1.0 if passed else 0.0, "Assertion passed" if passed else reason)
        holds, reason = self._holds(a)
        passed = holds != a.negated
        return Graded(passed, 1.0 if passed else 0.0, "Assertion passed" if passed else reason)

    def _holds(self, a: Assertion) -> types.Holds:
        if a.type in types.TEXT_CHECKS:
            return types.TEXT_CHECKS[a.type](a, self.text)
        if a.type == "is-valid-openai-tools-call":
            return types.tools_call(self.value, self.output.data.get("tools"))
        if a.type == "cost":
            if self.output.cost_usd is None:
                raise CheckInfraError(
                    "`cost`: the answer has no cost (gate.yml's `prices` has none for its model)"
                )
            return types.limit(a, self.output.cost_usd, "")
        if a.type == "latency":
            if self.output.latency_ms is None:
                raise CheckInfraError("`latency`: the answer has no latency")
            return types.limit(a, self.output.latency_ms, "ms")
        raise CheckInfraError(f"assertion type `{a.type}` is not supported")

    def _python(self, a: Assertion) -> Graded:
        target = a.python_target or ""
        if self.ctx.python is None:
            raise CheckInfraError(f"python assertion {target}: the sandbox is not available")
        context = {
            "prompt": self.output.data.get("prompt", ""),
            "vars": self.case.input,
            "test": {
                "vars": self.case.input,
                "description": self.case.metadata.get("description"),
                "metadata": self.case.metadata,
            },
            "config": a.config or {},
        }
        try:
            value = self.ctx.python.call_check(target, self.value, context)
        except CheckInfraError as exc:
            raise CheckInfraError(f"python assertion {target}: {exc}") from None
        try:
            passed, score, reason = script_verdict(value, a.threshold, a.negated)
        except ValueError as exc:
            raise CheckInfraError(f"python assertion {target} {exc}") from None
        return Graded(passed, score, reason)

    def _rubric(self, a: Assertion) -> Graded:
        judge = self.ctx.judge
        if a.grader is not None:
            judge = self.ctx.graders.get(a.grader.key)
        if judge is None:
            raise CheckInfraError("`llm-rubric` needs a grader: `judge` in gate.yml or `provider`")
        from gate.checks.grading import grade_rubric  # jinja2: only for llm-rubric

        verdict = grade_rubric(judge, a, self.text, self.case.input)
        self.judge = add_calls(self.judge, verdict.call)
        if verdict.passed is None:
            return Graded(None, 0.0, verdict.reason)
        passed = verdict.passed != a.negated
        score = min(1.0, max(0.0, 1 - verdict.score)) if a.negated else verdict.score
        return Graded(passed, score, verdict.reason)


@dataclass
class Scores:
    """promptfoo's `AssertionsResult`: weighted scores, and whether any assertion failed."""

    threshold: float | None = None
    total: float = 0.0
    weight: float = 0.0
    failed: bool = False
    unknown: float = 0.0  # the weight of grades that need a person

    def add(self, graded: Graded, weight: float) -> None:
        self.total += graded.score * weight
        self.weight += weight
        if graded.passed is None:
            self.unknown += weight
        elif not graded.passed:
            self.failed = True

    @property
    def score(self) -> float:
        return self.total / self.weight if self.weight > 0 else 0.0

    def passed(self) -> bool | None:
        if self.threshold is None or math.isnan(self.threshold):
            return None if (self.unknown and not self.failed) else not self.failed
        low = self.score >= self.threshold
        high = (self.total + self.unknown) / self.weight >= self.threshold if self.weight else low
        return low if low == high else None


def _result(name: str, graded: Graded, a: Assertion | None, scored: bool) -> CheckResult:
    return CheckResult(
        name=name,
        passed=graded.passed,
        detail="" if graded.passed else graded.reason[:300],
        fraction=round(graded.score, 6),
        metric=a.metric if a is not None else None,
        scored=scored,
    )


def _group(run: AssertionRun, items: tuple[Assertion, ...], threshold: float | None, prefix: str,
           scored: bool) -> tuple[list[CheckResult], Graded]:  # fmt: skip
    """The results of some assertions (the test's, or an assert-set's) and their verdict."""
    scores = Scores(threshold)
    results: list[CheckResult] = []
    inner = scored or threshold is not None
    for a in items:
        if a.type == "assert-set":
            children, graded = _group(run, a.children, a.threshold, f"{prefix}{a.label}/", True)
            results += children
        else:
            graded = run.grade(a)
        if a.weight == 0 and graded.passed is not None:
            graded = Graded(True, graded.score, graded.reason)
        scores.add(graded, a.weight)
        results.append(_result(prefix + a.label, graded, a, inner))
    passed = scores.passed()
    if threshold is None:
        reason = "All assertions passed" if passed else "an assertion failed"
        return results, Graded(passed, scores.score, reason)
    sign = "≥" if passed else "<"
    reason = f"Aggregate score {scores.score:.2f} {sign} {threshold:g} threshold"
    if not scored:
        results.append(
            _result(f"threshold:{threshold:g}", Graded(passed, scores.score, reason), None, False)
        )
    return results, Graded(passed, scores.score, reason)


def run_assertions(
    assertions: AssertionSet, output: SystemOutput, case: Case, ctx: CheckContext
) -> tuple[list[CheckResult], JudgeCall | None]:
    """The case's results; a test with no assertion passes (promptfoo's "No assertions")."""
    run = AssertionRun(output, case, ctx)
    results, _ = _group(run, assertions.assertions, assertions.threshold, "", False)
    return results, run.judge
