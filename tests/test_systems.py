"""Offline system kinds: python (per-root imports), command, replay."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from helpers.cli import Project, gate_here

from gate.errors import InputError, SystemCallError
from gate.inputs.config import CommandSystem, PythonSystem, ReplaySystem
from gate.systems import SystemEnv, SystemRequest, build_system


def env_for(root: Path) -> SystemEnv:
    return SystemEnv(root=root, config_dir=root, environ={"PATH": "/usr/bin:/bin"}, concurrency=2)


def request(case_id: str = "c1", **inputs: object) -> SystemRequest:
    return SystemRequest(case_id=case_id, input={**inputs, "id": case_id}, timeout_s=10)


def test_python_systems_from_two_checkouts_never_share_a_module(tmp_path: Path) -> None:
    for side, word in (("base", "old"), ("head", "new")):
        (tmp_path / side / "bot").mkdir(parents=True)
        (tmp_path / side / "bot" / "__init__.py").write_text("")
        (tmp_path / side / "bot" / "core.py").write_text(
            "from bot.words import W\n\ndef run(i):\n    return W\n"
        )
        (tmp_path / side / "bot" / "words.py").write_text(f"W = {word!r}\n")
    config = PythonSystem(kind="python", target="bot.core:run")
    base = build_system(config, env_for(tmp_path / "base"))
    assert base.call(request()).text == "old"
    head = build_system(config, env_for(tmp_path / "head"))
    assert head.call(request()).text == "new"
    assert head.files() == [(tmp_path / "head/bot/core.py").resolve()]
    base.close()
    head.close()


def test_python_system_output_protocol(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(
        "def s(i):\n    return 'plain'\n"
        "def d(i):\n    return {'text': 'rich', 'usage': {'prompt_tokens': 4, 'completion_tokens': 1}, 'source': 'kb'}\n"
        "def bad(i):\n    return 42\n"
    )
    env = env_for(tmp_path)
    assert (
        build_system(PythonSystem(kind="python", target="m:s"), env).call(request()).text == "plain"
    )
    rich = build_system(PythonSystem(kind="python", target="m:d"), env).call(request())
    assert (rich.text, rich.usage.total_tokens, rich.data) == ("rich", 5, {"source": "kb"})
    with pytest.raises(TypeError, match="returned int"):
        build_system(PythonSystem(kind="python", target="m:bad"), env).call(request())
    with pytest.raises(InputError, match="module 'nothere' not found"):
        build_system(PythonSystem(kind="python", target="nothere:f"), env)


def test_command_system_reads_stdin_json_and_runs_in_the_checkout(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text("from the checkout")
    (tmp_path / "bot.py").write_text(
        "import json, sys\n"
        "inp = json.load(sys.stdin)\n"
        "if inp.get('fail'):\n    sys.stderr.write('bad things'); sys.exit(3)\n"
        "if inp.get('plain'):\n    print('just text'); sys.exit(0)\n"
        "print(json.dumps({'text': open('data.txt').read() + ' ' + inp['id'], 'usage': {'prompt_tokens': 1}}))\n"
    )
    system = build_system(
        CommandSystem(kind="command", command=["{python}", "bot.py"]), env_for(tmp_path)
    )
    out = system.call(request("q7"))
    assert out.text == "from the checkout q7" and out.usage.prompt_tokens == 1
    assert system.call(request(plain=True)).text == "just text"
    with pytest.raises(SystemCallError, match="exited with 3: bad things"):
        system.call(request(fail=True))
    with pytest.raises(InputError, match="not found in"):
        build_system(CommandSystem(kind="command", command=["./missing.sh"]), env_for(tmp_path))


def test_command_timeout(tmp_path: Path) -> None:
    system = build_system(
        CommandSystem(kind="command", command=[sys.executable, "-c", "import time; time.sleep(5)"]),
        env_for(tmp_path),
    )
    with pytest.raises(SystemCallError, match=r"timed out after 0\.2s"):
        system.call(SystemRequest(case_id="c", input={}, timeout_s=0.2))


def test_replay_system_by_id_and_repeat(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "model": "gpt-x", "text": "first"},
        {
            "id": "a",
            "repeat": 1,
            "model": "gpt-x",
            "text": "second",
            "usage": {"prompt_tokens": 2, "completion_tokens": 3},
        },
        {"id": "b", "text": "bee"},
    ]
    (tmp_path / "rec.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    system = build_system(ReplaySystem(kind="replay", file="rec.jsonl"), env_for(tmp_path))
    assert system.call(SystemRequest(case_id="a", input={}, repeat=0)).text == "first"
    assert system.call(SystemRequest(case_id="a", input={}, repeat=1)).usage.completion_tokens == 3
    assert system.call(SystemRequest(case_id="b", input={}, repeat=2)).text == "bee"
    assert system.describe()["model"] == "gpt-x"
    with pytest.raises(SystemCallError, match="no recorded output for case 'zzz'"):
        system.call(SystemRequest(case_id="zzz", input={}))


def test_replay_file_errors_name_the_line(tmp_path: Path) -> None:
    (tmp_path / "rec.jsonl").write_text('{"id": "a", "text": "x"}\n{"id": "b"}\n')
    with pytest.raises(InputError) as info:
        build_system(ReplaySystem(kind="replay", file="rec.jsonl"), env_for(tmp_path))
    assert str(info.value) == "rec.jsonl:2: key `text`: Field required"


def test_replay_missing_case_is_an_error_in_the_report(project: Project) -> None:
    project.write("rec.jsonl", json.dumps({"id": "known", "text": "hi"}) + "\n")
    project.cases("c.jsonl", [{"id": "known", "expect": {"equals": "hi"}}, {"id": "unknown"}])
    project.config({"cases": "c.jsonl", "system": {"kind": "replay", "file": "rec.jsonl"}})
    assert gate_here("run", "-q", cwd=project.root).code == 0
    _, lines, summary = project.read_report()
    assert [x["status"] for x in lines] == ["pass", "error"]
    assert "no recorded output for case 'unknown'" in lines[1]["error"]
    assert summary["n"] == 2
