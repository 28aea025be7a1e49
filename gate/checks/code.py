"""Code checks (`must_compile`, `hidden_tests`, `test_code`): extraction here, execution in
the sandbox that the runner passes in through `CheckContext` (see `gate.sandbox`)."""

from __future__ import annotations

import re
import textwrap
from typing import TYPE_CHECKING

from gate.checks.base import CheckContext
from gate.errors import CheckInfraError
from gate.report.models import CheckResult

if TYPE_CHECKING:
    from gate.inputs.cases import Case
    from gate.report.output import SystemOutput

PYTHON_LANGUAGES = frozenset({"python", "python3", "py", "py3"})
_FENCE = re.compile(
    r"```[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)^[ \t]*```", re.DOTALL | re.MULTILINE
)
# An answer cut off by the token limit leaves its last fence open.
_OPEN_PYTHON = re.compile(r"```[ \t]*(?:python3?|py3?)\b[^\n]*\n(?P<body>.*)\Z", re.DOTALL | re.I)


def extract_code(text: str) -> str:
    """The first ```python block (also ```py, any case); else the first unlabelled ``` block;
    else an unclosed ```python block; else the whole text."""
    text = text.replace("\r\n", "\n")
    blocks = [(m["lang"].lower(), m["body"]) for m in _FENCE.finditer(text)]
    for wanted in (lambda lang: lang in PYTHON_LANGUAGES, lambda lang: not lang):
        for lang, body in blocks:
            if wanted(lang):
                return textwrap.dedent(body)
    unclosed = _OPEN_PYTHON.search(text)
    return textwrap.dedent(unclosed["body"]) if unclosed else text


class CodeChecks:
    """All code checks of a case, run together in one sandboxed execution."""

    def run(self, output: SystemOutput, case: Case, ctx: CheckContext) -> list[CheckResult]:
        if ctx.sandbox is None:
            raise CheckInfraError("code checks need the sandbox, which is not available")
        return ctx.sandbox.run_code_checks(extract_code(output.text), case)
