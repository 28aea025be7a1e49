"""Exceptions of the gate, one per kind of failure.

`InputError` (exit code 2) is for anything the user wrote that we cannot accept: it names the
file, the line and the key so the message alone is enough to fix the input.
"""

from __future__ import annotations

from pathlib import Path


class GateError(Exception):
    """Base class of every error the gate reports without a traceback."""

    exit_code = 3


class InputError(GateError):
    """Bad configuration, case file, report or command-line usage (exit 2)."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.file = str(file) if file is not None else None
        self.line = line
        self.key = key
        self.message = message
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file:
            where = self.file
            if self.line:
                where += f":{self.line}"
            where += ": "
        key = f"key `{self.key}`: " if self.key else ""
        return f"{where}{key}{self.message}"


class SystemCallError(GateError):
    """The system under test could not produce an output (after retries)."""


class CheckInfraError(GateError):
    """A check could not be evaluated (sandbox or judge unavailable): the case is an error."""


class GitError(GateError):
    """A git operation needed by the PR flow failed."""
