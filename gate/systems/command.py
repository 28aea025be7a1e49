"""`command` kind: a program run in the side's checkout, case JSON on stdin, answer on stdout.

Each call is run by the system's worker process (`gate.systems.worker`): as root, the program
runs as the worker's unprivileged uid, never as the gate's."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.inputs.config import CommandSystem
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest
from gate.systems.worker import ANSWER_GRACE_S, SystemWorker


class CommandProcessSystem:
    kind = "command"

    def __init__(self, config: CommandSystem, env: SystemEnv) -> None:
        self.config = config
        self.root = env.root
        self.environ = dict(env.environ)
        self.argv = [self._resolve(config.command[0]), *config.command[1:]]
        spec = {"kind": "command", "command": self.argv}
        self._worker = SystemWorker(spec, env.root, env.environ, env.concurrency, "system.command")

    def _resolve(self, program: str) -> str:
        """`{python}` is this interpreter; a relative path is relative to the checkout."""
        if program == "{python}":
            return sys.executable
        if "/" in program:
            path = (self.root / program).resolve()
            if not path.exists():
                raise InputError(
                    f"program {program!r} not found in {self.root}", key="system.command"
                )
            return str(path)
        if shutil.which(program, path=self.environ.get("PATH")) is None:
            raise InputError(f"program {program!r} not found on PATH", key="system.command")
        return program

    def call(self, request: SystemRequest) -> SystemOutput:
        """The program's stdout; it runs under the request's timeout, which the worker keeps."""
        call = {"input": request.input, "timeout": request.timeout_s}
        late = f"command timed out after {request.timeout_s:g}s"
        stdout = self._worker.call(call, request.timeout_s + ANSWER_GRACE_S, late)
        return parse_stdout(str(stdout))

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "command": self.config.command}

    def files(self) -> list[Path]:
        """The program and the arguments that are files of the checkout (a script)."""
        first, *rest = self.config.command
        named = [first] if "/" in first else []
        named += [arg for arg in rest if not arg.startswith(("-", "{"))]
        return [self.root / n for n in named if (self.root / n).is_file()]

    def close(self) -> None:
        self._worker.close()


def parse_stdout(stdout: str) -> SystemOutput:
    """A JSON object carrying `text`, or plain text."""
    stripped = stdout.strip()
    if stripped.startswith("{"):
        try:
            value = json.loads(stripped)
        except json.JSONDecodeError:
            return SystemOutput(text=stdout)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return SystemOutput.from_value(value, where="command")
    return SystemOutput(text=stdout.rstrip("\n"))
