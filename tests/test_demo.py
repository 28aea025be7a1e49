"""`gate demo` and the comment previews."""

from __future__ import annotations

import json
import time
from pathlib import Path

from helpers.cli import run_gate
from helpers.reports import case, report

from gate.compare.pairing import compare
from gate.inputs.policy import Policy
from gate.render import RenderContext, render_text
from gate.render.preview import html_page, parse_xychart


def test_demo_runs_a_real_pr_comparison_offline(tmp_path: Path) -> None:
    started = time.monotonic()
    done = run_gate(
        "demo", "--dir", str(tmp_path / "demo"), env={"GATE_CACHE_DIR": str(tmp_path / "cache")}
    )
    assert done.code == 0, done.err
    assert time.monotonic() - started < 60
    out = done.out
    assert "DEMO system" in out and "OPENAI_API_KEY" in out  # says what it is and how to go real
    assert "Eval Gate: fail" in out and "verdict: fail" in out
    # a regression no one can misread: four times the threshold, two blockers
    assert "pass rate 81.8% → 69.7% (−12.1 pts, threshold 3)" in out
    assert "Regressions: pass fraction fell by half or more (3)" in out  # repeats: 3
    assert "Blocking cases failing on head (2)" in out and "faq-001" in out and "faq-002" in out
    assert "Fixes: fail on base, pass on head (2)" in out and "faq-003" in out and "faq-007" in out
    assert "Flaky" in out and "faq-005" in out
    assert "McNemar" in out and "confidence interval" in out
    assert "\\-" not in out and "<code>" not in out  # readable, not raw Markdown/HTML
    folder = tmp_path / "demo"
    repo = folder / "ledgerly"
    assert (repo / ".git").is_dir() and (repo / "gate.yml").is_file()
    base = [
        json.loads(x) for x in (folder / "reports/support/base.jsonl").read_text().splitlines()[1:]
    ]
    head = [
        json.loads(x) for x in (folder / "reports/support/head.jsonl").read_text().splitlines()[1:]
    ]
    assert {x["id"]: x["status"] for x in base}["faq-001"] == "pass"
    # the sides' progress lines and summaries say the pass rates the headline says
    for side, shown in (("base", "81.8"), ("head", "69.7")):
        assert f"[{side}] 11/11 (100%) · pass rate {shown}%" in done.err
        summary = json.loads((folder / f"reports/support/{side}.summary.json").read_text())
        assert f"{summary['pass_rate']:.1f}" == shown
        assert f"[{side}] support: pass rate {summary['pass_rate']:.2f}% (11 cases" in done.err
    assert {x["id"]: x["status"] for x in head}["faq-001"] == "fail"
    assert next(x for x in head if x["id"] == "code-012")["status"] == "pass"  # ran in the sandbox
    comment = (folder / "comment.md").read_text()
    assert comment.startswith("<!--") and "```mermaid" in comment
    preview = (folder / "comment.html").read_text()
    assert "<svg" in preview and "<details>" in preview and "<script" not in preview
    assert "app/prompts/support.md" in comment  # the changed prompt's hashes are in the metadata
    # base against head: the blocker's lost phrase, its answers as a diff, the prompt's diff
    assert "the required phrase <code>CAC</code> is **missing** on head" in comment
    assert (
        "\n- upload the certificate of incorporation from the Corporate Affairs Commission"
        in comment
    )
    assert "\n+ upload the certificate of incorporation from the company registry" in comment
    assert "\n-- Always name the Corporate Affairs Commission (CAC)" in comment
    assert "\n+- Mention the fee when a question is about transfers." in comment
    assert '<span class="pl-md">- upload the certificate' in preview
    assert "    - upload the certificate of incorporation from the Corporate Affairs" in out


def test_demo_refuses_a_folder_with_files(tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("mine")
    done = run_gate("demo", "--dir", str(tmp_path))
    assert done.code == 2 and "needs an empty or new folder" in done.err
    assert (tmp_path / "keep.txt").read_text() == "mine"


CHART = """xychart-beta
    title "Pass rate by task (%): bars head, line base"
    x-axis ["faq", "code"]
    y-axis "pass rate (%)" 0 --> 100
    bar [66.7, 100.0]
    line [100.0, 50.0]
"""


def test_the_preview_draws_mermaid_charts_and_keeps_github_rendering() -> None:
    chart = parse_xychart(CHART)
    assert chart is not None and chart.labels == ["faq", "code"]
    assert chart.series == [[66.7, 100.0]] and chart.lines == [[100.0, 50.0]]
    assert parse_xychart("graph TD\n A-->B\n") is None
    page = html_page(
        f"# Title\n\n```mermaid\n{CHART}```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", title="t"
    )
    assert page.count("<svg") == 1 and "<table>" in page and "<h1>Title</h1>" in page
    assert "faq: 66.7" in page


def test_terminal_text_is_readable_and_cannot_carry_escape_sequences(tmp_path: Path) -> None:
    hostile = "<b> \x1b[31m &#27;[2J"
    c = compare(
        report(tmp_path, "base", [case("faq-001", "fail", output="old")]),
        report(tmp_path, "head", [case("faq-001", output=f"faq-001 {hostile}")]),
        Policy(),
    )
    text = render_text(c, RenderContext(suite="x"))
    assert "▸ ✅ Fixes" in text and "faq-001 <b>" in text
    assert "\x1b" not in text and "eval-gate:x" not in text and "<details>" not in text
