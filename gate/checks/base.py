"""The check interface: a check reads a system output and yields named results.

Checks are pure unless they are given a service through `CheckContext` (the sandbox for code
checks, a judge for rubrics); they never reach for I/O on their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.systems.base import SystemOutput


class CheckResult(BaseModel):
    """One named boolean, e.g. `include:CAC`. `passed=None` means it needs human review."""

    model_config = ConfigDict(frozen=True)

    name: str
    passed: bool | None
    detail: str = ""
    score: int | None = Field(None, description="Judge score (0-2) for rubric dimensions")


class JudgeCall(BaseModel):
    """What one judge call cost: recorded with the attempt it graded, totalled in the summary."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False


class JudgeVerdict(BaseModel):
    """The judge's results for one output, and what asking it cost."""

    results: list[CheckResult]
    call: JudgeCall


class CodeRunner(Protocol):
    """What code checks need from a sandbox (see `gate.sandbox`)."""

    def run_code_checks(self, code: str, case: Case) -> list[CheckResult]: ...

    def protections(self) -> dict[str, Any]:
        """Which isolation measures are active (recorded in the report's metadata)."""
        ...


class Judge(Protocol):
    """What rubric checks need from a judge model (see `gate.checks.judge`)."""

    def score(self, case: Case, output: SystemOutput) -> JudgeVerdict: ...


@dataclass
class CheckContext:
    """Services passed in to checks; absent services make their checks an error."""

    sandbox: CodeRunner | None = None
    judge: Judge | None = None
    extras: dict[str, Any] = field(default_factory=dict)


class Check(Protocol):
    """A configured check for one case."""

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]: ...
