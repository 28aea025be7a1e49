"""`command` kind: a program run in the side's checkout, case JSON on stdin, answer on stdout."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from gate.errors import InputError, SystemCallError
from gate.inputs.config import CommandSystem
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest

STDERR_TAIL = 500


class CommandProcessSystem:
    kind = "command"

    def __init__(self, config: CommandSystem, env: SystemEnv) -> None:
        self.config = config
        self.root = env.root
        self.environ = dict(env.environ)
        self.argv = [self._resolve(config.command[0]), *config.command[1:]]

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
        try:
            done = subprocess.run(
                self.argv,
                input=json.dumps(request.input),
                capture_output=True,
                text=True,
                cwd=self.root,
                env=self.environ,
                timeout=request.timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise SystemCallError(f"command timed out after {request.timeout_s:g}s") from None
        except OSError as exc:
            raise SystemCallError(f"command could not start: {exc.strerror}") from None
        if done.returncode != 0:
            tail = done.stderr.strip()[-STDERR_TAIL:]
            raise SystemCallError(f"command exited with {done.returncode}: {tail}")
        return parse_stdout(done.stdout)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "command": self.config.command}

    def files(self) -> list[Path]:
        """The program and the arguments that are files of the checkout (a script)."""
        first, *rest = self.config.command
        named = [first] if "/" in first else []
        named += [arg for arg in rest if not arg.startswith(("-", "{"))]
        return [self.root / n for n in named if (self.root / n).is_file()]

    def close(self) -> None:
        pass


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
