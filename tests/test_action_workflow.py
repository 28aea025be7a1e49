"""Workflow commands, outputs and the job summary, read back the way the runner reads them."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from helpers.servers.world import parse_outputs

from gate.github import workflow_commands as workflow


def runner_parse(line: str) -> tuple[str, dict[str, str], str]:
    """The runner's parser: `::name k=v,k=v::message`, then unescaping."""
    match = re.fullmatch(r"::([a-z-]+)(?: ([^:]*))?::(.*)", line)
    assert match, line
    name, props, message = match.groups()

    def unescape(value: str, prop: bool) -> str:
        value = value.replace("%0D", "\r").replace("%0A", "\n")
        if prop:
            value = value.replace("%3A", ":").replace("%2C", ",")
        return value.replace("%25", "%")

    properties = {}
    for pair in (props or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            properties[key] = unescape(value, True)
    return name, properties, unescape(message, False)


def test_annotation_round_trips_hostile_text() -> None:
    message = "100% wrong:\nline two\r\n::set-output name=x::y, and more"
    title = "a,b:c%d"
    line = workflow.error(message, file="cases/a,b.jsonl", line=7, title=title)
    assert "\n" not in line and "\r" not in line
    name, props, text = runner_parse(line)
    assert (name, text) == ("error", message)
    assert props == {"file": "cases/a,b.jsonl", "line": "7", "title": title}


def test_warning_without_properties() -> None:
    assert workflow.warning("careful: 50%") == "::warning::careful: 50%25"
    assert workflow.notice("hi") == "::notice::hi"
    assert workflow.add_mask("s3cr%t") == "::add-mask::s3cr%25t"


def test_outputs_are_multi_line_safe(tmp_path: Path) -> None:
    path = tmp_path / "out"
    values = {"verdict": "fail", "regressions": '["a",\n"b"]', "tricky": "x\nverdict<<EOF\ny"}
    workflow.write_outputs(path, values)
    workflow.write_outputs(path, {"second": "call appends"})
    assert parse_outputs(path.read_text()) == {**values, "second": "call appends"}


def test_output_delimiter_never_occurs_in_the_value() -> None:
    with pytest.raises(ValueError, match="delimiter"):
        workflow.output_block("x", "a\nDELIM\nb", delimiter="DELIM")
    with pytest.raises(ValueError, match="bad output name"):
        workflow.output_block("a=b", "v")


def test_summary_appends_and_stops_at_one_mebibyte(tmp_path: Path) -> None:
    path = tmp_path / "summary"
    assert workflow.append_summary(path, "# one")
    assert workflow.append_summary(path, "two\n")
    assert path.read_text() == "# one\ntwo\n"
    assert not workflow.append_summary(path, "x" * workflow.SUMMARY_LIMIT)
    assert path.stat().st_size <= workflow.SUMMARY_LIMIT
    assert path.read_text().endswith("The job summary is full (1 MiB): see the reports.\n")


def test_commands_paused_brackets_untrusted_output() -> None:
    stream = io.StringIO()
    with workflow.commands_paused(stream):
        stream.write("::error::injected by the code under test\n")
    lines = stream.getvalue().splitlines()
    token = lines[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and lines[-1] == f"::{token}::"
    with workflow.commands_paused(io.StringIO()):
        pass
