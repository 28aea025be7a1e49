"""Code checks (`must_compile`, `hidden_tests`, `test_code`): extraction here, execution in
the sandbox that the runner passes in through `CheckContext`."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from gate.checks.base import CheckContext, CheckResult
from gate.errors import CheckInfraError

if TYPE_CHECKING:
    from gate.cases import Case
    from gate.systems.base import SystemOutput

_PYTHON_FENCE = re.compile(r"```[ \t]*(?:python3?|py)[ \t]*\r?\n(.*?)^[ \t]*```", re.DOTALL | re.M)
_BARE_FENCE = re.compile(r"```[ \t]*\r?\n(.*?)^[ \t]*```", re.DOTALL | re.M)


def extract_code(text: str) -> str:
    """The first fenced ```python block; else the first bare ``` block; else the whole text."""
    match = _PYTHON_FENCE.search(text) or _BARE_FENCE.search(text)
    return match.group(1) if match else text


class CodeChecks:
    """All code checks of a case, run together in one sandboxed execution."""

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        if ctx.sandbox is None:
            raise CheckInfraError("code checks need the sandbox, which is not available")
        return ctx.sandbox.run_code_checks(extract_code(output.text), case)
