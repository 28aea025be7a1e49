"""The check interface: a check reads a system output and yields named results.

Checks are pure unless they are given a service through `CheckContext` (the sandbox for code
checks and for the team's own Python checks, a judge for rubrics); they never reach for I/O on
their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel

from gate.report.models import CheckResult, JudgeCall

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput


class JudgeVerdict(BaseModel):
    """The judge's results for one output, and what asking it cost."""

    results: list[CheckResult]
    call: JudgeCall


class JudgeReply(BaseModel):
    """What the judge answered to messages of a check's own (promptfoo's `llm-rubric`)."""

    text: str
    call: JudgeCall


class CodeRunner(Protocol):
    """What code checks need from a sandbox (see `gate.sandbox`)."""

    def run_code_checks(self, code: str, case: Case) -> list[CheckResult]: ...

    def protections(self) -> dict[str, Any]:
        """Which isolation measures are active (recorded in the report's metadata)."""
        ...


class PythonCheckRunner(Protocol):
    """What `expect.python` checks need: the team's function, run in isolation (see
    `gate.sandbox`), called with the output and the case as plain data."""

    def call_check(self, target: str, output: Any, case: dict[str, Any]) -> Any:
        """The plain data the check returned; raises `CheckInfraError` saying why there is
        none (it raised, timed out, did not import, returned something that is not data).
        A promptfoo assertion passes promptfoo's `(output, context)` instead."""
        ...


class Judge(Protocol):
    """What rubric checks need from a judge model (see `gate.checks.judge`)."""

    def score(self, case: Case, output: SystemOutput) -> JudgeVerdict: ...

    def ask(self, messages: list[tuple[str, str]]) -> JudgeReply:
        """The judge's answer to these `(role, content)` messages (raises CheckInfraError)."""
        ...


@dataclass
class CheckContext:
    """Services passed in to checks; absent services make their checks an error."""

    sandbox: CodeRunner | None = None
    judge: Judge | None = None
    python: PythonCheckRunner | None = None
    graders: dict[str, Judge] = field(default_factory=dict)  # llm-rubric's, by `ProviderSpec.key`


class Check(Protocol):
    """A configured check for one case."""

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]: ...
