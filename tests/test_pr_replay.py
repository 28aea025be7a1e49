"""A head that reads answers instead of asking its system cannot pass itself.

A PR that regresses the prompt and switches the suite's system to `replay` of a file of perfect
answers it recorded would pass on answers its system never gave. Through `gate check` on a
real repository: the suite fails with an instrument-change finding that names the switch; the
accept label still turns it into an accepted pass (the way out stays auditable).
"""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import gate_here
from helpers.pr_comment import section
from helpers.pr_scenarios import WORDS, config, drop, dump, faq, make_project, visible

from gate.render.markdown import prose

SWITCH = "this PR switches the suite's system from `python` to `replay` of `answers/support.jsonl`"


def replaying_pr(root: Path) -> dict[str, str]:
    data = config()
    data["suites"][0]["system"] = {"kind": "replay", "file": "answers/support.jsonl"}
    perfect = " ".join([*WORDS, "regulated"])
    answers = "".join(json.dumps({"id": c["id"], "text": perfect}) + "\n" for c in faq(1, 40))
    return {
        "gate.yml": dump(data),
        "answers/support.jsonl": answers,
        "prompts/support.md": drop("fees")["prompt"],
    }


def check(root: Path, tmp_path: Path, *more: str) -> tuple[int, str]:
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = gate_here("check", "--base", "main", "--format", "markdown", *more, cwd=root, env=env)
    assert done.code in (0, 1), done.err
    return done.code, done.out


def support(markdown: str) -> str:
    return section(markdown, "support")


def test_a_head_that_replays_its_own_answers_fails(tmp_path: Path) -> None:
    author = make_project(tmp_path / "repo")
    author.write(replaying_pr(author.path))
    code, out = check(author.path, tmp_path)
    assert code == 1
    shown = visible(support(out))
    assert "❌ **Eval Gate: fail** (support)" in shown
    assert prose(SWITCH, 400) in shown
    reasons = [line for line in shown.splitlines() if line.startswith("- ")]
    assert reasons[0] == "- " + prose(SWITCH, 400).split(":")[0] + ":" + reasons[0].split(":", 1)[1]

    code, out = check(author.path, tmp_path, "--label", "eval-gate: accept")
    assert code == 0
    accepted = visible(support(out))
    assert "accepted by the label" in accepted and prose(SWITCH, 400) in accepted
