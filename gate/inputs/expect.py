"""The `expect` object of a case: data that says what a good output looks like."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gate.inputs.testcode import declared_tests


def check_test_code(value: str | None) -> str | None:
    """Test code must parse and define plain `test_*` functions (see gate.inputs.testcode)."""
    if value is not None:
        declared_tests(value)
    return value


def _as_list(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


class HiddenTest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    call: str = Field(description="Python expression evaluated against the extracted code")
    eq: Any = Field(description="Expected value (JSON data)")

    @field_validator("call")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            compile(value, "<call>", "eval")
        except SyntaxError as exc:
            raise ValueError(f"`call` is not a Python expression: {exc.msg}") from None
        return value


_TARGET = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
DEFAULT_THRESHOLD = 0.5


def check_target(value: str) -> str:
    """`module:function`, the module dotted, both plain identifiers."""
    if not _TARGET.match(value):
        raise ValueError(f"{value!r} is not `module:function` (for example `evals.checks:tone`)")
    return value


class ExpectedToolCall(BaseModel):
    """A call the answer must make: the tool's name and, optionally, arguments that must be
    among the call's (a subset match: nested objects too, lists element by element)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    name: str = Field(min_length=1)
    arguments: dict[str, Any] | None = Field(
        None, description="Keys the call's arguments must have, with these values"
    )


TrajectoryMatch = Literal["strict", "unordered", "subset", "superset"]


class ExpectedTrajectory(BaseModel):
    """The tool calls an agent's path must hold, compared as `match` says: `strict` the same
    calls in order, `unordered` the same calls in any order, `subset` every call made is among
    these, `superset` every one of these is made. Arguments match as `tool_calls` matches them."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    calls: list[ExpectedToolCall] = Field(description="`[{name, arguments?}]`")
    match: TrajectoryMatch = "strict"


class Expect(BaseModel):
    """Every key is optional; unknown keys are rejected with a suggestion."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    must_include: list[str] = Field(default_factory=list, description="Case-insensitive")
    must_not_include: list[str] = Field(default_factory=list, description="Case-insensitive")
    contains: list[str] = Field(default_factory=list, description="Each string, case-sensitive")
    contains_any: list[str] = Field(
        default_factory=list, description="At least one of them, case-sensitive"
    )
    contains_all: list[str] = Field(default_factory=list, description="All of them, case-sensitive")
    starts_with: str | None = Field(
        None, description="The output starts with it (case-sensitive, leading blanks ignored)"
    )
    regex: list[str] = Field(default_factory=list, description="Python regex, searched")
    not_regex: list[str] = Field(default_factory=list)
    equals: str | None = Field(None, description="Exact match after stripping whitespace")
    max_chars: int | None = Field(None, ge=0)
    min_chars: int | None = Field(None, ge=0)
    json_: bool | dict[str, Any] | None = Field(
        None,
        alias="json",
        description="true, or a JSON Schema: the output holds JSON (the whole answer, a ```json "
        "fence, or the first object or array in prose) that matches it",
    )
    json_exact: bool | None = Field(None, description="true: the whole answer must be JSON")
    tool_calls: list[ExpectedToolCall] = Field(
        default_factory=list, description="Calls the answer must make: `[{name, arguments?}]`"
    )
    tool_calls_order: Literal["any", "exact"] = Field(
        "any", description="exact: the answer makes exactly these calls, in this order"
    )
    no_tool_calls: bool | None = Field(None, description="true: the answer calls no tool")
    trajectory: ExpectedTrajectory | None = Field(
        None, description="The tool calls of the agent's path: `{calls, match}`"
    )
    forbidden_tools: list[str] = Field(
        default_factory=list, description="Tools the agent must never call"
    )
    max_tool_calls: int | None = Field(
        None, ge=0, description="The most tool calls the agent's path may make"
    )
    python: list[str] = Field(
        default_factory=list,
        description="Your own checks, `module:function` in the repository, run in the sandbox",
    )
    threshold: float | None = Field(
        None, ge=0, le=1, description="A python check's score passes at this (default 0.5)"
    )
    must_compile: bool | None = None
    hidden_tests: list[HiddenTest] = Field(default_factory=list)
    test_code: str | None = Field(None, description="Defines test_* functions")
    rubric: dict[str, int] = Field(
        default_factory=dict, description="Judge dimensions and their minimum score (0-2)"
    )

    @field_validator(
        "must_include", "must_not_include", "contains", "contains_any", "contains_all", "python",
        "forbidden_tools", mode="before",
    )  # fmt: skip
    @classmethod
    def _strings(cls, value: Any) -> Any:
        return _as_list(value)

    @field_validator("regex", "not_regex", mode="before")
    @classmethod
    def _regexes(cls, value: Any) -> Any:
        value = _as_list(value)
        if isinstance(value, list):
            for pattern in value:
                if isinstance(pattern, str):
                    try:
                        re.compile(pattern)
                    except re.error as exc:
                        raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
        return value

    @field_validator("json_")
    @classmethod
    def _schema(cls, value: Any) -> Any:
        if isinstance(value, dict):
            import jsonschema  # slow to import; only suites that use schemas pay for it

            try:
                jsonschema.validators.validator_for(value).check_schema(value)
            except jsonschema.SchemaError as exc:
                raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        return value

    @field_validator("test_code")
    @classmethod
    def _runnable_tests(cls, value: str | None) -> str | None:
        return check_test_code(value)

    @field_validator("python")
    @classmethod
    def _targets(cls, value: list[str]) -> list[str]:
        return [check_target(target) for target in value]

    @model_validator(mode="after")
    def _consistent(self) -> Expect:
        if self.threshold is not None and not self.python:
            raise ValueError("`threshold` applies to `python` checks only")
        if self.no_tool_calls and self.tool_calls:
            raise ValueError("`no_tool_calls: true` contradicts `tool_calls`")
        if self.tool_calls_order != "any" and not self.tool_calls:
            raise ValueError("`tool_calls_order` needs `tool_calls`")
        return self

    @field_validator("rubric")
    @classmethod
    def _scores(cls, value: dict[str, int]) -> dict[str, int]:
        for name, minimum in value.items():
            if not 0 <= minimum <= 2:
                raise ValueError(f"rubric minimum for {name!r} must be 0, 1 or 2")
        return value

    @property
    def has_code_checks(self) -> bool:
        return bool(self.must_compile or self.hidden_tests or self.test_code)

    @property
    def pass_threshold(self) -> float:
        return DEFAULT_THRESHOLD if self.threshold is None else self.threshold


EXPECT_KEYS = sorted(f.alias or n for n, f in Expect.model_fields.items())

# Other tools' names for our checks (promptfoo's assertion types, mostly), for the "unknown
# key" message of a case that uses one.
FOREIGN_KEYS: dict[str, str] = {
    "icontains": "`must_include` (case-insensitive)",
    "not-icontains": "`must_not_include` (case-insensitive)",
    "not_icontains": "`must_not_include` (case-insensitive)",
    "icontains-all": "`must_include` with a list",
    "icontains_all": "`must_include` with a list",
    "icontains-any": "`regex` with `(?i)` and alternatives",
    "not-contains": "`not_regex` with the text escaped, or `must_not_include`",
    "not_contains": "`not_regex` with the text escaped, or `must_not_include`",
    "contains-any": "`contains_any`",
    "contains-all": "`contains_all`",
    "starts-with": "`starts_with`",
    "startswith": "`starts_with`",
    "not-regex": "`not_regex`",
    "is-json": "`json_exact: true` (the whole answer is JSON; `json: true` also finds it in prose)",
    "is_json": "`json_exact: true` (the whole answer is JSON; `json: true` also finds it in prose)",
    "contains-json": "`json: true`",
    "contains_json": "`json: true`",
    "javascript": "unsupported: write the check in Python and name it in `python`",
    "js": "unsupported: write the check in Python and name it in `python`",
    "llm-rubric": "`rubric` (`{dimension: minimum}`, scored 0-2 by the judge)",
    "llm_rubric": "`rubric` (`{dimension: minimum}`, scored 0-2 by the judge)",
    "g-eval": "`rubric` (`{dimension: minimum}`, scored 0-2 by the judge)",
    "geval": "`rubric` (`{dimension: minimum}`, scored 0-2 by the judge)",
    "expected_output": "`equals`",
    "exact_match": "`equals`",
    "is-valid-openai-tools-call": "`tool_calls`",
    "tool-call": "`tool_calls`",
    "tool_call": "`tool_calls`",
    "function_call": "`tool_calls`",
    "function-call": "`tool_calls`",
    "max_length": "`max_chars`",
    "min_length": "`min_chars`",
}


def foreign_hint(key: str) -> str | None:
    """What another tool's name for a check is called here, if we know it."""
    found = FOREIGN_KEYS.get(key) or FOREIGN_KEYS.get(key.lower())
    return None if found is None else f"unknown key (another tool's name; here it is {found})"
