"""The package as a user installs it: the wheel, built from a release tag of this tree as
`pip install git+URL@TAG` builds it, installed with its dependencies into a fresh virtualenv
outside the clone, then the README's path for a newcomer
in a scratch repository of their own: `gate init`, `gate validate`, `gate check` (and `gate
demo`, whose bundled app is package data).

Marked `wheel` and left out of the default run (pyproject.toml's addopts): it needs the
package index (or pip's cache) for the dependencies, and the README's test command stays
offline. `.ci/run` runs it: `pytest -m wheel tests/test_wheel_install.py`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
from helpers.cli import REPO
from helpers.servers.git_http import git
from helpers.support_bot import adopt, real_cases, regressing_pr, support_bot

from gate import __version__

pytestmark = pytest.mark.wheel


def sources(into: Path) -> Path:
    """What the wheel is built from: pyproject.toml, the README and every folder the package
    maps (a copy, so the build leaves nothing in the clone)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    folders = set(project["tool"]["setuptools"]["package-dir"].values())
    for folder in folders:
        shutil.copytree(REPO / folder, into / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, into / name)
    return into


def run(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip


def clean_env(tmp_path: Path) -> dict[str, str]:
    """The user's shell: no PYTHONPATH into the clone, no virtualenv of ours, no provider keys."""
    drop = ("PYTHON", "VIRTUAL_ENV", "GITHUB_", "INPUT_", "OPENAI_", "ANTHROPIC_", "GATE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PATH"] = os.pathsep.join(
        p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(REPO))
    )
    env["GATE_CACHE_DIR"] = str(tmp_path / "cache")
    return env


def test_the_wheel_installs_outside_the_clone_and_gates_a_pr(tmp_path: Path) -> None:
    started = time.monotonic()
    env = clean_env(tmp_path)
    src = sources(tmp_path / "src")
    # Built from a release tag of a git repository, as the README's install line builds it
    # (`pipx install git+https://github.com/eval-gate/eval-gate@v1`: pip clones, then builds).
    git(src, "init", "-q", "-b", "main")
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "release")
    git(src, "tag", f"v{__version__}")
    url = f"git+file://{src}@v{__version__}"
    built = run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", tmp_path / "dist",
                url, cwd=tmp_path, env=env)  # fmt: skip
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("eval_gate-*.whl")
    assert wheel.name.startswith(f"eval_gate-{__version__}-py3-none-any")
    venv = tmp_path / "venv"
    python = shutil.which("python3", path=env["PATH"]) or sys.executable
    assert run(python, "-m", "venv", venv, cwd=tmp_path, env=env).returncode == 0
    installed = run(venv / "bin/pip", "install", "-q", wheel, cwd=tmp_path, env=env)
    assert installed.returncode == 0, installed.stderr
    gate = venv / "bin/gate"
    where = run(venv / "bin/python", "-c", "import gate; print(gate.__file__)", cwd=tmp_path,
                env=env)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # not the clone's

    repo = support_bot(tmp_path / "acme-bot")
    init = run(gate, "init", cwd=repo, env=env)
    assert init.returncode == 0, init.stderr
    assert "system: python `bot.app:answer`" in init.stdout
    for name in ("gate.yml", "evals/cases.jsonl", ".github/workflows/eval-gate.yml"):
        assert f"wrote {name}" in init.stdout
    assert (repo / ".github/workflows/eval-gate.yml").read_text() == (
        REPO / "examples/pr-gate.yml"
    ).read_text()  # the workflow the README shows; the bot needs no provider key
    real_cases(repo, "evals/cases.jsonl")
    validated = run(gate, "validate", cwd=repo, env=env)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert validated.stdout.rstrip().endswith("ok")
    adopt(repo)
    regressing_pr(repo)
    checked = run(gate, "check", "--base", "main", "--format", "markdown", cwd=repo, env=env)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "verdict: fail" in checked.stderr
    assert "❌ **Eval Gate: fail** (app)" in checked.stdout
    assert "returns\\-1" in checked.stdout and "30 days" in checked.stdout
    assert git(repo, "status", "--porcelain") == "M bot/prompts/support.txt"

    demo = run(gate, "demo", "--dir", tmp_path / "demo", cwd=tmp_path, env=env)
    assert demo.returncode == 0, demo.stderr
    assert "verdict: fail" in demo.stdout
    # A number to read, not a limit: about 20 s with pip's cache warm on 2 idle cores.
    print(f"wheel test: {time.monotonic() - started:.1f}s")
