"""The `expect` object of a case: data that says what a good output looks like."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


class Expect(BaseModel):
    """Every key is optional; unknown keys are rejected with a suggestion."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    must_include: list[str] = Field(default_factory=list, description="Case-insensitive")
    must_not_include: list[str] = Field(default_factory=list, description="Case-insensitive")
    regex: list[str] = Field(default_factory=list, description="Python regex, searched")
    not_regex: list[str] = Field(default_factory=list)
    equals: str | None = Field(None, description="Exact match after stripping whitespace")
    max_chars: int | None = Field(None, ge=0)
    min_chars: int | None = Field(None, ge=0)
    json_: bool | dict[str, Any] | None = Field(
        None, alias="json", description="true, or a JSON Schema the parsed output must match"
    )
    must_compile: bool | None = None
    hidden_tests: list[HiddenTest] = Field(default_factory=list)
    test_code: str | None = Field(None, description="Defines test_* functions")
    rubric: dict[str, int] = Field(
        default_factory=dict, description="Judge dimensions and their minimum score (0-2)"
    )

    @field_validator("must_include", "must_not_include", mode="before")
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


EXPECT_KEYS = sorted(f.alias or n for n, f in Expect.model_fields.items())
