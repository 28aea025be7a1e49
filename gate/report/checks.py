"""A check's result: one model per kind of check, a union on `kind` (`CheckResult`).

Every result has a `name` (how lists show it: `include:CAC`, `rubric:tone`), `passed` (None:
a person must look, the case `needs_review`) and `detail`, the check's own words on the
outcome, shown as they are (and read by whoever knows no kinds: JUnit, a person reading the
report). What a reader needs beyond that is a typed part of the result's model (the phrase,
the judge's score and minimum, the expected value), so nothing parses `name` or `detail`.

An agent's path checks are kinds too (the trajectory, a forbidden tool, the most tool calls,
`max_steps`), and a check of one user turn of a conversation is a `turn` result holding the
check's own result, of its own kind (`TurnCheckResult`), beside `turn_reached` for a turn the
conversation never got to.

To add a kind: a model here with `kind: Literal[...]` and its parts, in `CheckResult` and
`KINDS` (a kind with no parts of its own is one more name in `PlainResult`'s `kind`), and,
when the comment should say more than its name and detail, a sentence in
`gate.render.diff`. A result of a kind this gate has no model for reads as an `OtherResult`
(name, outcome and detail): a check may return one before its kind gets a model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator


class CheckBase(BaseModel):
    """What every result has."""

    model_config = ConfigDict(frozen=True)

    kind: str
    name: str
    passed: bool | None = Field(description="None: a person must look (needs_review)")
    detail: str = Field("", description="the check's own words on its outcome")


class PhraseResult(CheckBase):
    """`must_include` and `must_not_include` (ignoring case), `contains` (case-sensitive)."""

    kind: Literal["include", "exclude", "contains"]
    phrase: str


class ExpectedResult(CheckBase):
    """`equals` (the whole answer) and `starts_with`: the text the answer should have."""

    kind: Literal["equals", "starts_with"]
    expected: str | None = Field(None, description="None: not recorded (a report before v3)")


class ToolCallResult(CheckBase):
    """One expected tool call (`expect.tool_calls`)."""

    kind: Literal["tool_call"]
    tool: str
    position: int | None = Field(None, description="`tool_calls_order: exact`: its place, from 1")


class CodeTestResult(CheckBase):
    """A test of the answer's code: a `test_code` function or a hidden test's call."""

    kind: Literal["test", "hidden"]
    test: str = Field(description="the test function's name, or the hidden test's call")
    expected: str | None = Field(None, description="hidden: the expected value, as Python shows it")
    actual: str | None = Field(None, description="hidden: the value the code returned")


class PythonResult(CheckBase):
    """The team's own check, `expect.python`."""

    kind: Literal["python"]
    target: str = Field(description="`module:function`")
    fraction: float | None = Field(None, description="its score in [0, 1], when it gave one")


class RubricResult(CheckBase):
    """One rubric dimension as the judge scored it (`passed` None: its answer was unusable)."""

    kind: Literal["rubric"]
    dimension: str
    score: int | None = Field(None, description="0-2; None: no usable score")
    minimum: int | None = Field(None, description="the case's minimum for this dimension")
    reason: str = Field("", description="the judge's reason, or why its answer was unusable")

    @classmethod
    def judged(cls, dimension: str, score: int, minimum: int, reason: str) -> RubricResult:
        verdict = "meets" if score >= minimum else "below"
        return cls(
            kind="rubric",
            name=f"rubric:{dimension}",
            passed=score >= minimum,
            detail=f"{score}/2 ({verdict} minimum {minimum}): {reason}",
            dimension=dimension,
            score=score,
            minimum=minimum,
            reason=reason,
        )

    @classmethod
    def unusable(cls, dimension: str, minimum: int | None, problem: str) -> RubricResult:
        return cls(
            kind="rubric",
            name=f"rubric:{dimension}",
            passed=None,
            detail=problem,
            dimension=dimension,
            minimum=minimum,
            reason=problem,
        )


class AssertionResult(CheckBase):
    """A promptfoo assertion, graded with promptfoo's semantics (`gate.checks.assertions`)."""

    kind: Literal["assertion"]
    assertion: str = Field(description="promptfoo's type, `not-` included")
    fraction: float = Field(description="its score in [0, 1]")
    metric: str | None = Field(None, description="its `metric`")
    scored: bool = Field(
        False, description="part of a score a `threshold` result judges: shown, it does not decide"
    )


class ThresholdResult(CheckBase):
    """A promptfoo test's `threshold` over the weighted scores of its assertions."""

    kind: Literal["threshold"]
    threshold: float
    fraction: float = Field(description="the weighted mean score")


TrajectoryMatch = Literal["strict", "unordered", "subset", "superset"]


class TrajectoryResult(CheckBase):
    """`expect.trajectory`: the tool calls of an agent's path against the expected ones."""

    kind: Literal["trajectory"]
    match: TrajectoryMatch
    expected: list[str] = Field(description="the expected calls' tools, in order")
    made: list[str] = Field(description="the path's calls' tools, in order")
    step: int | None = Field(
        None, description="where the path parts from the expected one, from 1 (strict)"
    )


class ForbiddenToolResult(CheckBase):
    """One tool of `expect.forbidden_tools`: the agent must never call it."""

    kind: Literal["forbidden_tool"]
    tool: str
    step: int | None = Field(None, description="the first step that called it, from 1")
    times: int = Field(0, description="how many calls of it the path made")


class MaxToolCallsResult(CheckBase):
    """`expect.max_tool_calls`: the most tool calls the path may make."""

    kind: Literal["max_tool_calls"]
    limit: int
    made: int = Field(description="the path's tool calls")


class MaxStepsResult(CheckBase):
    """A conversation's turns each answered within `max_steps` model calls."""

    kind: Literal["max_steps"]
    limit: int
    turn: int | None = Field(None, description="the turn that ran out of steps")


TurnEnding = Literal["max_steps", "forbidden_tool", "early"]


class TurnReachedResult(CheckBase):
    """A scripted turn with its own `expect` that the conversation never reached."""

    kind: Literal["turn_reached"]
    turn: int = Field(description="the turn, from 1 (the case's input)")
    held: int = Field(description="the turns the conversation held")
    ended: TurnEnding = Field(description="how it ended: at max_steps, a forbidden tool, early")


class TurnCheckResult(CheckBase):
    """A check of one user turn's answer (`turns[].expect`): the turn and the check's result,
    of its own kind. `name` is the check's, after `turnN:`."""

    kind: Literal["turn"]
    turn: int = Field(description="the turn, from 1 (the case's input)")
    check: CheckResult

    @classmethod
    def of(cls, turn: int, check: CheckResult) -> TurnCheckResult:
        return cls(
            kind="turn",
            name=f"turn{turn}:{check.name}",
            passed=check.passed,
            detail=check.detail,
            turn=turn,
            check=check,
        )


class ScoreResult(CheckBase):
    """An inspect_ai scorer's score of a sample, against the suite's `pass:`."""

    kind: Literal["score"]
    scorer: str
    value: str | int | float | bool = Field(description="the score's value, as the scorer gave it")
    wanted: str | int | float | bool = Field(description="the suite's `pass:`")
    fraction: float | None = Field(
        None, description="the value as a share of full credit, when it is one"
    )


class PlainResult(CheckBase):
    """A kind whose name and detail say all there is."""

    kind: Literal[
        "regex",
        "not_regex",
        "max_chars",
        "min_chars",
        "contains_any",
        "contains_all",
        "json",
        "json_exact",
        "json_schema",
        "tool_calls_order",
        "no_tool_calls",
        "compile",
        "pytest",
    ]


class OtherResult(CheckBase):
    """A kind this gate has no model for: shown by its name and detail."""

    @model_validator(mode="after")
    def _unknown_kind(self) -> OtherResult:
        if self.kind in MODEL_OF:
            raise ValueError(f"kind {self.kind!r} has its own model: {MODEL_OF[self.kind]}")
        return self


KINDS: tuple[type[CheckBase], ...] = (
    PhraseResult,
    ExpectedResult,
    ToolCallResult,
    CodeTestResult,
    PythonResult,
    RubricResult,
    AssertionResult,
    ThresholdResult,
    TrajectoryResult,
    ForbiddenToolResult,
    MaxToolCallsResult,
    MaxStepsResult,
    TurnReachedResult,
    TurnCheckResult,
    ScoreResult,
    PlainResult,
)
MODEL_OF: dict[str, str] = {
    kind: model.__name__
    for model in KINDS
    for kind in get_args(model.model_fields["kind"].annotation)
}


def judge_scores(checks: Iterable[CheckBase]) -> dict[str, int]:
    """The judge's score of each rubric dimension it scored."""
    return {
        c.dimension: c.score for c in checks if isinstance(c, RubricResult) and c.score is not None
    }


def _model_of(value: object) -> str:
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    return MODEL_OF.get(kind, OtherResult.__name__) if isinstance(kind, str) else "?"


CheckResult = Annotated[
    Annotated[PhraseResult, Tag("PhraseResult")]
    | Annotated[ExpectedResult, Tag("ExpectedResult")]
    | Annotated[ToolCallResult, Tag("ToolCallResult")]
    | Annotated[CodeTestResult, Tag("CodeTestResult")]
    | Annotated[PythonResult, Tag("PythonResult")]
    | Annotated[RubricResult, Tag("RubricResult")]
    | Annotated[AssertionResult, Tag("AssertionResult")]
    | Annotated[ThresholdResult, Tag("ThresholdResult")]
    | Annotated[TrajectoryResult, Tag("TrajectoryResult")]
    | Annotated[ForbiddenToolResult, Tag("ForbiddenToolResult")]
    | Annotated[MaxToolCallsResult, Tag("MaxToolCallsResult")]
    | Annotated[MaxStepsResult, Tag("MaxStepsResult")]
    | Annotated[TurnReachedResult, Tag("TurnReachedResult")]
    | Annotated[TurnCheckResult, Tag("TurnCheckResult")]
    | Annotated[ScoreResult, Tag("ScoreResult")]
    | Annotated[PlainResult, Tag("PlainResult")]
    | Annotated[OtherResult, Tag("OtherResult")],
    Discriminator(
        _model_of,
        custom_error_type="check_kind",
        custom_error_message="a check result needs a string `kind`",
    ),
]

TurnCheckResult.model_rebuild()
