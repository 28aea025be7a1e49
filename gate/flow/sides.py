"""Running the sides: `gate run` of base and head, each in its own Python process, at once.

Each side runs isolated (`gate.interpreter`): neither the checkout's folder nor the job's
`PYTHONPATH` is on its import path, so none of the PR's modules runs as the gate; a `python`
system imports a module of the same name from two checkouts, which one process cannot hold.
Each runs under a keeper (`gate.process_tree`): when it ends, or passes its wall-clock limit,
every process it started ends too, whatever session it moved to, so its output pipe closes.
The two sides share the response cache; their progress is streamed with the side as prefix.
When one side fails for good, the other is stopped, but never during its start: its own bad
input is always seen, whichever side failed first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from pydantic import BaseModel, ConfigDict

from gate.errors import InputError
from gate.inputs.shard import Shard
from gate.interpreter import python_command
from gate.process_tree import supervised
from gate.providers.secrets import without_gate_credentials
from gate.report.io import report_paths

SIDES = ("base", "head")
TAIL_LINES = 20
STARTUP_GRACE_S = 60.0  # how long a failure waits for the other side to finish starting
TIME_LIMIT_S = 3 * 3600.0  # a side's wall-clock limit, unless $GATE_SIDE_TIMEOUT_S says
PIPE_GRACE_S = 5.0  # how long the end of a side's output may lag behind its end


# --- running the sides -----------------------------------------------------------------------


class SideStatus(BaseModel):
    """How one side's `gate run` ended (in the sharded mode: one side of one shard)."""

    model_config = ConfigDict(frozen=True)

    side: Literal["base", "head"]
    returncode: int | None = None  # None: it never came to an end
    error: str | None = None  # the run's last error line, when it failed
    shard: str | None = None  # `I/N` in the sharded mode
    complete: bool = False  # the run wrote its whole report (also when every case errored)

    @property
    def who(self) -> str:
        return f"the {self.side} side" + (f" of shard {self.shard}" if self.shard else "")

    @property
    def input_error(self) -> bool:
        return self.returncode == InputError.exit_code

    @property
    def fatal(self) -> bool:
        """A failure that leaves no report to compare, on either side. A run whose every case
        ended in an error (exit 3) did write its report: the comparison names the errors."""
        return self.returncode not in (0, None) and not self.complete


@dataclass(frozen=True)
class MoreRuns:
    """A round of `repeats: auto`: `repeats` more runs of the cases listed in `cases_from`,
    added to the side's report (`gate run --append`)."""

    cases_from: Path
    repeats: int


@dataclass
class Side:
    """One side of a suite as a `gate run` process: what it runs (`gate_run_args` makes its
    arguments) and, once started, how it ended."""

    name: Literal["base", "head"]
    root: Path  # the checkout whose system runs
    config: Path  # the measuring gate.yml (the base's): cases, checks, judge, prices, limits
    suite: str
    report: Path  # OUT/LABEL.jsonl
    system_config: Path | None = None  # the side's own gate.yml (the head's): its system
    heldout_detail: Path | None = None  # a folder for the full report, held-out cases shown
    shard: Shard | None = None  # only this shard of the suite
    use_cache: bool = True
    checks_root: Path | None = None  # the checkout whose code judges (the base's)
    added_cases: Path | None = None  # the gate.yml whose suite adds cases (the head's)
    cache_dir: Path | None = None  # the one response cache of every side of the flow
    record: Path | None = None  # write round 0's answers here (for re-judging them)
    answers: Path | None = None  # re-judge these recorded answers instead of calling
    cases_from: Path | None = None  # only these cases (with `answers`: the re-judged ones)
    repeats: int | None = None  # runs per case (with `answers`: round 0's)
    returncode: int | None = field(default=None, init=False)
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES), init=False)

    @property
    def error_line(self) -> str:
        for line in reversed(self.tail):
            if line.startswith("gate: error: "):
                return line.removeprefix("gate: error: ")
        return self.tail[-1] if self.tail else "no output"

    @property
    def detail_report(self) -> Path | None:
        """The full held-out report, when the side writes one."""
        if self.heldout_detail is None:
            return None
        return self.heldout_detail / self.report.name

    def status(self) -> SideStatus:
        failed = self.returncode not in (0, None)
        return SideStatus.model_validate(
            {
                "side": self.name,
                "returncode": self.returncode,
                "error": self.error_line if failed else None,
                "shard": str(self.shard) if self.shard else None,
                "complete": report_paths(self.report.parent, self.report.stem)[1].is_file(),
            }
        )


def gate_run_args(side: Side, more: MoreRuns | None = None) -> list[str]:
    """The side's `gate run` command line, from `run` on. Names are joined to their option
    (`--suite=NAME`): one may start with `-`. The flow's paths are absolute."""
    args = [
        "run", "-c", str(side.config), f"--suite={side.suite}", "--root", str(side.root),
        "--out", str(side.report.parent), f"--label={side.report.stem}",
    ]  # fmt: skip
    if side.shard is not None:
        args += ["--shard", str(side.shard)]
    if not side.use_cache:
        args.append("--no-cache")
    paths = {
        "--system-config": side.system_config,
        "--heldout-detail": side.heldout_detail,
        "--checks-root": side.checks_root,
        "--added-cases": side.added_cases,
        "--cache-dir": side.cache_dir,
        "--answers": side.answers,
    }
    if more is None:  # round 0: records its answers, takes its own case list and repeats
        paths |= {"--record": side.record, "--cases-from": side.cases_from}
    args += [arg for flag, path in paths.items() if path is not None for arg in (flag, str(path))]
    if more is not None:
        args += ["--cases-from", str(more.cases_from), "--append", "--repeats", str(more.repeats)]
    elif side.repeats is not None:
        args += ["--repeats", str(side.repeats)]
    return args


def time_limit(env: Mapping[str, str]) -> float:
    """A side's wall-clock limit in seconds: `$GATE_SIDE_TIMEOUT_S`, else three hours."""
    try:
        return float(env.get("GATE_SIDE_TIMEOUT_S") or TIME_LIMIT_S)
    except ValueError:
        return TIME_LIMIT_S


def side_env(environ: Mapping[str, str], cache_dir: Path) -> dict[str, str]:
    env = without_gate_credentials(environ)
    env["GATE_CACHE_DIR"] = str(cache_dir)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _stream(process: subprocess.Popen[str], side: Side, out: TextIO, lock: threading.Lock) -> None:
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.rstrip("\n")
        side.tail.append(line)
        shown = line if line.startswith(f"[{side.name}]") else f"[{side.name}] {line}"
        with lock:
            out.write(shown + "\n")
            out.flush()


def run_sides(
    sides: Sequence[Side], env: Mapping[str, str], out: TextIO, more: MoreRuns | None = None
) -> None:
    """`gate run` for each side at once (`more`: a round of more runs of some cases); a fatal
    failure of one stops the others, each once it has started its cases (see `_started`)."""
    lock = threading.Lock()
    procs: list[tuple[Side, subprocess.Popen[str], threading.Thread]] = []
    try:
        for side in sides:
            if more is None:  # a report left by an earlier run would read as started
                side.report.unlink(missing_ok=True)
            run = python_command("-m", "gate", *gate_run_args(side, more), environ=env)
            argv = supervised(run, time_limit(env), python_command(environ=env))
            proc = subprocess.Popen(
                argv,
                cwd=side.root,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
            thread = threading.Thread(target=_stream, args=(proc, side, out, lock), daemon=True)
            thread.start()
            procs.append((side, proc, thread))
        pending = list(procs)
        stop_by: float | None = None  # set by the first fatal failure
        while pending:
            for item in list(pending):
                side, proc, thread = item
                if stop_by is not None and (_started(side, more) or time.monotonic() > stop_by):
                    _kill(proc)
                try:
                    side.returncode = proc.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    continue
                thread.join(PIPE_GRACE_S)  # the keeper ended every writer; never wait on more
                pending.remove(item)
                if stop_by is None and side.status().fatal:
                    stop_by = time.monotonic() + STARTUP_GRACE_S
    finally:
        for _, proc, thread in procs:
            if proc.poll() is None:
                _kill(proc)
            thread.join(timeout=5)


def _started(side: Side, more: MoreRuns | None) -> bool:
    """Past its start: its config, cases and system were accepted and it opened its report.
    A side that fails is only ever stopped from here on, so whether the other side's input was
    bad (exit 2, the user's to fix) never depends on which side failed first."""
    return more is not None or side.report.is_file()


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
