"""`gate run --record`: a live run's answers become a replay file that reproduces the run."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from helpers.cli import Project, gate_here
from helpers.servers.model_server import ModelServer

from gate.report.output import SystemOutput, ToolCall, Usage
from gate.systems.base import SystemRequest
from gate.systems.record import RecordingSystem
from gate.systems.replay import load_recordings


class Echo:
    kind = "echo"

    def call(self, request: SystemRequest) -> SystemOutput:
        if request.input.get("fail"):
            raise RuntimeError("no answer")
        return SystemOutput(
            text=f"{request.case_id}/{request.repeat}",
            usage=Usage(prompt_tokens=2, completion_tokens=1),
            tool_calls=[ToolCall(name="lookup", arguments={"case": request.case_id})],
            finish_reason="tool_calls",
            data={"refusal": "none", "text": "shadowed"},
            model="m1",
        )

    def describe(self) -> dict[str, str]:
        return {"kind": "echo"}

    def files(self) -> list[Path]:
        return []

    def close(self) -> None:
        pass


def test_concurrent_calls_are_all_recorded_and_readable_by_replay(tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    recorder = RecordingSystem(Echo(), path)

    def work(worker: int) -> None:
        for n in range(25):
            recorder.call(SystemRequest(case_id=f"c{worker}-{n}", input={}, repeat=n % 3))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert not path.exists()  # written once, at close
    recorder.close()
    recorder.close()
    records = load_recordings(path, "rec.jsonl")
    assert len(records) == 200
    record = records[("c3-4", 1)]
    assert record.text == "c3-4/1" and record.model == "m1"
    assert record.usage == Usage(prompt_tokens=2, completion_tokens=1)
    assert record.tool_calls == [ToolCall(name="lookup", arguments={"case": "c3-4"})]
    assert record.finish_reason == "tool_calls"
    assert record.model_extra == {"refusal": "none"}


def test_failed_calls_are_not_recorded(tmp_path: Path) -> None:
    recorder = RecordingSystem(Echo(), tmp_path / "rec.jsonl")
    recorder.call(SystemRequest(case_id="ok", input={}))
    with pytest.raises(RuntimeError):
        recorder.call(SystemRequest(case_id="bad", input={"fail": True}))
    recorder.close()
    lines = (tmp_path / "rec.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in lines] == ["ok"]


def test_record_then_replay_reproduces_the_run_without_calls(project: Project) -> None:
    with ModelServer() as server:
        project.write("config/model.yaml", "model: rec-model\n")
        project.write("prompts/ask.j2", "{{ question }}")
        rows = [
            {
                "id": f"r{i}",
                "input": {"question": f"word{i}"},
                "expect": {"must_include": ["word1"]},
            }
            for i in range(6)
        ]
        project.cases("cases/ask.jsonl", rows)
        live = {
            "kind": "openai",
            "model_config": "config/model.yaml",
            "prompt": "prompts/ask.j2",
            "base_url": server.openai_base_url,
        }
        project.config(
            {
                "repeats": 2,
                "suites": [
                    {"name": "live", "cases": "cases/ask.jsonl", "system": live},
                    {
                        "name": "replay",
                        "cases": "cases/ask.jsonl",
                        "system": {"kind": "replay", "file": "recorded.jsonl"},
                    },
                ],
            }
        )
        env = {"GATE_CACHE_DIR": str(project.root / "cache")}
        args = ["run", "-q", "--suite", "live", "--label", "live", "--record", "recorded.jsonl"]
        done = gate_here(*args, cwd=project.root, env=env)
        assert done.code == 0, done.err
        assert server.requests == 12
        replay = gate_here("run", "-q", "--suite", "replay", "--label", "replay", cwd=project.root)
        assert replay.code == 0, replay.err
        assert server.requests == 12
    _, live_lines, live_summary = project.read_report(label="live")
    _, replay_lines, replay_summary = project.read_report(label="replay")
    pick = ("id", "status", "output", "tokens")
    assert [{k: x[k] for k in pick} for x in replay_lines] == [
        {k: x[k] for k in pick} for x in live_lines
    ]
    assert replay_summary["passed"] == live_summary["passed"] == 1
    assert replay_summary["meta"]["system"]["model"] == "rec-model"
