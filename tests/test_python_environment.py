"""The gate's own Pythons ignore the job's Python environment (issue 28, class 3).

A job with `PYTHONPATH: src` (a `src/` layout) and a PR that adds `src/sitecustomize.py` (and
a `src/yaml.py` shadowing a module the gate imports): in a Python started in the normal mode
that code runs before the gate's, as the gate (root in the container, the job token in its
environment), and here it would forge exit 0. Started as the Action's image starts it (`python
-I`), no process of the gate runs it: not `gate action`, not a side's `gate run`, not the
system's worker before it confined itself. The system, whose module imports from `src/`, still
finds it: it gets `PYTHONPATH` once confined. A `gate` started in the normal mode has run the
PR's sitecustomize once, before any of the gate's code; it starts itself again isolated, so
what that code did in its process (here: exit 0 at exit) does not reach the verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.drop_box import open_file
from helpers.pr_scenarios import base_files, drop, make_project, visible
from helpers.servers.world import WORDS, World, project_files, prompt

from gate.interpreter import python_command

# The system: app/bot.py imports its words from src/, which only PYTHONPATH makes importable.
BOT = (
    "from wordlist import words\n\n\ndef answer(inputs):\n    return {'text': ' '.join(words())}\n"
)
WORDLIST = """
from pathlib import Path

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "support.md"


def words():
    return [l.split(":", 1)[1].strip() for l in PROMPT.read_text().splitlines() if l.startswith("say:")]
"""
# The PR's code for the gate's interpreters: it notes where it ran, and forges exit 0.
FORGE = """
import atexit, json, os, sys

with open({log!r}, "a") as log:
    log.write(json.dumps({{"who": {who!r}, "uid": os.getuid(), "argv": sys.orig_argv}}) + "\\n")
atexit.register(os._exit, 0)
"""
SHADOW = "import os\nos._exit(0)\n"  # a yaml.py: the gate imports yaml


@pytest.fixture
def log() -> Iterator[Path]:
    """A file any uid may append to: where the PR's code says it ran."""
    with open_file("gate-pythonpath-", "ran.jsonl") as path:
        yield path


def ran(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def pr_code(log: Path) -> dict[str, str]:
    return {
        "src/sitecustomize.py": FORGE.format(log=str(log), who="sitecustomize"),
        "src/yaml.py": FORGE.format(log=str(log), who="yaml") + SHADOW,
    }


def project(root: Path, log: Path) -> Path:
    """A repository whose system needs `PYTHONPATH=src`; its working tree is a PR that drops
    `fees` from the prompt (-12.5 points) and brings the code above."""
    files = {**base_files(), "app/bot.py": BOT, "src/wordlist.py": WORDLIST}
    author = make_project(root, files)
    author.write({"prompts/support.md": drop("fees")["prompt"], **pr_code(log)})
    return author.path


def gate_check(root: Path, argv: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env |= {"PYTHONPATH": "src", "GATE_CACHE_DIR": str(root.parent / "cache")}
    return subprocess.run(
        [*argv, "check", "--base", "main", "--format", "markdown"],
        cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def test_gate_check_started_isolated_runs_none_of_the_prs_python(tmp_path: Path, log: Path) -> None:
    root = project(tmp_path / "repo", log)
    done = gate_check(root, python_command("-m", "gate"))
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "❌ **Eval Gate: fail** (support)" in visible(done.stdout)
    assert ran(log) == []  # not the gate, not a side, not the worker, not the system


def test_a_gate_started_normally_starts_again_isolated(tmp_path: Path, log: Path) -> None:
    """`python -m gate` with PYTHONPATH=src: the PR's sitecustomize runs once, in the first
    process, before any code of the gate; its forged exit never comes, the verdict is the
    regression's, and no later process runs it again."""
    root = project(tmp_path / "repo", log)
    done = gate_check(root, [sys.executable, "-m", "gate"])
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "❌ **Eval Gate: fail** (support)" in visible(done.stdout)
    (first,) = ran(log)
    assert first["who"] == "sitecustomize" and first["argv"][1:4] == ["-m", "gate", "check"]


def test_gate_action_and_its_processes_run_none_of_the_prs_python(world: World, log: Path) -> None:
    world.base({**project_files("base", WORDS), "app/bot.py": BOT, "src/wordlist.py": WORDLIST})
    words = [w for w in WORDS if w != "fees"]
    world.pr({"prompts/support.md": prompt(words), **pr_code(log)}, "drop fees; add src code")
    world.checkout()
    env = world.environ(world.event()) | {"PYTHONPATH": "src"}
    env.pop("GATE_CACHE_DIR")
    run = world.run(env)
    assert run.code == 1, run.log[-3000:]
    assert run.outputs["verdict"] == "fail"
    assert ran(log) == []
