"""Reports of older schema versions: real files of version 1 (tests/fixtures/reports-v1, written
by gate 0.1.0) read as the current version, and compared as that version compared them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.reports import STABLE_KEYS

from gate import REPORT_SCHEMA_VERSION
from gate.errors import InputError
from gate.report.io import read_report, write_report
from gate.report.plan import AutoRecord, Plan

V1 = Path(__file__).parent / "fixtures" / "reports-v1"


def test_a_version_1_report_reads_as_the_current_version() -> None:
    raw = json.loads((V1 / "head.jsonl").read_text().splitlines()[0])
    assert raw["schema_version"] == 1 and raw["auto"]["calls"] == 42
    head = read_report(V1 / "head.jsonl")
    assert head.meta.schema_version == REPORT_SCHEMA_VERSION == 2
    assert head.meta.auto == AutoRecord(
        plan=Plan(first=2, uniform=1, step=2, max_repeats=10, minority=0.15),
        rounds=2,
        stop="budget",
        calls=42,  # what version 1's plan dropped on reading
    )
    assert head.meta.auto.calls == sum(r.repeats for r in head.results)
    assert len(head.results) == 12 and {r.auto_end for r in head.results} <= {"rule", "flow"}


def test_version_1_reports_compare_as_that_version_compared_them(tmp_path: Path) -> None:
    then = json.loads((V1 / "compare.json").read_text())
    done = run_gate(
        "compare", str(V1 / "base.jsonl"), str(V1 / "head.jsonl"), "--format", "json", cwd=tmp_path
    )
    now = json.loads(done.out)
    numbers = [k for k in STABLE_KEYS if k != "verdict"]
    assert {k: now[k] for k in numbers} == {k: then[k] for k in numbers}
    assert then["verdict"] == "fail" and then["reasons"][0].startswith("the pass rate dropped 11.9")
    # the rule is today's: a drop of 11.9 points over 12 cases is not significant at 2%
    assert done.code == 0 and now["verdict"] == "inconclusive", done.err
    assert now["reasons"][0].startswith("inconclusive: the pass rate dropped 11.9 points")
    assert now["drop_test"]["method"] == "t"  # version 1 recorded no looks: one look
    assert now["head_meta"]["auto"]["calls"] == then["head_meta"]["auto"]["calls"] == 42
    assert now["head_meta"]["schema_version"] == 2
    # the comment says how many calls each side made and why the rounds stopped
    comment = run_gate("compare", str(V1 / "base.jsonl"), str(V1 / "head.jsonl"), cwd=tmp_path)
    assert "stopped: the budget was reached" in comment.out


def test_an_upgraded_report_written_again_is_of_the_current_version(tmp_path: Path) -> None:
    old = read_report(V1 / "base.jsonl")
    lines = [r.model_dump_json() + "\n" for r in old.results]
    write_report(tmp_path / "base.jsonl", old.meta, lines)
    first = json.loads((tmp_path / "base.jsonl").read_text().splitlines()[0])
    assert first["schema_version"] == 2 and first["auto"]["plan"]["first"] == 2
    again = read_report(tmp_path / "base.jsonl")
    assert again.meta == old.meta and again.results == old.results


def _meta_line(tmp_path: Path, meta: dict) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"type": "meta", **meta}) + "\n")
    return path


def test_a_newer_or_broken_metadata_line_names_the_file_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(InputError) as newer:
        read_report(_meta_line(tmp_path, {"schema_version": 3}))
    assert newer.value.line == 1 and newer.value.key == "schema_version"
    assert "reads versions 1 to 2" in str(newer.value)
    old_auto = {"first": 2, "rounds": 1, "stop": "bored", "calls": 4}
    with pytest.raises(InputError) as broken:
        read_report(_meta_line(tmp_path, {"schema_version": 1, "auto": old_auto}))
    assert "bad metadata line" in str(broken.value) and broken.value.key == "auto.stop"
    done = run_gate("compare", str(tmp_path / "r.jsonl"), str(tmp_path / "r.jsonl"))
    assert done.code == 2 and "r.jsonl:1:" in done.err and "Traceback" not in done.err
