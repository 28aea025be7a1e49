"""A small support-bot repository of a user adopting the gate: a Python function whose answers
follow its prompt file (an offline stand-in for a model call), and the steps a newcomer takes
with it as the README says: `gate init`, real cases, commit, then a PR that edits the prompt."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.servers.git_http import git

APP = '''\
"""Acme Books support bot. Its answers follow the rules of its prompt file."""

from pathlib import Path

PROMPT = Path(__file__).parent / "prompts" / "support.txt"


def answer(inputs: dict) -> str:
    rules = PROMPT.read_text(encoding="utf-8")
    question = inputs["question"].lower()
    if "return" in question:
        window = " within 30 days" if "30-day return window" in rules else ""
        return f"You can return a book{window}: open Orders and choose Return."
    if "ship" in question:
        return "We ship every order within 2 working days."
    return "Please write to help@acme.example and we will answer within a day."
'''
PROMPT = """\
You are the support bot of Acme Books.
Rules:
- Mention the 30-day return window when asked about returns.
- Be polite and brief.
"""
MODEL = "model: acme-rules-1\ntemperature: 0\n"
FILES = {
    "bot/__init__.py": "",
    "bot/app.py": APP,
    "bot/prompts/support.txt": PROMPT,
    "bot/model.yaml": MODEL,
    "README.md": "# Acme Books support bot\n",
}
# The team's real cases, in place of the three examples `gate init` writes.
CASES = [
    {"id": "returns-1", "task": "returns", "severity": "blocker",
     "input": {"question": "Can I return a book I bought?"},
     "expect": {"must_include": ["30 days"]}},
    {"id": "returns-2", "task": "returns", "input": {"question": "How do I return an order?"},
     "expect": {"must_include": ["Orders"]}},
    {"id": "shipping-1", "task": "shipping", "input": {"question": "When do you ship?"},
     "expect": {"must_include": ["2 working days"]}},
    {"id": "other-1", "task": "other", "input": {"question": "Do you sell gift cards?"},
     "expect": {"must_include": ["help@acme.example"], "max_chars": 200}},
]  # fmt: skip


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def support_bot(root: Path) -> Path:
    """The bot committed on `main`, with the branch `adopt-the-gate` checked out."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, FILES)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the support bot")
    git(root, "checkout", "-q", "-b", "adopt-the-gate")
    return root


def real_cases(root: Path, cases_file: str) -> None:
    write(root, {cases_file: "".join(json.dumps(case) + "\n" for case in CASES)})


def adopt(root: Path) -> None:
    """What `gate init` wrote, committed and merged into main; then the PR branch."""
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "adopt the gate")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--ff-only", "adopt-the-gate")
    git(root, "checkout", "-q", "-b", "shorter-prompt")


def regressing_pr(root: Path) -> None:
    """The PR: a shorter prompt that drops the return-window rule (a blocker case fails)."""
    write(root, {"bot/prompts/support.txt": "You are the support bot of Acme Books. Be brief.\n"})
