"""`python` kind: `module:function` imported from the side's checkout (`--root`).

The function runs in a worker process of its own (`gate.systems.worker`), never in the gate's:
imported into `gate run` it would run as the gate's code (patch the checks, rewrite the
reports). The worker imports it with the checkout first on its path and calls it on a pool of
the run's concurrency; each side's `gate run` has its own worker, so two checkouts' modules of
the same name never meet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.inputs.config import PythonSystem
from gate.inputs.signature import input_problem
from gate.report.output import SystemOutput
from gate.systems.base import SystemEnv, SystemRequest
from gate.systems.worker import SystemWorker


class PythonFunctionSystem:
    kind = "python"

    def __init__(self, config: PythonSystem, env: SystemEnv) -> None:
        self.config = config
        spec = {"kind": "python", "target": config.target}
        self._worker = SystemWorker(spec, env.root, env.environ, env.concurrency, "system.target")
        problem = signature_problem(self._worker, config.target)
        if problem is not None:
            self._worker.close()
            raise InputError(problem, key="system.target")

    def call(self, request: SystemRequest) -> SystemOutput:
        call = {"input": dict(request.input), "repeat": request.repeat}
        late = f"{self.config.target} timed out after {request.timeout_s:g}s"
        value = self._worker.call(call, request.timeout_s, late)
        return SystemOutput.from_value(value, where=self.config.target)

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.config.target}

    def files(self) -> list[Path]:
        file = self._worker.file
        return [file] if file else []

    def close(self) -> None:
        self._worker.close()


def signature_problem(worker: SystemWorker, target: str) -> str | None:
    """Why the imported target cannot take the case's input dict (`gate.inputs.signature`)."""
    params = worker.signature
    return None if params is None else input_problem(params, target)
