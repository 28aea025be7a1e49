"""Reports of older schema versions: real files of versions 1 and 2 (tests/fixtures/reports-v1
and -v2, written by gate 0.1.0) read as the current version, and compared as those versions
compared them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.reports import STABLE_KEYS

from gate import REPORT_SCHEMA_VERSION
from gate.errors import InputError
from gate.report.checks import (
    AssertionResult,
    CodeTestResult,
    ExpectedResult,
    OtherResult,
    PhraseResult,
    PlainResult,
    PythonResult,
    RubricResult,
    ThresholdResult,
    ToolCallResult,
)
from gate.report.io import read_report, write_report
from gate.report.plan import AutoRecord, Plan

V1 = Path(__file__).parent / "fixtures" / "reports-v1"
V2 = Path(__file__).parent / "fixtures" / "reports-v2"


def test_a_version_1_report_reads_as_the_current_version() -> None:
    raw = json.loads((V1 / "head.jsonl").read_text().splitlines()[0])
    assert raw["schema_version"] == 1 and raw["auto"]["calls"] == 42
    head = read_report(V1 / "head.jsonl")
    assert head.meta.schema_version == REPORT_SCHEMA_VERSION == 3
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
    assert now["head_meta"]["schema_version"] == 3
    # the comment says how many calls each side made and why the rounds stopped
    comment = run_gate("compare", str(V1 / "base.jsonl"), str(V1 / "head.jsonl"), cwd=tmp_path)
    assert "stopped: the budget was reached" in comment.out


def test_an_upgraded_report_written_again_is_of_the_current_version(tmp_path: Path) -> None:
    old = read_report(V1 / "base.jsonl")
    lines = [r.model_dump_json() + "\n" for r in old.results]
    write_report(tmp_path / "base.jsonl", old.meta, lines)
    first = json.loads((tmp_path / "base.jsonl").read_text().splitlines()[0])
    assert first["schema_version"] == 3 and first["auto"]["plan"]["first"] == 2
    again = read_report(tmp_path / "base.jsonl")
    assert again.meta == old.meta and again.results == old.results


def _meta_line(tmp_path: Path, meta: dict) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"type": "meta", **meta}) + "\n")
    return path


def test_a_newer_or_broken_metadata_line_names_the_file_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(InputError) as newer:
        read_report(_meta_line(tmp_path, {"schema_version": 4}))
    assert newer.value.line == 1 and newer.value.key == "schema_version"
    assert "reads versions 1 to 3" in str(newer.value)
    old_auto = {"first": 2, "rounds": 1, "stop": "bored", "calls": 4}
    with pytest.raises(InputError) as broken:
        read_report(_meta_line(tmp_path, {"schema_version": 1, "auto": old_auto}))
    assert "bad metadata line" in str(broken.value) and broken.value.key == "auto.stop"
    done = run_gate("compare", str(tmp_path / "r.jsonl"), str(tmp_path / "r.jsonl"))
    assert done.code == 2 and "r.jsonl:1:" in done.err and "Traceback" not in done.err


# --- version 2: check results named no kind; the judge's score and minimum were words ------------


def _checks(path: Path) -> dict[str, list]:
    return {r.id: r.checks for r in read_report(path).results}


def test_version_2_check_results_read_with_their_kind_and_parts() -> None:
    v1 = read_report(V1 / "head.jsonl").results[0]
    assert all(isinstance(c, PhraseResult) and c.phrase == "yes" for c in v1.checks)
    assert all(isinstance(c, PhraseResult) for a in v1.attempts for c in a.checks)
    head = _checks(V2 / "head.jsonl")
    assert head["inc"] == [
        PhraseResult(kind="include", name="include:Paris", passed=False,
                     detail="'Paris' not found in the output", phrase="Paris"),
        PhraseResult(kind="exclude", name="exclude:Lyon", passed=False,
                     detail="'Lyon' found at character 0", phrase="Lyon"),
    ]  # fmt: skip
    correctness, tone = head["rub"]
    assert isinstance(correctness, RubricResult) and isinstance(tone, RubricResult)
    assert (correctness.dimension, correctness.score, correctness.minimum) == ("correctness", 1, 2)
    assert correctness.reason == "correctness 1 because the answer says [c1] [t0] probably Paris?"
    assert correctness.detail.startswith("1/2 (below minimum 2): correctness 1 because")
    assert (tone.score, tone.minimum, tone.reason, tone.passed) == (0, 1, "", False)
    (unusable,) = head["garbage"]
    assert isinstance(unusable, RubricResult) and unusable.passed is None
    assert (unusable.score, unusable.minimum) == (None, None)  # version 2 did not say
    assert (
        unusable.reason
        == unusable.detail
        == ("judge answer is not JSON: 'I would say this is quite good.'")
    )
    tests = {c.name: c for c in head["code"]}
    hidden = tests["hidden:f(3)"]
    assert isinstance(hidden, CodeTestResult) and (hidden.test, hidden.expected) == ("f(3)", None)
    assert (
        isinstance(tests["test:test_f"], CodeTestResult) and tests["test:test_f"].test == "test_f"
    )
    assert {type(c) for c in head["txt"]} == {PhraseResult, PlainResult, ExpectedResult}
    (call,) = head["tools"]
    assert isinstance(call, ToolCallResult) and (call.tool, call.position) == ("search", None)
    exact, order = head["toolsx"]
    assert isinstance(exact, ToolCallResult) and (exact.tool, exact.position) == ("search", 1)
    assert isinstance(order, PlainResult) and order.kind == "tool_calls_order"
    (own,) = head["py"]
    assert isinstance(own, PythonResult) and (own.target, own.fraction) == ("checks:score", 0.2)
    assert head["held"] == []  # held out: written without checks
    assert not any(isinstance(c, OtherResult) for checks in head.values() for c in checks)


def test_version_2_promptfoo_results_keep_metric_score_and_threshold() -> None:
    head = _checks(V2 / "promptfoo-head.jsonl")
    paris, rome = head["pf-metric"]
    assert isinstance(paris, AssertionResult) and isinstance(rome, AssertionResult)
    assert (paris.assertion, paris.metric, paris.fraction, paris.passed) == (
        "contains",
        "geo",
        0.0,
        False,
    )
    assert (rome.assertion, rome.metric, rome.fraction) == ("icontains", "geo", 1.0)
    *scored, threshold = head["pf-threshold"]
    assert all(isinstance(c, AssertionResult) and c.scored for c in scored)
    assert isinstance(threshold, ThresholdResult)
    assert (threshold.threshold, threshold.passed) == (0.6, False)
    in_set = {c.name: c for c in head["pf-set"]}
    child = in_set["assert-set/contains:Paris"]
    assert isinstance(child, AssertionResult) and child.assertion == "contains" and child.scored
    outer = in_set["assert-set"]
    assert isinstance(outer, AssertionResult) and outer.assertion == "assert-set"
    negated = in_set["not-contains:Berlin"]
    assert isinstance(negated, AssertionResult) and negated.assertion == "not-contains"


def test_version_2_reports_render_as_version_2_rendered_them(tmp_path: Path) -> None:
    """The reasons the comment gives for a case come from the results' parts now, where the
    gate of version 2 read them out of names and details: the same words."""
    done = run_gate("compare", str(V2 / "base.jsonl"), str(V2 / "head.jsonl"), cwd=tmp_path)
    assert done.code == 1, done.err
    said = [
        "- the required phrase <code>Paris</code> is **missing** on head; base said "
        "“\u200d<b>Paris\u200d</b> is the capital of France.”",
        "- the forbidden phrase <code>Lyon</code> **appeared** on head: "
        "“\u200d<b>Lyon\u200d</b> is the capital, not the other one.”",
        "- the judge scored <code>correctness</code> **1/2** (minimum 2) on head: "
        "“correctness 1 because the answer says \\[c1\\] \\[t0\\] probably Paris?”",
        "- the judge scored <code>tone</code> **0/2** (minimum 1) on head\n",
        "| <code>correctness</code> | 2 | 2/2 | 1/2 ❌ | base: correctness 2 because the answer "
        "says \\[c2\\] \\[t2\\] Paris, obviously.<br>head: correctness 1 because the answer says "
        "\\[c1\\] \\[t0\\] probably Paris? |",
        "- the judge scored <code>correctness</code> **0/2** (minimum 2) on base: "
        "“correctness 0 because the answer says \\[c0\\] Lyon”",
        "<code>rubric:correctness</code> (needs review) judge answer is not JSON: "
        "'I would say this is quite good.'",
    ]
    for words in said:
        assert words in done.out
    summary = run_gate(
        "compare", str(V2 / "base.jsonl"), str(V2 / "head.jsonl"), "--format", "summary",
        cwd=tmp_path,
    )  # fmt: skip
    for words in [
        "- first failing assertion on head: <code>f\\(3\\)</code>: expected 6, got 5\n"
        "- also failing on head: <code>test\\_f</code>: AssertionError: assert f\\(1\\) == 2",
        "- the code **does not compile** on head: SyntaxError: expected ':' \\(line 1\\)\n"
        "- first failing assertion on head: <code>f\\(2\\)</code>: the code does not compile",
        "- <code>python:checks:score</code> failed on head: graded on goodness",
    ]:
        assert words in summary.out


def test_a_report_of_this_version_reads_back_as_written(tmp_path: Path) -> None:
    for name in ("head.jsonl", "promptfoo-head.jsonl"):
        old = read_report(V2 / name)
        lines = [r.model_dump_json() + "\n" for r in old.results]
        write_report(tmp_path / name, old.meta, lines)
        again = read_report(tmp_path / name)
        assert again.results == old.results
        raw = json.loads((tmp_path / name).read_text().splitlines()[1])
        assert all({"kind", "name", "passed", "detail"} <= set(c) for c in raw["checks"])


def test_a_kind_this_gate_does_not_know_reads_by_name_and_detail(tmp_path: Path) -> None:
    """A newer check's result (here `sql_equivalent`) reads and shows by its name and detail; one
    that names no kind is refused at its line."""
    report = read_report(V2 / "head.jsonl")
    newer = {"kind": "sql_equivalent", "name": "sql:orders", "passed": False, "detail": "off"}
    line = report.results[0].model_dump(mode="json") | {"checks": [newer], "status": "fail"}
    write_report(tmp_path / "r.jsonl", report.meta, [json.dumps(line) + "\n"])
    (check,) = read_report(tmp_path / "r.jsonl").results[0].checks
    assert isinstance(check, OtherResult) and (check.kind, check.detail) == (
        "sql_equivalent",
        "off",
    )
    line["checks"] = [{"name": "include:x", "passed": True}]
    write_report(tmp_path / "r.jsonl", report.meta, [json.dumps(line) + "\n"])
    with pytest.raises(InputError) as refused:
        read_report(tmp_path / "r.jsonl")
    assert (refused.value.line, refused.value.key) == (2, "checks.0")
    assert "a check result needs a string `kind`" in str(refused.value)
