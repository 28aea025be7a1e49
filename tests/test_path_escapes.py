"""The head's config never reads a file of the host: every path it names that leads out of the
repository (a `..`, an absolute path, a symlink) is refused with exit 2, naming the file, the
line and the key, before either side runs. Through `gate check` on a real repository; the
file outside holds a marker that must appear nowhere in what the gate prints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.cli import gate_here
from helpers.pr_scenarios import config, dump, faq, jsonl, make_project

MARKER = "host-only-text-3f9a"
OUTSIDE = "outside.md"  # beside the repository


def chat(**system: str) -> dict[str, Any]:
    data = config()
    data["suites"][0]["system"] = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/support.md",
        **system,
    }
    return data


def with_suite(**suite: Any) -> dict[str, Any]:
    data = config()
    data["suites"].append({"name": "new", "system": data["suites"][0]["system"], **suite})
    return data


def replay(file: str) -> dict[str, Any]:
    data = config()
    data["suites"][0]["system"] = {"kind": "replay", "file": file}
    return data


MODEL = {"config/model.yaml": "model: m\n"}


def escapes(out: Path) -> dict[str, dict[str, str]]:
    """What each PR writes (`out`: the folder beside the repository)."""
    return {
        "prompt via ..": {**MODEL, "gate.yml": dump(chat(prompt=f"../{OUTSIDE}"))},
        "prompt via an absolute path": {
            **MODEL,
            "gate.yml": dump(chat(prompt=str(out / OUTSIDE))),
        },
        "prompt via a symlink": {**MODEL, "gate.yml": dump(chat(prompt="prompts/link.md"))},
        "model_config via ..": {**MODEL, "gate.yml": dump(chat(model_config=f"../{OUTSIDE}"))},
        "the model config's system prompt": {
            "config/model.yaml": f"model: m\nsystem: ../../{OUTSIDE}\n",
            "gate.yml": dump(chat()),
        },
        "a prompt include": {
            **MODEL,
            "gate.yml": dump(chat()),
            "prompts/support.md": f"{{% include '../../{OUTSIDE}' %}}\n",
        },
        "cases of a new suite via ..": {"gate.yml": dump(with_suite(cases="../outside.jsonl"))},
        "a case file that is a symlink": {"gate.yml": dump(with_suite(cases="evals/*.jsonl"))},
        "a replay file via ..": {"gate.yml": dump(replay("../outside.jsonl"))},
    }


# the file and line the error names, and its key (or what it says)
NAMED = {
    "prompt via ..": ("gate.yml:10:", "key `system.prompt`"),
    "prompt via an absolute path": ("gate.yml:10:", "key `system.prompt`"),
    "prompt via a symlink": ("gate.yml:10:", "key `system.prompt`"),
    "model_config via ..": ("gate.yml:9:", "key `system.model_config`"),
    "the model config's system prompt": ("config/model.yaml:2:", "key `system`"),
    "a prompt include": ("prompts/support.md:1:", "cannot load"),
    "cases of a new suite via ..": ("gate.yml:15:", "key `cases`"),
    "a case file that is a symlink": ("gate.yml:15:", "key `cases`"),
    "a replay file via ..": ("gate.yml:9:", "key `system.file`"),
}


@pytest.mark.parametrize("name", list(NAMED))
def test_a_path_out_of_the_repository_is_refused(tmp_path: Path, name: str) -> None:
    where, what = NAMED[name]
    (tmp_path / OUTSIDE).write_text(f"{MARKER}\n")
    rows = [{**row, "input": {"question": MARKER}} for row in faq(1, 2)]
    (tmp_path / "outside.jsonl").write_text(jsonl(rows))
    author = make_project(tmp_path / "repo")
    (author.path / "prompts" / "link.md").symlink_to(tmp_path / OUTSIDE)
    (author.path / "evals").mkdir()
    (author.path / "evals" / "new.jsonl").symlink_to(tmp_path / "outside.jsonl")
    author.write(escapes(tmp_path)[name])
    done = gate_here("check", "--base", "main", cwd=author.path,
                    env={"GATE_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    assert done.code == 2, done.out + done.err
    (error,) = [line for line in done.err.splitlines() if line.startswith("gate: error: ")]
    assert where in error and what in error and "outside the checkout" in error
    assert MARKER not in done.out + done.err
    assert not (author.path / ".eval-gate/reports").exists()  # refused before either side ran
