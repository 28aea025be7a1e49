"""Deterministic text checks: pure functions of the output text."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gate.checks.base import CheckContext
from gate.report.models import CheckResult

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
        return [CheckResult(name=f"include:{self.needle}", passed=found, detail=detail)]


@dataclass(frozen=True)
class MustNotInclude:
    needle: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        index = output.text.casefold().find(self.needle.casefold())
        detail = "" if index < 0 else f"{_excerpt(self.needle)!r} found at character {index}"
        return [CheckResult(name=f"exclude:{self.needle}", passed=index < 0, detail=detail)]


@dataclass(frozen=True)
class Regex:
    pattern: str
    negate: bool = False

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        match = re.search(self.pattern, output.text)
        name = f"{'not_regex' if self.negate else 'regex'}:{self.pattern}"
        if self.negate:
            detail = f"matched {_excerpt(match.group(0))!r}" if match else ""
            return [CheckResult(name=name, passed=match is None, detail=detail)]
        return [
            CheckResult(name=name, passed=match is not None, detail="" if match else "no match")
        ]


@dataclass(frozen=True)
class Equals:
    expected: str

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        ok = output.text.strip() == self.expected.strip()
        detail = "" if ok else f"expected {_excerpt(self.expected.strip())!r}"
        return [CheckResult(name="equals", passed=ok, detail=detail)]


@dataclass(frozen=True)
class Length:
    limit: int
    maximum: bool

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        size = len(output.text)
        ok = size <= self.limit if self.maximum else size >= self.limit
        name = f"{'max' if self.maximum else 'min'}_chars:{self.limit}"
        return [CheckResult(name=name, passed=ok, detail="" if ok else f"{size} characters")]


@dataclass(frozen=True)
class Json:
    schema: dict[str, Any] | None = None

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        try:
            value = json.loads(_strip_fence(output.text))
        except json.JSONDecodeError as exc:
            results = [CheckResult(name="json", passed=False, detail=f"not JSON: {exc.msg}")]
            if self.schema is not None:
                results.append(CheckResult(name="json_schema", passed=False, detail="not JSON"))
            return results
        results = [CheckResult(name="json", passed=True)]
        if self.schema is not None:
            import jsonschema  # slow to import; only suites that use schemas pay for it

            validator = jsonschema.validators.validator_for(self.schema)(self.schema)
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
            detail = ""
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                detail = f"{where}: {error.message}"
            results.append(CheckResult(name="json_schema", passed=error is None, detail=detail))
        return results


_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n(.*?)\n\s*```\s*$", re.DOTALL)


def _strip_fence(text: str) -> str:
    """Models often wrap JSON in a ```json fence; the content is what counts."""
    match = _FENCE.match(text)
    return match.group(1) if match else text
