"""One run of a framework in the system's confinement: `inspect eval` or pytest, as the PR's
code, where and as a `python` system runs (`gate.systems.worker`).

The runner (`inspect_runner`, `pytest_runner`: the gate's own scripts, which import nothing of
the gate) is started by a system worker of kind `command`: as root it runs as the worker's
unprivileged uid, with no gate credentials, its HOME and TMPDIR private. It gets its request
as JSON on stdin and writes its one answer as JSON on a copy of stdout it took before any of
the checkout's code ran; what the tests or the task print goes to stderr. The runner's source
is handed over as `-c` text, so nothing outside the Python installation and the run folder
needs to be readable by that uid.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gate.errors import GateError
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


def runner_env(environ: Mapping[str, str], extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if k not in DROPPED_ENV}
    return {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1", **extra}


def run_confined(
    runner: str,
    request: dict[str, Any],
    run_dir: Path,
    environ: Mapping[str, str],
    timeout_s: float,
    key: str,
) -> dict[str, Any]:
    """The runner `runner` (`inspect_runner` or `pytest_runner`) on `request`, in `run_dir`;
    its JSON answer. A runner that ends without one is a `FrameworkError` naming why."""
    source = (RUNNERS / f"{runner}.py").read_text(encoding="utf-8")
    spec = {"kind": "command", "command": [sys.executable, "-P", "-c", source]}
    worker = SystemWorker(spec, run_dir, environ, 1, key)
    late = f"the {runner.partition('_')[0]} run timed out after {timeout_s:g}s"
    try:
        out = worker.call(
            {"input": request, "timeout": timeout_s}, timeout_s + ANSWER_GRACE_S, late
        )
    except GateError as exc:
        raise FrameworkError(str(exc)) from None
    finally:
        worker.close()
    try:
        answer = json.loads(str(out))
    except json.JSONDecodeError:
        raise FrameworkError(f"the {runner} gave no answer: {str(out)[-300:]!r}") from None
    if not isinstance(answer, dict):
        raise FrameworkError(f"the {runner} gave no answer")
    return answer
