"""A git repository whose system under test is a noisy model: each case passes with its own
probability, drawn from a generator seeded by (seed, case id, repeat), so a run is reproducible
and repeat k of a case is its own draw. `model.json` (watched) holds the probabilities, the
seed and the tokens per answer; a PR edits it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.servers.git_http import git
from helpers.servers.world import REPO_ROOT

APP = """
import json
import random
from pathlib import Path

HERE = Path(__file__).parent


def answer(inputs, repeat=0):
    model = json.loads((HERE / "model.json").read_text())
    p = model["p"].get(inputs["id"], model.get("default", 1.0))
    draw = random.Random(f"{model.get('seed', 0)}:{inputs['id']}:{repeat}").random()
    text = "yes" if draw < p else "no"
    tokens = model.get("tokens", 10)
    return {"text": text, "usage": {"prompt_tokens": tokens, "completion_tokens": 1}}
"""


def case_rows(ids: list[str], severities: dict[str, str] | None = None) -> str:
    rows = [
        {
            "id": i,
            "task": "noisy",
            "severity": (severities or {}).get(i, "major"),
            "input": {"q": i},
            "expect": {"must_include": ["yes"]},
        }
        for i in ids
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def gate_yml(**keys: Any) -> str:
    config = {
        "watch": ["model.json"],
        "concurrency": 4,
        **keys,
        "suites": [
            {
                "name": "noisy",
                "cases": "cases.jsonl",
                "system": {"kind": "python", "target": "app:answer"},
            }
        ],
    }
    return json.dumps(config, indent=1) + "\n"  # YAML is a superset of JSON


def model_json(
    p: dict[str, float], *, seed: int = 0, tokens: int = 10, default: float = 1.0
) -> str:
    return json.dumps({"p": p, "seed": seed, "tokens": tokens, "default": default}) + "\n"


def make_repo(
    root: Path,
    ids: list[str],
    p: dict[str, float],
    *,
    severities: dict[str, str] | None = None,
    seed: int = 0,
    tokens: int = 10,
    **keys: Any,
) -> Path:
    """A repository on `main` holding the noisy project; returns its path."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    files = {
        "gate.yml": gate_yml(**keys),
        "cases.jsonl": case_rows(ids, severities),
        "app.py": APP,
        "model.json": model_json(p, seed=seed, tokens=tokens),
    }
    for name, text in files.items():
        (root / name).write_text(text)
    commit(root, "base")
    return root


def commit(root: Path, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)


def gate(
    *args: str, cwd: Path, cache: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    full.update(
        {"PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(cache or cwd.parent / "cache")}
    )
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], cwd=cwd, env=full, capture_output=True, text=True,
        timeout=600, check=False,
    )  # fmt: skip
