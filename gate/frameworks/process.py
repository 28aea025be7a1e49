"""A framework's process for one side: `inspect eval` or pytest as the PR's code, where and
as a `python` system runs (`gate.systems.worker`), alive as long as the side's runner.

The runner (`inspect_runner`, `pytest_runner`: the gate's own modules, which import nothing of
the gate) is the target of a `python` system's worker: as root it runs as the worker's
unprivileged uid, with no gate credentials, its HOME and TMPDIR private. The module is copied
into a folder of the gate's, first on the worker's `PYTHONPATH`, under a name the run folder
cannot hold (`overlay.RESERVED`), so nothing of the checkout stands in for it; it imports what
it needs before the run folder is on its import path. Each request is one call: JSON in,
JSON back on the worker's own answer pipe; what the tests or the task print is the run's
output, never the answer. The worker starts the runner once, so inspect_ai is imported and the
task loaded once per side, whatever the rounds of `repeats: auto` ask later.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.errors import GateError
from gate.frameworks.overlay import RESERVED
from gate.systems.worker import ANSWER_GRACE_S, SystemWorker, system_identity

RUNNERS = Path(__file__).parent
# The gate's to set: options and plugins the job's environment would add to a run.
DROPPED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "INSPECT_EVAL_MODEL_ARGS", "INSPECT_LOG_DIR")


class FrameworkError(GateError):
    """A framework's run that produced no results (it crashed, timed out, could not collect)."""

    exit_code = 3


def writable_folder(parent: Path, name: str) -> Path:
    """A folder the system's uid may write (its logs, its cache): the gate's own otherwise."""
    folder = parent / name
    folder.mkdir(mode=0o700, exist_ok=True)
    uid = system_identity()
    if uid is not None:
        os.chown(folder, uid, uid)
    return folder


def runner_env(environ: Mapping[str, str], modules: Path) -> dict[str, str]:
    """The side's environment for the framework: `modules` (the runner's folder) first on
    `PYTHONPATH`, the options the gate sets itself dropped."""
    env = {k: v for k, v in environ.items() if k not in DROPPED_ENV}
    path = os.pathsep.join(p for p in (str(modules), env.get("PYTHONPATH", "")) if p)
    return {**env, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}


class FrameworkProcess:
    """The runner `framework` (`inspect` or `pytest`) in the run folder `run_dir`, started
    once; `call` hands it one request. `scratch` is a folder of the gate's for its module;
    `key` is gate.yml's key a refusal names (`inspect.task`, `pytest.args`)."""

    def __init__(
        self, framework: str, run_dir: Path, scratch: Path, environ: Mapping[str, str], key: str
    ) -> None:
        self.framework = framework
        modules = scratch / "runner"
        modules.mkdir(mode=0o755)
        module = f"{RESERVED}{framework}_runner"
        shutil.copyfile(RUNNERS / f"{framework}_runner.py", modules / f"{module}.py")
        (modules / f"{module}.py").chmod(0o644)
        spec = {"kind": "python", "target": f"{module}:answer"}
        self.worker = SystemWorker(spec, run_dir, runner_env(environ, modules), 1, key)

    def call(self, request: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """The runner's answer to `request`; a `FrameworkError` naming why there is none."""
        late = f"the {self.framework} run timed out after {timeout_s:g}s"
        message = {"input": request, "repeat": 0, "timeout": timeout_s}
        try:
            answer = self.worker.call(message, timeout_s + ANSWER_GRACE_S, late)
        except GateError as exc:
            raise FrameworkError(str(exc)) from None
        if not isinstance(answer, dict):
            raise FrameworkError(f"the {self.framework} runner gave no answer")
        return answer

    def close(self) -> None:
        self.worker.close()
