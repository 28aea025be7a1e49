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
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.checks.base import CheckContext
from gate.errors import CheckInfraError
from gate.inputs.config import JudgeConfig
from gate.promptfoo.checks import assertion_types as types
from gate.promptfoo.checks.script_results import script_verdict
from gate.promptfoo.checks.trajectory import HANDLERS as TRAJECTORY_HANDLERS
from gate.promptfoo.checks.trajectory import trajectory_assertion
from gate.promptfoo.inputs.assertions import Assertion, AssertionSet
from gate.promptfoo.inputs.providers import ProviderSpec
from gate.report.checks import AssertionResult, CheckResult, ThresholdResult
from gate.report.models import JudgeCall, add_calls

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
    """The assertions of one case on one output (the judge's calls are added up). The output
    is promptfoo's (`output_value`), transformed first by the test's `options.transform`
    (`transform`), then by an assertion's own for that assertion."""

    def __init__(
        self, output: SystemOutput, case: Case, ctx: CheckContext, transform: str | None = None
    ) -> None:
        self.output = output
        self.case = case
        self.ctx = ctx
        self.judge: JudgeCall | None = None
        self.value = types.output_value(output)
        if transform is not None:
            self.value = self.transformed(transform, self.value)

    def transformed(self, target: str, value: Any) -> Any:
        """promptfoo's `transform` of a Python file: `function(output, context)` in the
        sandbox; what it returns is the output the assertions read."""
        if self.ctx.python is None:
            raise CheckInfraError(f"transform {target}: the sandbox is not available")
        context = {"vars": self.case.input, "prompt": {"label": self.output.data.get("prompt", "")}}
        try:
            found = self.ctx.python.call_check(target, value, context)
        except CheckInfraError as exc:
            raise CheckInfraError(f"transform {target}: {exc}") from None
        if found is None:
            raise CheckInfraError(f"transform {target} returned nothing (None)")
        return found

    def grade(self, a: Assertion) -> Graded:
        value = self.value if a.transform is None else self.transformed(a.transform, self.value)
        if a.type == "python":
            return self._python(a, value)
        if a.type == "llm-rubric":
            return self._rubric(a, types.output_string(value))
        if a.type in TRAJECTORY_HANDLERS:  # `not-` as promptfoo applies it to each
            passed, reason = trajectory_assertion(a, self.output.path)
            return Graded(passed, 1.0 if passed else 0.0, "Assertion passed" if passed else reason)
        holds, reason = self._holds(a, value)
        passed = holds != a.negated
        return Graded(passed, 1.0 if passed else 0.0, "Assertion passed" if passed else reason)

    def _holds(self, a: Assertion, value: Any) -> types.Holds:
        if a.type in types.TEXT_CHECKS:
            return types.TEXT_CHECKS[a.type](a, types.output_string(value))
        if a.type in ANSWER_CHECKS:
            return ANSWER_CHECKS[a.type](a, self.output, value)
        raise CheckInfraError(f"assertion type `{a.type}` is not supported")

    def _python(self, a: Assertion, output: Any) -> Graded:
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
            value = self.ctx.python.call_check(target, output, context)
        except CheckInfraError as exc:
            raise CheckInfraError(f"python assertion {target}: {exc}") from None
        try:
            passed, score, reason = script_verdict(value, a.threshold, a.negated)
        except ValueError as exc:
            raise CheckInfraError(f"python assertion {target} {exc}") from None
        return Graded(passed, score, reason)

    def _rubric(self, a: Assertion, text: str) -> Graded:
        judge = self.ctx.judge
        if a.grader is not None:
            judge = self.ctx.graders.get(a.grader.key)
        if judge is None:
            raise CheckInfraError("`llm-rubric` needs a grader: `judge` in gate.yml or `provider`")
        from gate.promptfoo.checks.grading import grade_rubric  # jinja2: only for llm-rubric

        verdict = grade_rubric(judge, a, text, self.case.input)
        self.judge = add_calls(self.judge, verdict.call)
        if verdict.passed is None:
            return Graded(None, 0.0, verdict.reason)
        passed = verdict.passed != a.negated
        score = min(1.0, max(0.0, 1 - verdict.score)) if a.negated else verdict.score
        return Graded(passed, score, verdict.reason)


def _tools_call(a: Assertion, output: SystemOutput, value: Any) -> types.Holds:
    return types.tools_call(value, output.data.get("tools"))


def _cost(a: Assertion, output: SystemOutput, value: Any) -> types.Holds:
    if output.cost_usd is None:
        raise CheckInfraError(
            "`cost`: the answer has no cost (gate.yml's `prices` has none for its model)"
        )
    return types.limit(a, output.cost_usd, "")


def _latency(a: Assertion, output: SystemOutput, value: Any) -> types.Holds:
    if output.latency_ms is None:
        raise CheckInfraError("`latency`: the answer has no latency")
    return types.limit(a, output.latency_ms, "ms")


# Deterministic types that read more than the text: the output as promptfoo's provider returns
# it (its tool calls; transformed, when the assertion has a transform), the answer's cost and
# latency. promptfoo's types over what the system did on the way (`trajectory:tool-used`,
# `trajectory:tool-sequence`, ...) go here too, each with its name in `SUPPORTED`
# (`gate.promptfoo.inputs.assertions`) and its value checked in `assertion_values`.
ANSWER_CHECKS: dict[str, Callable[[Assertion, SystemOutput, Any], types.Holds]] = {
    "is-valid-openai-tools-call": _tools_call,
    "cost": _cost,
    "latency": _latency,
}


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


def _result(name: str, graded: Graded, a: Assertion, scored: bool) -> AssertionResult:
    return AssertionResult(
        kind="assertion",
        name=name,
        passed=graded.passed,
        detail=_detail(graded),
        assertion=("not-" if a.negated else "") + a.type,
        fraction=round(graded.score, 6),
        metric=a.metric,
        scored=scored,
    )


def _threshold(threshold: float, graded: Graded) -> ThresholdResult:
    return ThresholdResult(
        kind="threshold",
        name=f"threshold:{threshold:g}",
        passed=graded.passed,
        detail=_detail(graded),
        threshold=threshold,
        fraction=round(graded.score, 6),
    )


def _detail(graded: Graded) -> str:
    return "" if graded.passed else graded.reason[:300]


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
        results.append(_threshold(threshold, Graded(passed, scores.score, reason)))
    return results, Graded(passed, scores.score, reason)


def run_assertions(
    assertions: AssertionSet, output: SystemOutput, case: Case, ctx: CheckContext
) -> tuple[list[CheckResult], JudgeCall | None]:
    """The case's results; a test with no assertion passes (promptfoo's "No assertions")."""
    run = AssertionRun(output, case, ctx, assertions.transform)
    results, _ = _group(run, assertions.assertions, assertions.threshold, "", False)
    return results, run.judge


def grader_config(spec: ProviderSpec) -> JudgeConfig:
    """A grading provider (`llm-rubric`'s `provider`) as the gate's judge: promptfoo's
    endpoint keys and its default `max_tokens` (1024)."""
    config = spec.config
    base = f"https://{config['apiHost']}/v1" if config.get("apiHost") else config.get("apiBaseUrl")
    return JudgeConfig(
        kind=spec.vendor,
        model=spec.model,
        base_url=base,
        api_key_env=config.get("apiKeyEnvar"),
        max_tokens=int(config.get("max_tokens", 1024)),
    )
