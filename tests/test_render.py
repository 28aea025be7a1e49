"""The PR comment and job summary, rendered by GitHub's own Markdown engine (cmarkgfm)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.github_html import (
    CONTROL,
    CTX,
    LIVE_MENTION,
    LIVE_REFERENCE,
    github_html,
    structure,
)
from helpers.reports import HOSTILE_OUTPUTS, case, check, report

from gate.compare.models import Comparison, skipped_comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.inputs.policy import Policy
from gate.inputs.templates import TemplateSet, read_template_folder
from gate.render import (
    COMMENT_MAX_CHARS,
    RenderContext,
    comment_marker,
    render_comment,
    render_json,
    render_junit,
    render_summary,
)
from gate.render.diff import diff_lines
from gate.render.markdown import ZWJ, ZWSP, code, code_block, one_line, shorten, text
from gate.render.style import MARKDOWN
from gate.render.usage import usage_rows


def failing_rows(outputs: list[str], details: list[str]) -> list[dict]:
    rows = []
    for i, (output, detail) in enumerate(zip(outputs, details, strict=True)):
        rows.append(
            case(
                f"case-{i:02d}",
                "fail",
                task=["faq", "coding"][i % 2],
                severity="blocker" if i == 0 else "major",
                output=output,
                checks=[check("include:CAC", False, detail), check("max_chars:800", True)],
            )
        )
    return rows


def hostile_and_benign(tmp_path: Path) -> tuple[Comparison, Comparison]:
    n = len(HOSTILE_OUTPUTS)
    base = [case(f"case-{i:02d}", task=["faq", "coding"][i % 2]) for i in range(n)]
    base += [case("still", "fail", task="faq"), case("fixed", "fail", task="faq")]
    tail = [
        case("still", "fail", task="faq", checks=[check("regex", False, HOSTILE_OUTPUTS[4])]),
        case("fixed", task="faq"),
    ]
    hostile_head = failing_rows(HOSTILE_OUTPUTS, HOSTILE_OUTPUTS) + tail
    benign = [f"plain answer number {i}" for i in range(n)]
    benign_head = failing_rows(benign, benign) + tail
    comparisons = []
    for label, head in (("hostile", hostile_head), ("benign", benign_head)):
        folder = tmp_path / label
        comparisons.append(
            compare(report(folder, "base", base), report(folder, "head", head), Policy())
        )
    return comparisons[0], comparisons[1]


def test_hostile_outputs_keep_the_structure_and_stay_inert(tmp_path: Path) -> None:
    hostile, benign = hostile_and_benign(tmp_path)
    for render in (render_comment, render_summary):
        bad = structure(render(hostile, CTX))
        good = structure(render(benign, CTX))
        # the same tags, as many of each: no table cell, row, details or code block was
        # opened or closed by the output, and no element came from it
        assert bad.tags == good.tags
        assert bad.tags["details"] == bad.tags["summary"] >= 5
        assert bad.tags["table"] >= 3 and bad.tags["img"] == 0 and bad.tags["script"] == 0
        assert not [a for a in bad.attributes if a.startswith("on")]
        scanned = "".join(bad.scanned_text)
        assert not LIVE_MENTION.search(scanned), LIVE_MENTION.findall(scanned)
        assert not LIVE_REFERENCE.search(scanned)
        assert not CONTROL.search("".join(bad.all_text))
        # the hostile text is still there to read, defused: each in its own cell, or in the
        # base-vs-head block of its case (a regression is explained once, where it is listed)
        assert "octocat" in "".join(bad.all_text) and "alert(1)" in "".join(bad.all_text)
        if render is render_comment:  # past its first few, regressions are table rows
            assert "octocat" in scanned
        cells = [readable(cell) for cell in bad.cells]
        shown_text = readable("".join(bad.all_text))
        for output in HOSTILE_OUTPUTS[:-1]:
            shown = shorten(one_line(output), 140)
            first_line = one_line(output.split("\n")[0])[:30]
            assert any(shown in cell for cell in cells) or first_line in shown_text, output[:40]


def readable(rendered: str) -> str:
    """What a reader sees, without the invisible joiners and break opportunities we add."""
    return rendered.replace(ZWJ, "").replace(ZWSP, "")


def test_every_hostile_output_alone_in_a_table_cell_and_a_code_block() -> None:
    for output in HOSTILE_OUTPUTS:
        row = f"| {code(output, 200)} | {text(output, 300)} |"
        markdown = f"| a | b |\n|---|---|\n{row}\n| end | end |\n\n{code_block(output)}\n\nafter\n"
        parsed = structure(markdown)
        assert parsed.tags["tr"] == 3, output[:40]
        assert parsed.tags["td"] == 4, output[:40]
        assert parsed.tags["pre"] == 1 and parsed.tags["p"] == 1, output[:40]
        assert set(parsed.tags) <= {"table", "thead", "tbody", "tr", "th", "td", "code", "pre", "p"}
        assert not LIVE_MENTION.search("".join(parsed.scanned_text))
        # each cell shows all of its text: nothing was split off into extra, dropped cells
        assert readable(parsed.cells[2]) == shorten(one_line(output), 200), output[:40]
        assert readable(parsed.cells[3]) == shorten(one_line(output), 300), output[:40]


def test_a_comment_never_exceeds_the_limit_and_still_counts(tmp_path: Path) -> None:
    n = 10_000
    base = [case(f"regression-{i:05d}-" + "x" * 60) for i in range(n)]
    head = [
        case(
            row["id"],
            "fail",
            task=f"task-{i % 300}",
            output="`|<details>@all " * 200,
            checks=[check(f"check-{k}", False, "d" * 400) for k in range(6)],
        )
        for i, row in enumerate(base)
    ]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    assert len(c.regressions) == n
    body = render_comment(c, CTX)
    assert len(body) <= COMMENT_MAX_CHARS
    assert len(body.encode("utf-16-le")) // 2 <= COMMENT_MAX_CHARS
    assert body.startswith(comment_marker("support"))
    assert "10,000 regressions" in body.splitlines()[1]
    assert "(10,000)" in body
    assert re.search(r"…and [\d,]+ more regressions in the \[full report\]", body)
    summary = render_summary(c, CTX)
    assert len(summary.encode("utf-8")) <= 1024 * 1024
    assert summary.count("| [<code>regression") > body.count("| [<code>regression") > 0
    # still valid Markdown of the same shape
    assert structure(body).tags["table"] >= 2


def test_giant_ids_and_reasons_still_fit(tmp_path: Path) -> None:
    base = [case("id-" + "z" * 5000 + str(i), severity="blocker") for i in range(300)]
    head = [case(row["id"], "fail", severity="blocker") for row in base]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    assert len(body) <= COMMENT_MAX_CHARS
    assert "300 blockers" in body


def test_a_tiny_limit_falls_back_to_the_minimal_body(tmp_path: Path) -> None:
    c = compare(
        report(tmp_path, "base", [case("a")]),
        report(tmp_path, "head", [case("a", "fail")]),
        Policy(),
    )
    body = render_comment(c, CTX, max_chars=600)
    assert len(body) <= 600
    assert body.startswith("<!-- eval-gate:support -->\n❌ **Eval Gate: fail**")
    assert "[the full report](https://github.com/acme/ledgerly/actions/runs/7)" in body


def test_regressions_link_to_the_case_line_at_the_head_sha(tmp_path: Path) -> None:
    base = [case("a"), case("b")]
    head = [case("a", "fail", file="cases/my suite.jsonl", line=12), case("b")]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    url = f"https://github.com/acme/ledgerly/blob/{'b' * 40}/cases/my%20suite.jsonl#L12"
    assert f"[<code>a</code>]({url})" in body
    assert f"https://github.com/acme/ledgerly/commit/{'b' * 40}" in body
    html = github_html(body)
    assert f'href="{url}"' in html
    # without a repository there is nothing to link to
    plain = render_comment(c, RenderContext(suite="support", head_sha="b" * 40))
    assert "/blob/" not in plain and "<code>a</code>" in plain
    # a repository that is not owner/name is ignored rather than spliced into a URL
    odd = render_comment(c, CTX.model_copy(update={"repository": "x/y) [z](javascript:1"}))
    assert "javascript" not in odd and "/blob/" not in odd


def test_held_out_cases_show_id_and_verdict_only_in_every_format(tmp_path: Path) -> None:
    secret = "HELDOUT-SECRET-ANSWER"
    base = [case("visible"), case("hidden", heldout=True, output=secret)]
    head = [
        case("visible", "fail"),
        case(
            "hidden",
            "fail",
            heldout=True,
            output=secret,
            checks=[check("equals", False, secret)],
            error=secret,
            file="secret/heldout.jsonl",
        ),
    ]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    outputs = [
        render_comment(c, CTX),
        render_summary(c, CTX),
        render_json(c),
        render_junit(c),
    ]
    for out in outputs:
        assert secret not in out
        assert "secret/heldout.jsonl" not in out
        assert "hidden" in out
    assert "| <code>hidden</code> | held out |" in outputs[0]


def test_marker_is_per_suite_and_cannot_be_broken() -> None:
    assert comment_marker("support") == "<!-- eval-gate:support -->"
    assert comment_marker("support") != comment_marker("coding")
    hostile = comment_marker("x --> <script>alert(1)</script>")
    assert hostile.startswith("<!-- eval-gate:") and hostile.endswith(" -->")
    assert hostile.count("-->") == 1 and "<script" not in hostile
    assert comment_marker("a b") != comment_marker("a_b")


def test_error_comment_leads_with_the_errors(tmp_path: Path) -> None:
    base = [case(f"c{i}") for i in range(20)]
    head = [case(f"c{i}", "error" if i < 3 else "pass") for i in range(20)]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    first = body.splitlines()[1]
    assert first.startswith("⚠️ **Eval Gate: error**") and "3 errors" in first
    shown = "".join(structure(body).all_text)
    assert "3 of 20 head cases ended in an error (15.0%, the limit is 5%)" in shown
    assert body.index("### ⚠️ Errors") < body.index("💰 Cost")
    assert "system error: HTTP 503 after 5 retries" in body
    assert "not a verdict on the change" in body
    assert "Passed on base, error on head" not in body  # shown once, in the errors table


def test_pass_comment_is_short_at_the_top(tmp_path: Path) -> None:
    base = [case(f"c{i}", task=["a", "b"][i % 2]) for i in range(20)]
    head = list(base)
    head[0] = case("c0", "pass", task="a")
    base[1] = case("c1", "fail", task="b")
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    lines = body.splitlines()
    assert lines[1].startswith("✅ **Eval Gate: pass** (support) — pass rate 95.0% → 100.0%")
    assert "(+5.0 pts, threshold 3) · 1 fix" in lines[1]
    assert "###" not in body  # everything else is collapsed
    assert "<details><summary><b>📊 Pass rate by task (2)</b></summary>" in body
    # the unchanged task folds into one row; one changed task makes no chart
    assert "| *1 task unchanged: a* | 10 | 100.0% | 100.0% | ±0.0 | 0 | 0 |" in body
    assert "```mermaid" not in body


def test_judge_usage_is_its_own_rows_of_the_cost_table(tmp_path: Path) -> None:
    def graded(id: str, calls: int, cost: float) -> dict:
        judge = {"calls": calls, "cached": 0, "tokens": {"prompt": 90, "completion": 10}}
        return case(id, judge={**judge, "cost_usd": cost})

    base = [graded("a", 1, 0.002), graded("b", 1, 0.002), case("c")]
    head = [graded("a", 1, 0.002), graded("b", 2, 0.004), case("c")]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    assert (c.base_usage.judge_calls, c.head_usage.judge_calls) == (2, 3)
    assert (c.base_usage.judge_tokens, c.head_usage.judge_tokens) == (200, 200)
    assert c.head_usage.judge_cost_usd == pytest.approx(0.006)
    cells = structure(render_comment(c, CTX)).cells
    row = cells.index("Judge calls")
    assert cells[row : row + 4] == ["Judge calls", "2", "3", "+1 (+50%)"]
    assert "Judge cost" in cells and "Judge tokens" in cells
    without = compare(
        report(tmp_path / "plain", "base", [case("c")]),
        report(tmp_path / "plain", "head", [case("c")]),
        Policy(),
    )
    assert "Judge calls" not in render_comment(without, CTX)  # no judge, no rows


def test_skipped_comment() -> None:
    c = skipped_comparison("no watched file changed (watch: prompts/**)", suite="support")
    body = render_comment(c, CTX)
    assert body.startswith("<!-- eval-gate:support -->\n⏭️ **Eval Gate: skipped**")
    assert "no watched file changed" in body
    assert "Statistics" not in body and len(body) < 400


def test_statistics_section_names_its_methods(tmp_path: Path) -> None:
    base = [case(f"c{i}") for i in range(40)]
    head = [case(f"c{i}", "fail" if i < 8 else "pass") for i in range(40)]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    assert "Newcombe's hybrid score interval for paired proportions" in body
    assert "exact McNemar test" in body and "p-value:** **0.008**" in body
    assert "95% confidence interval **[" in body
    assert "−20.0 pts" in body
    assert "**Drop test:** **p = 0.004** against no change (one-sided)" in body  # 0.5 ** 8
    assert "one-sided exact McNemar test of the regressions against the fixes" in body
    assert "With fixed repeats it does not decide: a drop past the threshold fails" in body
    assert "the drop test catches a drop of **21.4 pts** 90% of the time" in body
    tested = compare(
        report(tmp_path, "base", base),
        report(tmp_path, "head", head),
        Policy(require_significance=True),
    )
    body = render_comment(tested, CTX)
    assert "the bar was 0.020, from this suite's level of 2%" in body


def test_chart_labels_are_sanitised(tmp_path: Path) -> None:
    tasks = ['evil"]\n    bar [1', "ok-task"]
    base = [case(f"c{i}", task=tasks[i % 2]) for i in range(4)]
    head = [case(f"c{i}", "fail" if i < 2 else "pass", task=tasks[i % 2]) for i in range(4)]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, CTX)
    chart = body[body.index("```mermaid") : body.index("```", body.index("```mermaid") + 3)]
    assert chart.count("bar [") == 1 and '"ok-task"' in chart
    assert 'x-axis ["evil__ bar _1", "ok-task"]' in chart


def folder_templates(folder: Path) -> TemplateSet:
    return read_template_folder(folder, "templates", within=folder.parent)


def test_user_templates_extend_ours_and_stay_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "comment.md.j2").write_text(
        '{% extends "gate/comment.md.j2" %}\n'
        "{% block footer %}Team footer: {{ c.cases['a'].head.output }}\n{% endblock %}\n"
    )
    c = compare(
        report(tmp_path, "base", [case("a")]),
        report(tmp_path, "head", [case("a", "fail", output="<img src=x onerror=1> @octocat")]),
        Policy(),
    )
    body = render_comment(c, CTX.model_copy(update={"templates": folder_templates(folder)}))
    assert body.startswith("<!-- eval-gate:support -->\n❌")
    footer = body[body.index("Team footer:") :]
    assert "&lt;img src=x onerror=1&gt; @\u200docto" in footer
    assert structure(footer).tags["img"] == 0


def test_user_templates_can_replace_ours_entirely(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "comment.md.j2").write_text("{{ c.verdict | upper }}: {{ c.regressions | length }}\n")
    c = compare(
        report(tmp_path, "base", [case("a")]),
        report(tmp_path, "head", [case("a", "fail")]),
        Policy(),
    )
    body = render_comment(c, CTX.model_copy(update={"templates": folder_templates(folder)}))
    top = "❌ **Eval Gate: fail** (support) — pass rate 100.0% → 0.0% (−100.0 pts, threshold 3)"
    assert body == f"<!-- eval-gate:support -->\n{top} · 1 regression\n\nFAIL: 1\n"


def test_a_broken_user_template_is_an_input_error_naming_file_and_line(tmp_path: Path) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "comment.md.j2").write_text("line one\n{% if %}\n")
    c = skipped_comparison("x")
    with pytest.raises(InputError) as caught:
        render_comment(c, CTX.model_copy(update={"templates": folder_templates(folder)}))
    message = str(caught.value)
    assert message.startswith("templates/comment.md.j2:2: template error")


def test_json_is_the_comparison(tmp_path: Path) -> None:
    c = compare(
        report(tmp_path, "base", [case("a"), case("b")]),
        report(tmp_path, "head", [case("a", "fail"), case("b")]),
        Policy(),
    )
    assert Comparison.model_validate_json(render_json(c)) == c


def test_junit_is_valid_xml_with_failures_and_errors(tmp_path: Path) -> None:
    base = [case("p2f"), case("p2e"), case("f2p", "fail"), case("same")]
    head = [
        case("p2f", "fail", output="bad \x1b[1m \x00 output <x>"),
        case("p2e", "error"),
        case("f2p"),
        case("same"),
        case("review", "needs_review"),
    ]
    c = compare(
        report(tmp_path, "base", base), report(tmp_path, "head", head), Policy(max_error_rate=50)
    )
    root = ET.fromstring(render_junit(c).encode("utf-8"))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("name") == "support"
    cases = {tc.get("name"): tc for tc in suite.iter("testcase")}
    assert set(cases) == {"verdict", "p2f", "p2e", "f2p", "review"}
    failure = cases["p2f"].find("failure")
    assert failure is not None and failure.get("type") == "regression"
    assert "include:CAC" in (failure.text or "") and "<x>" in (failure.text or "")
    assert cases["p2e"].find("error") is not None
    assert cases["review"].find("skipped") is not None
    assert cases["verdict"].find("failure") is not None  # the verdict is fail
    assert suite.get("failures") == "2" and suite.get("errors") == "1"
    props = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert props["verdict"] == "fail" and props["passing_on_both_sides"] == "1"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a|b", "a\\|b"),
        ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt;"),
        ("@team please", "@\u200dteam please"),
        ("see #12", "see \\#\u200d12"),
        ("`x`", "\\`x\\`"),
        ("line\nbreak\r\nand\ttab", "line break and tab"),
        ("$x$", "\\$x\\$"),
        ("\x1b[0m", "␛\\[0m"),
        ("\u202egnp.exe", "&lt;U\\+202E&gt;gnp.exe"),
    ],
)
def test_inline_escaping(raw: str, expected: str) -> None:
    assert text(raw) == expected


def test_code_block_fence_outgrows_any_backtick_run() -> None:
    block = code_block("a ````` b\n```\nc", max_chars=1000)
    assert block.startswith("``````\n") and block.endswith("\n``````")
    long = code_block("w" * 250, max_chars=1000)
    assert max(len(line) for line in long.splitlines()) <= 100


def test_a_delta_just_past_the_threshold_shows_two_digits(tmp_path: Path) -> None:
    base = [case(f"c{i:02d}") for i in range(33)]
    head = [case("c00", "fail"), *base[1:]]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    body = render_comment(c, RenderContext())
    assert "(\N{MINUS SIGN}3.03 pts, threshold 3)" in body
    exact = compare(
        report(tmp_path, "base", base[:20]),
        report(tmp_path, "head", [case("c00", "fail"), *base[1:20]]),
        Policy(threshold=5),
    )
    assert "(\N{MINUS SIGN}5.0 pts, threshold 5)" in render_comment(exact, RenderContext())


def test_a_change_the_shown_latencies_round_away_gets_no_percentage(tmp_path: Path) -> None:
    base = report(tmp_path, "base", [case("a", latency_ms=0.2), case("b", latency_ms=0.3)])
    head = report(tmp_path, "head", [case("a", latency_ms=0.4), case("b", latency_ms=0.5)])
    rows = {str(r["label"]): r for r in usage_rows(compare(base, head, Policy()), MARKDOWN)}
    p50 = rows["Latency p50"]
    assert (str(p50["base"]), str(p50["head"])) == ("0 ms", "0 ms")
    assert "%" not in str(p50["delta"])
    assert str(rows["Calls"]["delta"]) == "±0 (±0%)"  # an unchanged count keeps its 0%


def test_an_outputs_final_newline_is_no_line_of_its_diff() -> None:
    lines = diff_lines("We can help with fees.\n", "We can help with nothing.\n")
    assert lines == ["- We can help with fees.", "+ We can help with nothing."]
