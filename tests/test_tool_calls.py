"""Tool calls end to end: `gate run` against a real HTTP model server speaking OpenAI and
Anthropic. The model config's tools reach each vendor in its format, the answers' calls reach
the checks, the report (with the finish reason), the cache, a replay and the comment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import Project, gate_here
from helpers.github_html import github_html
from helpers.servers.model_server import Answer, ChatRequest, ModelServer, tool_model

KEY = "sk-tools-test-0123456789"
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "The weather at a place",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string"}, "unit": {"type": "string"}},
            "required": ["location"],
        },
        "strict": True,
    },
}
TIME = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}
PARIS = 'CALL get_current_weather {"location": "Paris", "unit": "celsius"}'
TIME_CALL = 'CALL get_time {"tz": "UTC"}'
NESTED = 'CALL get_current_weather {"location": "Paris", "options": {"days": 3, "hourly": true}}'


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def calls(*expected: dict[str, Any], **inputs: str) -> dict[str, Any]:
    """A case (id `c`) that expects these tool calls."""
    return {"id": "c", "input": inputs, "expect": {"tool_calls": list(expected)}}


# (id, the user message, expect, status on both vendors)
CASES: list[tuple[str, str, dict[str, Any], str]] = [
    ("subset", f"{PARIS}\nLet me look.", {"tool_calls": [call("get_current_weather", location="Paris")]}, "pass"),
    ("name-only", PARIS, {"tool_calls": [{"name": "get_current_weather"}]}, "pass"),
    ("wrong-value", PARIS.replace("Paris", "London"), {"tool_calls": [call("get_current_weather", location="Paris")]}, "fail"),
    ("missing-key", PARIS, {"tool_calls": [call("get_current_weather", days=3)]}, "fail"),
    ("nested-subset", NESTED, {"tool_calls": [call("get_current_weather", options={"days": 3})]}, "pass"),
    ("nested-wrong", NESTED, {"tool_calls": [call("get_current_weather", options={"days": 5})]}, "fail"),
    ("any-order", f"{TIME_CALL}\n{PARIS}", {"tool_calls": [call("get_current_weather", location="Paris"), call("get_time", tz="UTC")]}, "pass"),
    ("exact-wrong-order", f"{TIME_CALL}\n{PARIS}", {"tool_calls": [{"name": "get_current_weather"}, {"name": "get_time"}], "tool_calls_order": "exact"}, "fail"),
    ("exact-order", f"{TIME_CALL}\n{PARIS}", {"tool_calls": [{"name": "get_time"}, {"name": "get_current_weather"}], "tool_calls_order": "exact"}, "pass"),
    ("exact-extra-call", f"{TIME_CALL}\n{PARIS}", {"tool_calls": [{"name": "get_time"}], "tool_calls_order": "exact"}, "fail"),
    ("twice-needed", PARIS, {"tool_calls": [{"name": "get_current_weather"}, {"name": "get_current_weather"}]}, "fail"),
    ("twice-made", f"{PARIS}\n{PARIS.replace('Paris', 'Lyon')}", {"tool_calls": [call("get_current_weather", location="Lyon"), call("get_current_weather", location="Paris")]}, "pass"),
    ("not-offered", 'CALL book_flight {"to": "Paris"}', {"tool_calls": [{"name": "book_flight"}]}, "fail"),
    ("text-only", "Just text, no tools.", {"no_tool_calls": True, "contains": ["Just text"]}, "pass"),
    ("called-anyway", PARIS, {"no_tool_calls": True}, "fail"),
    ("text-and-call", f"It is sunny.\n{PARIS}", {"contains": ["sunny"], "tool_calls": [{"name": "get_current_weather"}]}, "pass"),
]  # fmt: skip


MODEL_SERVER = {"api_key": KEY, "responder": tool_model}  # `server`'s options (conftest.py)


def project(root: Path, server: ModelServer, kind: str, model: dict[str, Any]) -> Project:
    p = Project(root)
    p.write("config/model.yaml", yaml.safe_dump(model))
    p.write("prompts/ask.j2", "{{ question }}")
    p.cases(
        "cases/tools.jsonl",
        [{"id": i, "input": {"question": q}, "expect": e} for i, q, e, _ in CASES],
    )
    base_url = server.openai_base_url if kind == "openai" else server.url
    system = {
        "kind": kind,
        "model_config": "config/model.yaml",
        "prompt": "prompts/ask.j2",
        "base_url": base_url,
        "api_key_env": "TOOLS_KEY",
        "max_retries": 0,
    }
    p.config({"cases": "cases/tools.jsonl", "system": system, "cache": {"dir": "cache"}})
    return p


def gate_run(p: Project, *args: str, label: str = "run") -> list[dict[str, Any]]:
    done = gate_here(
        "run", "--out", "reports", "--label", label, *args, cwd=p.root, env={"TOOLS_KEY": KEY}
    )
    assert done.code in (0, 1), done.err
    _, lines, _ = p.read_report(label=label)
    return lines


MODEL = {"model": "tool-model", "max_tokens": 64, "tools": [WEATHER, TIME], "tool_choice": "auto"}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_every_tool_call_check_decides_right(
    tmp_path: Path, server: ModelServer, kind: str
) -> None:
    p = project(tmp_path, server, kind, MODEL)
    lines = {line["id"]: line for line in gate_run(p)}
    assert {i: lines[i]["status"] for i in lines} == {i: s for i, _, _, s in CASES}
    by_name = {c["name"]: c for c in lines["wrong-value"]["checks"]}
    assert (
        'location is "London", expected "Paris"'
        in by_name["tool_call:get_current_weather"]["detail"]
    )
    assert "days is missing" in lines["missing-key"]["checks"][0]["detail"]
    assert "options.days is 3, expected 5" in lines["nested-wrong"]["checks"][0]["detail"]
    assert (
        "book_flight was not called (the answer called no tool)"
        in lines["not-offered"]["checks"][0]["detail"]
    )
    assert "fewer than expected" in lines["twice-needed"]["checks"][1]["detail"]
    exact = {c["name"]: c for c in lines["exact-wrong-order"]["checks"]}
    assert (
        exact["tool_call:1:get_current_weather"]["detail"]
        == "called get_time, not get_current_weather"
    )
    assert lines["exact-extra-call"]["checks"][-1] == {
        "kind": "tool_calls_order", "name": "tool_calls_order:exact", "passed": False,
        "detail": "1 more call(s): get_current_weather",
    }  # fmt: skip
    assert lines["called-anyway"]["checks"][0]["detail"].startswith(
        "the answer called get_current_weather("
    )
    # the report line carries the calls and why the model stopped
    subset = lines["subset"]
    assert subset["tool_calls"] == [
        {"name": "get_current_weather", "arguments": {"location": "Paris", "unit": "celsius"}}
    ]
    assert subset["output"] == "Let me look."
    stop = {"openai": ("tool_calls", "stop"), "anthropic": ("tool_use", "end_turn")}[kind]
    assert (subset["finish_reason"], lines["text-only"]["finish_reason"]) == stop
    assert (
        lines["text-only"]["tool_calls"] == []
        and lines["text-only"]["output"] == "Just text, no tools."
    )


def test_the_tools_reach_each_vendor_in_its_format(tmp_path: Path, server: ModelServer) -> None:
    model = {**MODEL, "tool_choice": {"type": "function", "function": {"name": "get_time"}}}
    model["parallel_tool_calls"] = False
    for kind in ("openai", "anthropic"):
        gate_run(project(tmp_path / kind, server, kind, model))
    openai = next(e.body for e in server.log if e.path == "/v1/chat/completions")
    anthropic = next(e.body for e in server.log if e.path == "/v1/messages")
    assert openai["tools"] == [WEATHER, TIME]  # as the model config has them
    assert openai["tool_choice"] == model["tool_choice"] and openai["parallel_tool_calls"] is False
    assert anthropic["tools"] == [
        {
            "name": "get_current_weather",
            "description": "The weather at a place",
            "input_schema": WEATHER["function"]["parameters"],  # type: ignore[index]
        },
        {"name": "get_time", "input_schema": {"type": "object"}},
    ]
    assert anthropic["tool_choice"] == {
        "type": "tool", "name": "get_time", "disable_parallel_tool_use": True
    }  # fmt: skip
    assert "parallel_tool_calls" not in anthropic and "strict" not in json.dumps(anthropic)


@pytest.mark.parametrize(
    ("choice", "anthropic"),
    [("auto", {"type": "auto"}), ("required", {"type": "any"}), ("none", {"type": "none"})],
)
def test_tool_choice_modes_reach_anthropic(
    tmp_path: Path, server: ModelServer, choice: str, anthropic: dict[str, str]
) -> None:
    gate_run(project(tmp_path, server, "anthropic", {**MODEL, "tool_choice": choice}))
    assert {e.body["tool_choice"]["type"] for e in server.log} == {anthropic["type"]}


def test_legacy_functions_and_function_call(tmp_path: Path, server: ModelServer) -> None:
    def legacy(request: ChatRequest) -> Answer:
        return Answer(tool_calls=[("get_time", {"tz": "CET"})], legacy_function_call=True)

    server.responder = legacy
    model = {"model": "m", "functions": [TIME["function"]], "function_call": {"name": "get_time"}}
    p = project(tmp_path / "openai", server, "openai", model)
    p.cases("cases/tools.jsonl", [calls(call("get_time", tz="CET"), question="?")])
    (line,) = gate_run(p)
    assert (line["status"], line["finish_reason"]) == ("pass", "function_call")
    assert line["tool_calls"] == [{"name": "get_time", "arguments": {"tz": "CET"}}]
    # the same model config reaches Anthropic as tools and a named tool choice
    p = project(tmp_path / "anthropic", server, "anthropic", model)
    server.responder = tool_model
    p.cases("cases/tools.jsonl", [calls(call("get_time", tz="UTC"), question=TIME_CALL)])
    (line,) = gate_run(p)
    assert line["status"] == "pass", line
    sent = server.log[-1].body
    assert sent["tools"] == [{"name": "get_time", "input_schema": {"type": "object"}}]
    assert sent["tool_choice"] == {"type": "tool", "name": "get_time"}


def test_arguments_that_are_not_json_are_kept_raw_and_said_so(
    tmp_path: Path, server: ModelServer
) -> None:
    server.responder = lambda request: Answer(tool_calls=[("get_time", '{"tz": "UTC"')])
    p = project(tmp_path, server, "openai", MODEL)
    by_args = {**calls(call("get_time", tz="UTC"), question="?"), "id": "args"}
    by_name = {**calls({"name": "get_time"}, question="!"), "id": "name"}
    p.cases("cases/tools.jsonl", [by_args, by_name])
    lines = {line["id"]: line for line in gate_run(p)}
    assert lines["args"]["tool_calls"] == [
        {"name": "get_time", "arguments": '{"tz": "UTC"', "invalid_arguments": True}
    ]
    assert lines["args"]["status"] == "fail"
    assert lines["args"]["checks"][0]["detail"] == 'its arguments are not JSON: {"tz": "UTC"'
    assert lines["name"]["status"] == "pass"  # the name alone was asked for


def test_the_cache_and_a_replay_keep_the_calls(tmp_path: Path, server: ModelServer) -> None:
    p = project(tmp_path, server, "anthropic", MODEL)
    first = gate_run(p, "--record", "recorded.jsonl", label="first")
    calls = server.requests
    again = gate_run(p, label="again")
    assert server.requests == calls  # every answer came from the cache
    assert [(x["tool_calls"], x["finish_reason"], x["status"]) for x in again] == [
        (x["tool_calls"], x["finish_reason"], x["status"]) for x in first
    ]
    assert all(x["cached"] for x in again)
    replay = {"kind": "replay", "file": "recorded.jsonl"}
    p.config({"cases": "cases/tools.jsonl", "system": replay})
    replayed = gate_run(p, label="replayed")
    assert server.requests == calls
    assert [(x["tool_calls"], x["finish_reason"], x["status"]) for x in replayed] == [
        (x["tool_calls"], x["finish_reason"], x["status"]) for x in first
    ]
    recorded = [json.loads(line) for line in (p.root / "recorded.jsonl").read_text().splitlines()]
    subset = next(r for r in recorded if r["id"] == "subset")
    assert subset["tool_calls"][0]["name"] == "get_current_weather"
    assert subset["finish_reason"] == "tool_use"


def test_a_tool_anthropic_lacks_stops_the_run_naming_the_key(
    tmp_path: Path, server: ModelServer
) -> None:
    custom = {"type": "custom", "custom": {"name": "grammar_tool"}}
    p = project(tmp_path, server, "anthropic", {**MODEL, "tools": [WEATHER, custom]})
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"TOOLS_KEY": KEY})
    assert done.code == 2, done.err
    assert "config/model.yaml:" in done.err and "key `tools[1]`" in done.err
    assert "custom tools have no Anthropic equivalent" in done.err and "Traceback" not in done.err
    assert server.requests == 0
    done = gate_here("validate", cwd=p.root)
    assert done.code == 2 and "key `tools[1]`" in done.err
    allowed = {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": []}}
    p = project(tmp_path / "choice", server, "anthropic", {**MODEL, "tool_choice": allowed})
    done = gate_here("run", "--out", "reports", cwd=p.root, env={"TOOLS_KEY": KEY})
    assert done.code == 2 and "key `tool_choice`" in done.err and "allowed_tools" in done.err


def test_the_comment_shows_the_calls_of_both_sides(tmp_path: Path, server: ModelServer) -> None:
    """The head's prompt makes the model call the tool for London: the base-vs-head diff of the
    regression shows both sides' calls, as GitHub renders the Markdown."""
    p = project(tmp_path, server, "openai", MODEL)
    p.cases(
        "cases/tools.jsonl", [calls(call("get_current_weather", location="Paris"), city="Paris")]
    )
    p.write("prompts/ask.j2", 'Checking.\nCALL get_current_weather {"location": "{{ city }}"}')
    gate_run(p, label="base")
    p.write("prompts/ask.j2", 'Checking.\nCALL get_current_weather {"location": "London"}')
    (head,) = gate_run(p, label="head")
    assert head["status"] == "fail"
    done = gate_here(
        "compare", "reports/base.jsonl", "reports/head.jsonl", "--format", "markdown", cwd=p.root
    )
    assert done.code == 1, done.err
    html = github_html(done.out)
    assert "→ get_current_weather({&quot;location&quot;: &quot;Paris&quot;})" in html
    assert "→ get_current_weather({&quot;location&quot;: &quot;London&quot;})" in html
    diff = html[html.index('<pre lang="diff">') :]
    assert "- → get_current_weather({&quot;location&quot;: &quot;Paris&quot;})" in diff
    assert "+ → get_current_weather({&quot;location&quot;: &quot;London&quot;})" in diff


def test_a_held_out_case_keeps_its_calls_out_of_the_report(
    tmp_path: Path, server: ModelServer
) -> None:
    p = project(tmp_path, server, "openai", MODEL)
    secret = {
        **calls(call("get_current_weather", location="Paris"), question=PARIS),
        "heldout": True,
    }
    p.cases("cases/tools.jsonl", [secret])
    (line,) = gate_run(p, "--heldout-detail", "detail")
    assert (line["status"], line["tool_calls"], line["finish_reason"]) == ("pass", [], None)
    detail = json.loads((p.root / "detail" / "run.jsonl").read_text().splitlines()[1])
    assert detail["tool_calls"][0]["arguments"] == {"location": "Paris", "unit": "celsius"}
    assert detail["finish_reason"] == "tool_calls"


def test_the_metadata_names_the_setting_the_pr_changed(tmp_path: Path, server: ModelServer) -> None:
    """A PR that drops a tool and raises the temperature: the metadata's system row said
    "(changed)" over two identical cells, since only kind, model and endpoint were shown."""
    p = project(tmp_path, server, "openai", MODEL)
    p.cases("cases/tools.jsonl", [calls({"name": "get_time"}, question=TIME_CALL)])
    gate_run(p, label="base")
    p.write("config/model.yaml", yaml.safe_dump({**MODEL, "tools": [WEATHER], "temperature": 0.5}))
    (head,) = gate_run(p, label="head")
    assert head["status"] == "fail"
    done = gate_here(
        "compare", "reports/base.jsonl", "reports/head.jsonl", "--format", "markdown", cwd=p.root
    )
    assert done.code == 1, done.err
    row = next(line for line in done.out.splitlines() if line.startswith("| System (changed) |"))
    base, head_cell = row.split(" | ")[1:3]
    assert "**tools: 2 entries**" in base and "**tools: 1 entry**" in head_cell
    assert "**temperature: none**" in base and "**temperature: 0.5**" in head_cell
    assert "model: tool\\-model" in base and "**model" not in row  # the same on both: plain
    text = gate_here(
        "compare", "reports/base.jsonl", "reports/head.jsonl", "--format", "text", cwd=p.root
    )
    assert "tools: 2 entries" in text.out and "tools: 1 entry" in text.out
