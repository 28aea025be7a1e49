"""`gate init` in a repository whose evals are an inspect_ai task and a pytest eval folder:
each becomes a suite of its framework, the prompts the code reads are watched, and the written
gate.yml loads (nothing of the repository runs)."""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers.cli import run_gate
from helpers.framework_projects import files

from gate.inputs.config import load_config


def test_gate_init_writes_suites_for_an_inspect_task_and_an_eval_test_folder(
    tmp_path: Path,
) -> None:
    for name, text in files().items():
        if name != "gate.yml":
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name).write_text(text)
    done = run_gate("init", "--dir", str(tmp_path))
    assert done.code == 0, done.err
    assert "the inspect task evals/support.py@support" in done.out
    assert "the tests in tests/evals/" in done.out
    data = yaml.safe_load((tmp_path / "gate.yml").read_text())
    assert data["watch"] == ["prompts/**"]
    assert data["suites"] == [
        {"name": "support", "inspect": {"task": "evals/support.py@support"}},
        {"name": "tests-evals", "pytest": {"args": ["tests/evals"]}},
    ]
    assert not (
        tmp_path / "evals" / "cases.jsonl"
    ).exists()  # no starter cases: the evals are there
    loaded = load_config(tmp_path / "gate.yml")
    assert [s.framework for s in loaded.config.suites] == ["inspect", "pytest"]
