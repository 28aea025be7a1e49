"""Real temp projects and real `gate` subprocesses, as a user runs them."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Done:
    code: int
    out: str
    err: str


def run_gate(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> Done:
    """Run the real CLI in a subprocess, as a user would."""
    full_env = {**os.environ, "PYTHONPATH": str(REPO), **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "gate", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Done(proc.returncode, proc.stdout, proc.stderr)


def gate_here(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    environ: dict[str, str] | None = None,
) -> Done:
    """`gate ARGS` in this process (`gate.cli.main`, what the executable calls): the same exit
    code and output as `run_gate`, without a Python's start-up (~0.5 s, more on a busy
    machine). For tests of what a command decides and prints; a test of the executable itself
    (exit codes as a shell sees them, isolation, signals, the job log) keeps `run_gate`.
    `check` and `run` still start their sides and systems as processes of their own. `env` is
    added to this process's environment for the call, `environ` replaces it; the environment,
    the working directory and the SIGTERM handler (`gate check` sets one) are put back."""

    from gate.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    saved_term = signal.getsignal(signal.SIGTERM)  # `gate check` sets its own
    try:
        if environ is not None:
            os.environ.clear()
            os.environ.update(environ)
        os.environ.update(env or {})
        if cwd is not None:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as exit_:  # --help, --version
                code = exit_.code if isinstance(exit_.code, int) else 1
    finally:
        signal.signal(signal.SIGTERM, saved_term)
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return Done(code, out.getvalue(), err.getvalue())


def clean_env(cwd: Path, **extra: str) -> dict[str, str]:
    """This process's environment as a developer's shell has it: no Actions variables
    (`GITHUB_*`, `INPUT_*`), the gate importable, a response cache beside `cwd`; plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    return {**env, "PYTHONPATH": str(REPO), "GATE_CACHE_DIR": str(cwd.parent / "cache"), **extra}


def gate_completed(
    *args: str, cwd: Path, environ: dict[str, str], real: bool = False
) -> subprocess.CompletedProcess[str]:
    """`gate ARGS` in `cwd` with exactly `environ`, as `subprocess.run` reports it: `run` and,
    with `real`, any command as the executable; the others in-process (`gate_here`)."""
    if real or args[0] == "run":
        return subprocess.run(
            [sys.executable, "-m", "gate", *args], cwd=cwd, env=environ, capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
    done = gate_here(*args, cwd=cwd, environ=environ)
    return subprocess.CompletedProcess(["gate", *args], done.code, done.out, done.err)


@dataclass
class Project:
    """A throwaway project folder with a gate.yml, case files and a python system."""

    root: Path

    def write(self, name: str, content: str) -> Path:
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
        return path

    def cases(self, name: str, rows: list[dict[str, Any]]) -> Path:
        return self.write(name, "".join(json.dumps(r) + "\n" for r in rows))

    def config(self, data: dict[str, Any], name: str = "gate.yml") -> Path:
        return self.write(name, yaml.safe_dump(data, sort_keys=False))

    def read_report(
        self, out: str = "reports", label: str = "run"
    ) -> tuple[dict, list[dict], dict]:
        lines = (self.root / out / f"{label}.jsonl").read_text().splitlines()
        summary = json.loads((self.root / out / f"{label}.summary.json").read_text())
        return json.loads(lines[0]), [json.loads(x) for x in lines[1:]], summary


ECHO_APP = """
import time

def answer(inputs):
    if inputs.get("raise"):
        raise RuntimeError("boom: " + inputs["raise"])
    if inputs.get("sleep"):
        time.sleep(float(inputs["sleep"]))
    return {"text": inputs.get("say", ""), "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
"""
