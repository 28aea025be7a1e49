"""Workflow commands from PR text (issue 28, class 4): what the gate prints never reads as a
command of the PR's or a model's, read the way GitHub's runner reads a step's log (both forms,
`helpers.actions_log`).

The PR regresses the prompt and adds a suite of its own whose name, case ids and system's
errors carry commands in both forms (`::error::` at a line's start, `##[error]` inside one):
through `gate action` the log holds them (the verdict lines name the suite after the pause has
ended) yet the runner processes none of them, only the gate's own; through `gate check` in a
step, none at all.
"""

from __future__ import annotations

import io
import json

import yaml
from helpers.actions_log import processed_commands
from helpers.cli import run_gate
from helpers.pr_scenarios import base_files, config, drop, jsonl, make_project
from helpers.servers.world import TOKEN, WORDS, World, project_files, prompt
from hypothesis import given
from hypothesis import strategies as st

from gate.joblog import BREAK, Defused, defuse

SUITE = "new\n::warning::INJECTED-SUITE-1 ##[error]INJECTED-SUITE-2"
# The PR's own suite: a system that fails with commands in its error, cases with them in ids.
EVIL_APP = """
def answer(inputs):
    if inputs.get("boom"):
        raise RuntimeError("::error::INJECTED-ERROR-1\\n##[warning]INJECTED-ERROR-2")
    return {"text": "::notice::INJECTED-OUTPUT ##[add-mask]INJECTED-OUTPUT"}
"""
EVIL_CASES = [
    {"id": "c1 ##[error]INJECTED-ID", "input": {"boom": True}, "expect": {"min_chars": 1}},
    {"id": "c2", "input": {}, "expect": {"must_include": ["nothing of the sort"]}},
]
OURS = {"add-mask", "stop-commands", "error", "warning", "notice"}


def evil_suite(path: str) -> dict:
    return {"name": SUITE, "cases": path, "system": {"kind": "python", "target": "evil:answer"}}


def injected(log: str) -> list[str]:
    """The commands the runner would process that the gate did not write: any in the legacy
    form (the gate writes none), and any whose name or data comes from the PR."""
    bad = []
    tokens = set()
    for command in processed_commands(log):
        if command.name == "stop-commands":
            tokens.add(command.data.lower())
        mine = command.form == "v2" and (command.name in OURS or command.name in tokens)
        if not mine or "INJECTED" in command.data.split(":", 1)[0] or "INJECTED" in command.name:
            bad.append(command.line)
        if command.name == "add-mask" and command.data != TOKEN:
            bad.append(command.line)
        if command.name == "stop-commands" and "INJECTED" in command.data:
            bad.append(command.line)
    return bad


def test_gate_action_processes_no_command_of_the_prs(world: World) -> None:
    world.base(project_files("base", WORDS))
    words = [w for w in WORDS if w != "fees"]
    gate_yml = yaml.safe_load(project_files("head", words)["gate.yml"])
    gate_yml["suites"].append(evil_suite("cases/evil.jsonl"))
    world.pr(
        {
            "prompts/support.md": prompt(words),
            "gate.yml": yaml.safe_dump(gate_yml),
            "evil.py": EVIL_APP,
            "cases/evil.jsonl": jsonl(EVIL_CASES),
        },
        "drop fees; add a suite",
    )
    world.checkout()
    run = world.run(world.environ(world.event()))
    assert run.code in (1, 3), run.log[-3000:]  # support fails; the PR's suite errs
    assert "INJECTED-SUITE-2" in run.log  # the text is there, in a line after the pause
    assert injected(run.log) == []
    assert any(c.name == "error" for c in processed_commands(run.log))  # the gate's own


def test_gate_check_in_a_step_prints_no_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    data = config()
    data["suites"].append(evil_suite("evil/cases.jsonl"))
    author = make_project(tmp_path / "repo", base_files())
    author.write(
        {
            "prompts/support.md": drop("fees")["prompt"],
            "gate.yml": yaml.safe_dump(data),
            "evil.py": EVIL_APP,
            "evil/cases.jsonl": jsonl(EVIL_CASES),
        }
    )
    env = {"GITHUB_ACTIONS": "true", "GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = run_gate("check", "--base", "main", cwd=author.path, env=env)
    assert done.code in (1, 3), done.err[-3000:]
    log = done.out + done.err
    assert "INJECTED-SUITE-2" in log.replace(BREAK, "")
    assert processed_commands(done.out) == [] and processed_commands(done.err) == []


PIECES = st.lists(
    st.sampled_from([":", "::", "#", "##", "[", "##[", "error", "\n", "\r", " ", "x"])
)


@given(st.lists(PIECES.map("".join), max_size=12))
def test_a_defused_stream_never_forms_a_command(writes: list[str]) -> None:
    """However the text is cut into writes (and flushed between them)."""
    out = io.StringIO()
    stream = Defused(out)
    for text in writes:
        stream.write(text)
        stream.flush()
    stream.close()
    assert "::" not in out.getvalue() and "##[" not in out.getvalue()
    assert out.getvalue().replace(BREAK, "") == "".join(writes)
    assert processed_commands(out.getvalue()) == []


def test_defuse_leaves_what_a_reader_sees() -> None:
    text = "::error::x ##[warning]y"
    assert "::" not in defuse(text) and "##[" not in defuse(text)
    assert defuse(text).replace(BREAK, "") == text
    assert json.dumps(defuse("plain text")) == json.dumps("plain text")


def test_what_a_system_prints_reaches_the_log_defused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`gate run` in a step: the system's own prints (its worker's stdout and stderr) pass
    through the gate's output, never straight into the log."""
    app = "import sys\n\ndef answer(inputs):\n    print('::error::INJECTED-PRINT')\n    print('x ##[warning]INJECTED-PRINT', file=sys.stderr)\n    return 'ok'\n"  # fmt: skip
    (tmp_path / "app.py").write_text(app)
    (tmp_path / "cases.jsonl").write_text(json.dumps({"id": "a", "input": {}, "expect": {"min_chars": 1}}) + "\n")  # fmt: skip
    (tmp_path / "gate.yml").write_text("cases: cases.jsonl\nsystem: {kind: python, target: 'app:answer'}\n")  # fmt: skip
    env = {"GITHUB_ACTIONS": "true", "GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = run_gate("run", "--out", "out", cwd=tmp_path, env=env)
    assert done.code == 0, done.err
    assert "INJECTED-PRINT" in done.out and "INJECTED-PRINT" in done.err
    assert processed_commands(done.out) == [] and processed_commands(done.err) == []
