"""With repeats, what `gate run` prints while it runs and when it ends, and the summary file,
give the pass rate the comparison reads (the mean of the cases' pass fractions), not majority
counts: the demo's sides printed 9/11 passed for both while its headline said 81.8% -> 78.8%."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from helpers.reports import case, repeated, report

from gate.commands.output import describe
from gate.compare.pairing import compare
from gate.inputs.policy import Policy
from gate.report.models import CaseResult, RunMeta
from gate.report.summary import summarise
from gate.run.progress import Progress

HEAD = [
    repeated("a", ["pass"] * 3),
    repeated("b", ["pass", "pass", "fail"]),
    repeated("c", ["fail"] * 3),
]
BASE = [repeated("a", ["pass"] * 3), repeated("b", ["pass"] * 3), repeated("c", ["fail"] * 3)]


def results(rows: list[dict[str, Any]]) -> list[CaseResult]:
    return [CaseResult.model_validate(row) for row in rows]


def test_summary_progress_and_last_line_say_the_comparisons_rate(tmp_path: Path) -> None:
    meta = RunMeta(suite="support", label="head", repeats=3)
    summary = summarise(meta, results(HEAD))
    assert summary.passed == 2  # two cases passed most of their runs...
    assert summary.pass_rate == pytest.approx(55.56)  # ...and the rate is (1 + 2/3 + 0) / 3
    assert summary.by_task["faq"].pass_rate == pytest.approx(55.56)
    line = describe(summary, Path("out/head.jsonl"))
    assert line.startswith("support: pass rate 55.56% (3 cases, 3 runs each; 2 passed most runs")
    assert "2/3 passed" not in line

    stream = io.StringIO()
    progress = Progress(3, label="head", stream=stream, interval_s=0)
    for result in results(HEAD):
        progress.advance(result)
    assert stream.getvalue().splitlines()[-1].startswith("[head] 3/3 (100%) · pass rate 55.6%")
    assert "pass 2" not in stream.getvalue()

    base = report(tmp_path, "base", BASE, repeats=3)
    head = report(tmp_path, "head", HEAD, repeats=3)
    c = compare(base, head, Policy())
    assert c.head_pass_rate == pytest.approx(summary.pass_rate, abs=0.01)
    assert c.base_pass_rate == pytest.approx(summarise(meta, results(BASE)).pass_rate, abs=0.01)


def test_one_run_a_case_reads_as_before() -> None:
    once = results([case("a"), case("b", "fail"), case("c", "error")])
    summary = summarise(RunMeta(suite="main"), once)
    assert describe(summary, Path("r.jsonl")) == (
        "main: 1/3 passed (33.33%), 1 failed, 1 errors -> r.jsonl"
    )
    stream = io.StringIO()
    progress = Progress(3, label="p", stream=stream, interval_s=0)
    for result in once:
        progress.advance(result)
    assert (
        stream.getvalue().splitlines()[-1].startswith("[p] 3/3 (100%) · pass 1 · fail 1 · error 1")
    )
