"""A system's descendants (issue 28, class 5): a side's whole process tree ends with its run.

The head's system starts a daemon on every call: a process in a session of its own that keeps
the side's output pipe open and would sleep for ten minutes. The gate used to wait on that pipe
for ever once both sides had finished, and the daemons outlived it. Now every side runs under a
keeper (`gate.process_tree`): the regression fails in seconds, through `gate check` and `gate
action`, and no daemon is left. A side that never ends stops at its wall-clock limit, as an
error.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.drop_box import open_file
from helpers.pr_scenarios import BOT, drop, make_project, visible
from helpers.servers.world import WORDS, World, project_files, prompt

from gate.interpreter import python_command
from gate.process_tree import supervised

# Appended to the head's app/bot.py: each call leaves a daemon holding stdout and stderr.
DAEMON = """
import subprocess, sys

_answer = answer


def answer(inputs):
    daemon = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True
    )
    with open({drop!r}, "a") as pids:
        pids.write(f"{{daemon.pid}}\\n")
    return _answer(inputs)
"""
SLOW = "\nimport time\n\ntime.sleep(120)\n"  # at import: a side that does not end


@pytest.fixture
def drop_box() -> Iterator[Path]:
    """A file any uid may append the daemons' pids to."""
    with open_file("gate-daemons-", "pids") as path:
        yield path
        for pid in pids(path):  # never leave one behind, whatever the test found
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def pids(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not stat.exists() or stat.read_text().rsplit(")", 1)[-1].split()[0] != "Z"


def test_the_keeper_ends_a_daemon_that_holds_its_output() -> None:
    daemon = "import subprocess, sys; p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'], start_new_session=True); print(p.pid, flush=True)"  # fmt: skip
    argv = supervised([sys.executable, "-c", daemon], 60, python_command())
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    assert not alive(int(done.stdout.split()[0]))


def test_the_keeper_stops_a_run_at_its_wall_clock_limit() -> None:
    argv = supervised([sys.executable, "-c", "import time; time.sleep(600)"], 1, python_command())
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3 and "wall-clock limit of 1 s" in done.stderr
    assert time.monotonic() - started < 20


def test_what_a_stopped_run_leaves_in_its_temporary_folder_goes_with_it() -> None:
    """A run the keeper stops (its limit here; the flow's stop alike) cannot clean up after
    itself: a folder it made in its TMPDIR, as a system worker's private HOME is made, is
    removed with the run."""
    made = "import sys, tempfile, time; print(tempfile.mkdtemp(prefix='gate-system-'), flush=True); time.sleep(600)"  # fmt: skip
    argv = supervised([sys.executable, "-c", made], 1, python_command())
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 3, done.stderr
    folder = Path(done.stdout.split()[0])
    assert folder.name.startswith("gate-system-") and folder.parent.name.startswith("gate-side-")
    assert not folder.parent.exists()


def test_gate_check_ends_every_daemon_and_does_not_wait_on_their_pipe(
    tmp_path: Path, drop_box: Path
) -> None:
    author = make_project(tmp_path / "repo")
    bot = BOT + DAEMON.format(drop=str(drop_box))
    author.write({"prompts/support.md": drop("fees")["prompt"], "app/bot.py": bot})
    started = time.monotonic()
    done = run_gate("check", "--base", "main", "--format", "markdown", cwd=author.path, env={"GATE_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    assert done.code == 1, done.err[-3000:]
    assert "❌ **Eval Gate: fail** (support)" in visible(done.out)
    assert time.monotonic() - started < 240
    assert len(pids(drop_box)) >= 40  # a daemon per call of the head's system
    assert [pid for pid in pids(drop_box) if alive(pid)] == []


def test_gate_action_ends_every_daemon(world: World, drop_box: Path) -> None:
    world.base(project_files("base", WORDS))
    head = project_files("head", [w for w in WORDS if w != "fees"])
    bot = str(head["app/bot.py"]) + DAEMON.format(drop=str(drop_box))
    world.pr({"prompts/support.md": prompt([w for w in WORDS if w != "fees"]), "app/bot.py": bot})
    world.checkout()
    run = world.run(world.environ(world.event()))
    assert run.code == 1, run.log[-3000:]
    assert run.outputs["verdict"] == "fail"
    assert pids(drop_box) and [pid for pid in pids(drop_box) if alive(pid)] == []


def test_a_side_that_does_not_end_stops_at_its_wall_clock_limit(tmp_path: Path) -> None:
    author = make_project(tmp_path / "repo")
    author.write({"prompts/support.md": drop("fees")["prompt"], "app/bot.py": BOT + SLOW})
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache"), "GATE_SIDE_TIMEOUT_S": "5"}
    started = time.monotonic()
    done = run_gate("check", "--base", "main", cwd=author.path, env=env)
    assert done.code == 3, done.out[-3000:] + done.err[-3000:]
    assert "wall-clock limit of 5 s" in done.out + done.err
    assert time.monotonic() - started < 100
