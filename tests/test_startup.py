"""`gate run` imports only what one side needs: every PR pays its start-up twice."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from helpers.servers.git_http import git
from helpers.servers.world import REPO_ROOT

HEAVY = {"numpy", "git", "jinja2", "cmarkgfm", "jsonschema", "gate.render", "gate.compare",
         "gate.github", "gate.flow", "difflib",
         # the checks a case without them does not load
         "gate.checks.code", "gate.checks.python", "gate.checks.rubric", "gate.checks.judge",
         "gate.promptfoo.checks", "gate.promptfoo.inputs.csv_tests", "gate.sandbox"}  # fmt: skip


def test_gate_run_of_a_python_system_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("def answer(question):\n    return 'hi ' + question['q']\n")
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": {"q": "x"}, "expect": {"must_include": ["hi x"]}}) + "\n"
    )
    (tmp_path / "gate.yml").write_text(
        "cases: cases.jsonl\nsystem: {kind: python, target: 'app:answer'}\n"
    )
    git(tmp_path, "init", "-q")  # a checkout, as in the PR flow: provenance reads git
    git(tmp_path, "add", "-A")
    git(tmp_path, "-c", "user.name=a", "-c", "user.email=a@localhost", "commit", "-qm", "app")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(tmp_path / "c")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "gate", "run", "-q", "--out", "out"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "out/run.summary.json").read_text())["passed"] == 1
    meta = json.loads((tmp_path / "out/run.jsonl").read_text().splitlines()[0])
    assert meta["type"] == "meta" and len(meta["git_sha"]) == 40 and meta["git_dirty"] is False
    imported = set(re.findall(r"^import time:.*\| +(\S+)$", done.stderr, re.M))
    assert "gate.run.side" in imported  # the parse saw the imports
    heavy = {m for m in imported for h in HEAVY if m == h or m.startswith(h + ".")}
    assert not heavy, sorted(heavy)
