"""Pull requests that try to steer their own verdict, as files on a real project.

The project has two suites answered by one `python` system whose answers are the words its
prompt allows (`say: WORD` lines): `support` (40 FAQ cases in two files, `cases/*.jsonl`, five
per word) and `safety` (40 cases, one of them a blocker that needs the word `regulated`). A
regression is a word dropped from the prompt: `fees` fails five support cases (-12.5 points),
`regulated` fails the safety blocker alone (-2.5 points, within the threshold of 3).

Each scenario is the regression plus one edit of the instrument (the suites, their cases, the
policy's objects of measurement) that used to let it through; `pr_files` gives the files of the
PR (`None`: deleted), for a local repository or the GitHub world alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from helpers.servers.git_http import Author, git, make_bare

WORDS = ["CAC", "fees", "licensed", "minutes", "statement", "card", "branch", "loan"]
SAFE_WORDS = ["CAC", "card", "branch", "loan"]
ACCEPT = "eval-gate: accept"

BOT = """
from pathlib import Path

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "support.md"


def answer(inputs):
    lines = PROMPT.read_text().splitlines()
    words = [line.split(":", 1)[1].strip() for line in lines if line.startswith("say:")]
    return {"text": " ".join(words)}
"""


def prompt(words: list[str]) -> str:
    return "You are the support bot.\n" + "".join(f"say: {w}\n" for w in words)


def case(id: str, word: str, severity: str = "major", task: str = "faq", **extra: Any) -> dict:
    return {
        "id": id,
        "task": task,
        "severity": severity,
        "input": {"question": f"tell me about {word}"},
        "expect": {"must_include": [word]},
        **extra,
    }


def faq(first: int, last: int) -> list[dict]:
    return [case(f"faq-{i:03d}", WORDS[(i - 1) % len(WORDS)]) for i in range(first, last + 1)]


def safety() -> list[dict]:
    rows = [case("safe-001", "regulated", "blocker", task="safety")]
    rows += [
        case(f"safe-{i:03d}", SAFE_WORDS[i % len(SAFE_WORDS)], task="safety") for i in range(2, 41)
    ]
    return rows


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def config(**keys: Any) -> dict[str, Any]:
    system = {"kind": "python", "target": "app.bot:answer"}
    return {
        "watch": ["prompts/**"],
        "threshold": 3,
        **keys,
        "suites": [
            {"name": "support", "cases": "cases/*.jsonl", "system": system},
            {"name": "safety", "cases": "safety/cases.jsonl", "system": system},
        ],
    }


def dump(data: dict[str, Any]) -> str:
    return yaml.safe_dump(data, sort_keys=False)


def base_files(**keys: Any) -> dict[str, str]:
    return {
        "gate.yml": dump(config(**keys)),
        "app/__init__.py": "",
        "app/bot.py": BOT,
        "prompts/support.md": prompt([*WORDS, "regulated"]),
        "cases/faq.jsonl": jsonl(faq(1, 20)),
        "cases/more.jsonl": jsonl(faq(21, 40)),
        "safety/cases.jsonl": jsonl(safety()),
        "README.md": "# app\n",
    }


def drop(*words: str) -> dict[str, str]:
    """The regression: the prompt no longer allows `words`."""
    return {"prompt": prompt([w for w in [*WORDS, "regulated"] if w not in words])}


def _prompt_without(*words: str) -> dict[str, str | None]:
    return {"prompts/support.md": drop(*words)["prompt"]}


def _edit_config(edit: Callable[[dict[str, Any]], None]) -> dict[str, str | None]:
    data = config()
    edit(data)
    return {"gate.yml": dump(data)}


def _suite(data: dict[str, Any], name: str) -> dict[str, Any]:
    return next(s for s in data["suites"] if s["name"] == name)


# --- the scenarios: (what the PR does, its files) ------------------------------------------


def rename_suite() -> dict[str, str | None]:
    def edit(data: dict[str, Any]) -> None:
        _suite(data, "support")["name"] = "support-v2"

    return {**_prompt_without("fees"), **_edit_config(edit)}


def delete_blocker_suite() -> dict[str, str | None]:
    def edit(data: dict[str, Any]) -> None:
        data["suites"] = [s for s in data["suites"] if s["name"] != "safety"]

    return {**_prompt_without("regulated"), **_edit_config(edit), "safety/cases.jsonl": None}


FEES = [r["id"] for r in faq(1, 40) if r["expect"]["must_include"] == ["fees"]]


def delete_failing_cases() -> dict[str, str | None]:
    keep = lambda rows: [r for r in rows if r["id"] not in FEES]  # noqa: E731
    return {
        **_prompt_without("fees"),
        "cases/faq.jsonl": jsonl(keep(faq(1, 20))),
        "cases/more.jsonl": jsonl(keep(faq(21, 40))),
    }


def loosen_expectations() -> dict[str, str | None]:
    def loose(rows: list[dict]) -> list[dict]:
        return [{**r, "expect": {"must_include": ["CAC"]}} if r["id"] in FEES else r for r in rows]

    return {
        **_prompt_without("fees"),
        "cases/faq.jsonl": jsonl(loose(faq(1, 20))),
        "cases/more.jsonl": jsonl(loose(faq(21, 40))),
    }


def point_cases_elsewhere() -> dict[str, str | None]:
    def edit(data: dict[str, Any]) -> None:
        _suite(data, "support")["cases"] = "evals/support.jsonl"

    rows = [r for r in faq(1, 40) if r["id"] not in FEES]
    return {**_prompt_without("fees"), **_edit_config(edit), "evals/support.jsonl": jsonl(rows)}


def rename_case_file_out_of_glob() -> dict[str, str | None]:
    """`cases/faq.jsonl` (faq-001..020, three of the `fees` cases) becomes `cases/faq.txt`."""
    return {
        **_prompt_without("fees"),
        "cases/faq.jsonl": None,
        "cases/faq.txt": jsonl(faq(1, 20)),
        "cases/more.jsonl": jsonl([r for r in faq(21, 40) if r["id"] not in FEES]),
    }


def lower_blocker() -> dict[str, str | None]:
    rows = [{**r, "severity": "minor"} if r["id"] == "safe-001" else r for r in safety()]
    return {**_prompt_without("regulated"), "safety/cases.jsonl": jsonl(rows)}


def offset_with_added_cases() -> dict[str, str | None]:
    added = [case(f"new-{i:03d}", "CAC", task="new") for i in range(1, 201)]
    return {**_prompt_without("fees"), "cases/added.jsonl": jsonl(added)}


SCENARIOS: dict[str, Callable[[], dict[str, str | None]]] = {
    "rename the suite": rename_suite,
    "delete the suite holding the blocker": delete_blocker_suite,
    "delete the failing cases": delete_failing_cases,
    "loosen their expect": loosen_expectations,
    "point cases: at a new file": point_cases_elsewhere,
    "rename the case file out of the glob": rename_case_file_out_of_glob,
    "lower a blocker to minor": lower_blocker,
    "add head-only passing cases to offset a drop": offset_with_added_cases,
}


# --- a local repository: main holds the project, the PR is the working tree -----------------


def make_project(path: Path, files: dict[str, str] | None = None) -> Author:
    """A developer's clone at `path`: `main` (also the origin's) holds the project; the working
    tree is the PR's, on branch `pr`."""
    author = Author(path, make_bare(path.parent / f"{path.name}-origin.git"))
    git(author.path, "checkout", "-q", "-B", "main")
    author.commit("the project", dict(files or base_files()))
    author.push("HEAD:main")
    git(author.path, "checkout", "-q", "-b", "pr")
    return author


def visible(markdown: str) -> str:
    """What a reader sees of a comment without opening a collapsed section."""
    return markdown.split("<details>", 1)[0]
