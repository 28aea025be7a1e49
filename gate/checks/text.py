"""Deterministic text checks: pure functions of the output text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gate.checks.base import CheckContext
from gate.checks.json_find import Found, find_json, parse_whole
from gate.report.checks import CheckResult, ExpectedResult, PhraseResult, PlainResult

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput


def _excerpt(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class MustInclude:
    needle: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        found = self.needle.casefold() in output.text.casefold()
        detail = "" if found else f"{_excerpt(self.needle)!r} not found in the output"
        name = f"include:{self.needle}"
        return [
            PhraseResult(kind="include", name=name, passed=found, detail=detail, phrase=self.needle)
        ]


@dataclass(frozen=True)
class MustNotInclude:
    needle: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        index = output.text.casefold().find(self.needle.casefold())
        detail = "" if index < 0 else f"{_excerpt(self.needle)!r} found at character {index}"
        name, passed = f"exclude:{self.needle}", index < 0
        return [
            PhraseResult(
                kind="exclude", name=name, passed=passed, detail=detail, phrase=self.needle
            )
        ]


@dataclass(frozen=True)
class Regex:
    pattern: str
    negate: bool = False

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        match = re.search(self.pattern, output.text)
        kind: Literal["regex", "not_regex"] = "not_regex" if self.negate else "regex"
        name = f"{kind}:{self.pattern}"
        if self.negate:
            detail = f"matched {_excerpt(match.group(0))!r}" if match else ""
            return [PlainResult(kind=kind, name=name, passed=match is None, detail=detail)]
        detail = "" if match else "no match"
        return [PlainResult(kind=kind, name=name, passed=match is not None, detail=detail)]


@dataclass(frozen=True)
class Equals:
    expected: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        ok = output.text.strip() == self.expected.strip()
        detail = "" if ok else f"expected {_excerpt(self.expected.strip())!r}"
        return [
            ExpectedResult(
                kind="equals", name="equals", passed=ok, detail=detail, expected=self.expected
            )
        ]


@dataclass(frozen=True)
class Length:
    limit: int
    maximum: bool

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        size = len(output.text)
        ok = size <= self.limit if self.maximum else size >= self.limit
        kind: Literal["max_chars", "min_chars"] = "max_chars" if self.maximum else "min_chars"
        detail = "" if ok else f"{size} characters"
        return [PlainResult(kind=kind, name=f"{kind}:{self.limit}", passed=ok, detail=detail)]


@dataclass(frozen=True)
class Contains:
    """`contains`: case-sensitive, one result per string (`must_include` ignores case)."""

    needle: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        found = self.needle in output.text
        detail = "" if found else f"{_excerpt(self.needle)!r} not found (case-sensitive)"
        name = f"contains:{self.needle}"
        return [
            PhraseResult(
                kind="contains", name=name, passed=found, detail=detail, phrase=self.needle
            )
        ]


@dataclass(frozen=True)
class ContainsSome:
    """`contains_any` (one of them) and `contains_all` (every one), case-sensitive."""

    needles: tuple[str, ...]
    every: bool

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        missing = [n for n in self.needles if n not in output.text]
        name: Literal["contains_all", "contains_any"] = (
            "contains_all" if self.every else "contains_any"
        )
        ok = not missing if self.every else len(missing) < len(self.needles)
        shown = ", ".join(repr(_excerpt(n, 40)) for n in missing)
        detail = "" if ok else (f"missing {shown}" if self.every else f"none of {shown} found")
        return [PlainResult(kind=name, name=name, passed=ok, detail=detail)]


@dataclass(frozen=True)
class StartsWith:
    prefix: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        start = output.text.lstrip()
        ok = start.startswith(self.prefix)
        detail = "" if ok else f"starts with {_excerpt(start, len(self.prefix) + 20)!r}"
        return [
            ExpectedResult(
                kind="starts_with",
                name="starts_with",
                passed=ok,
                detail=detail,
                expected=self.prefix,
            )
        ]


@dataclass(frozen=True)
class Json:
    """`json` (the answer holds JSON: whole, fenced or in prose) or `json_exact` (the whole
    answer is JSON); with a schema, the value found must match it."""

    schema: dict[str, Any] | None = None
    exact: bool = False

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        name: Literal["json_exact", "json"] = "json_exact" if self.exact else "json"
        found, problem = self._value(output.text)
        if found is None:
            results: list[CheckResult] = [
                PlainResult(kind=name, name=name, passed=False, detail=problem)
            ]
            if self.schema is not None:
                no_json = PlainResult(
                    kind="json_schema", name="json_schema", passed=False, detail="no JSON"
                )
                results.append(no_json)
            return results
        results = [PlainResult(kind=name, name=name, passed=True)]
        if self.schema is not None:
            results.append(_schema_result(self.schema, found.value))
        return results

    def _value(self, text: str) -> tuple[Found | None, str]:
        if self.exact:
            try:
                return Found(parse_whole(text), "the whole answer"), ""
            except ValueError as exc:
                reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                return None, f"the whole answer is not JSON: {reason}"
        found = find_json(text)
        detail = "no JSON value in the output (whole, in a ```json fence or in the prose)"
        return found, "" if found else detail


def _schema_result(schema: dict[str, Any], value: Any) -> PlainResult:
    import jsonschema  # slow to import; only suites that use schemas pay for it

    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    detail = ""
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        detail = f"{where}: {error.message}"
    return PlainResult(kind="json_schema", name="json_schema", passed=error is None, detail=detail)
