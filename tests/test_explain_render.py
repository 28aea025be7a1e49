"""Base against head in the comment, rendered by GitHub's engine (cmarkgfm): what decided a
case stands out, the diff is visible, hostile text stays inert, held-out cases stay hidden and
the size limit holds. Pure: comparisons built in memory, no I/O."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.github_html import CONTROL, CTX, LIVE_MENTION, LIVE_REFERENCE, github_html, structure
from helpers.reports import HOSTILE_OUTPUTS, check
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gate.compare.models import Comparison, Policy
from gate.compare.pairing import compare
from gate.compare.system import FileDiff, SystemDiff
from gate.render import COMMENT_MAX_CHARS, render_comment, render_json, render_junit, render_text
from gate.render.diff import diff_lines
from gate.render.preview import html_page
from gate.report.checks import CheckResult, PlainResult, RubricResult
from gate.report.io import Report
from gate.report.models import CaseResult, RunMeta


def result(id: str, status: str = "pass", output: str = "", **extra: object) -> CaseResult:
    checks = extra.pop("checks", [])
    return CaseResult.model_validate(
        {
            "id": id,
            "task": extra.pop("task", "faq"),
            "status": status,
            "passed": status == "pass",
            "output": output,
            "checks": checks,
            "file": "cases/suite.jsonl",
            "line": 1,
            **extra,
        }
    )


def failed(name: str, detail: str = "") -> CheckResult:
    return check(name, False, detail)


def judged(score: int, note: str, minimum: int = 2) -> CheckResult:
    return RubricResult.judged("correctness", score, minimum, note)


def comparison(pairs: list[tuple[CaseResult, CaseResult]], **update: object) -> Comparison:
    meta = RunMeta(label="x", suite="support")
    base = Report(meta=meta, results=[b for b, _ in pairs], path=Path("base.jsonl"))
    head = Report(meta=meta, results=[h for _, h in pairs], path=Path("head.jsonl"))
    return compare(base, head, Policy()).model_copy(update=update)


def explained(markdown: str) -> str:
    """The deciding cases as they are explained: the blocking cases' and the regressions'
    sections (each case once, where it is listed), without their table rows."""
    start = min(markdown.find(t) for t in ("### 🛑", "### 📉") if t in markdown)
    ends = [markdown.find(t, start) for t in ("\n### 🧾", "\n<details>", "\n### 📊")]
    part = markdown[start : min(e for e in ends if e > 0)]
    listed = re.compile(r"\n\| Case \|.*?\n\n", re.DOTALL)  # the cases past those explained
    return listed.sub("\n", part + "\n\n")


# --- the four regressions a team fears ----------------------------------------------------------


def test_a_lost_keyword_quotes_the_base_with_the_phrase_in_bold() -> None:
    base = result("k", output="Register with the Corporate Affairs Commission (CAC) first.")
    head = result("k", "fail", "Register with the registry first.", checks=[failed("include:CAC")])
    body = render_comment(comparison([(base, head)]), CTX)
    part = explained(body)
    assert "the required phrase <code>CAC</code> is **missing** on head" in part
    html = github_html(part)
    assert re.search(r"Commission \(\u200d<b>CAC\u200d</b>\) first", html)
    assert '<pre lang="diff"><code>- Register with the Corporate Affairs Commission' in html
    assert "+ Register with the registry first." in html


def test_a_refusal_replaced_by_a_confident_invention() -> None:
    base = result("r", output="I do not know tomorrow's rate. Check the CBN's published rates.")
    head = result(
        "r",
        "fail",
        "Tomorrow's rate will be exactly 1,532.40 naira.",
        checks=[failed("exclude:exactly", "found"), failed("include:I do not know")],
    )
    part = explained(render_comment(comparison([(base, head)]), CTX))
    assert "the forbidden phrase <code>exactly</code> **appeared** on head" in part
    assert "Tomorrow's rate will be \u200d<b>exactly\u200d</b> 1,532.40 naira.”" in part
    assert "the required phrase <code>I do not know</code> is **missing** on head" in part
    lines = part[part.index("```diff") :].splitlines()
    assert lines[1:4] == [
        "- I do not know tomorrow's rate. Check the CBN's published rates.",
        "+ Tomorrow's rate will be exactly 1,532.40 naira.",
        "```",
    ]


def test_a_code_case_names_its_first_failing_assertion() -> None:
    code = "```python\ndef add(a, b):\n    return a {} b\n```"
    base = result("c", output=code.format("+"), task="coding")
    head = result(
        "c",
        "fail",
        code.format("-"),
        task="coding",
        checks=[
            PlainResult(kind="compile", name="compile", passed=True),
            failed("test:test_small", "AssertionError: assert add(1, 2) == 3 (test line 2)"),
            failed("test:test_big", "AssertionError (test line 5)"),
        ],
    )
    part = explained(render_comment(comparison([(base, head)]), CTX))
    assert (
        "first failing assertion on head: <code>test\\_small</code>: AssertionError: "
        "assert add\\(1, 2\\) == 3 \\(test line 2\\)" in part
    )
    assert "also failing on head: <code>test\\_big</code>" in part
    # the output's own fence cannot close the diff's: a longer one is used
    assert "````diff\n  ```python\n  def add(a, b):\n-     return a + b\n+     return a - b" in part


def test_a_judged_regression_shows_both_scores_and_the_table() -> None:
    pairs = [
        (
            result(
                "geo-1", output="Paris.", checks=[judged(2, "right")], scores={"correctness": 2}
            ),
            result(
                "geo-1",
                "fail",
                "Lyon.",
                checks=[judged(0, "wrong city")],
                scores={"correctness": 0},
            ),
        ),
        *(
            (
                result(f"geo-{i}", checks=[judged(2, "ok")], scores={"correctness": 2}),
                result(f"geo-{i}", checks=[judged(2, "ok")], scores={"correctness": 2}),
            )
            for i in range(2, 5)
        ),
    ]
    body = render_comment(comparison(pairs), CTX)
    part = explained(body)
    assert (
        "the judge scored <code>correctness</code> **0/2** (minimum 2) on head: “wrong city”"
        in part
    )
    assert (
        "| <code>correctness</code> | 2 | 2/2 | 0/2 ❌ | base: right<br>head: wrong city |" in part
    )
    assert "| <code>correctness</code>  | 4 | 2.00 | 1.50 | −0.50 | 1 ↓ · 0 ↑ | 1.000 |" in body
    assert "<details open><summary><b>⚖️ Rubric scores" not in body  # not significant: closed


def test_a_significant_score_drop_opens_the_rubric_section() -> None:
    pairs = [
        (
            result(f"g{i}", checks=[judged(2, "ok", 1)], scores={"correctness": 2}),
            result(f"g{i}", checks=[judged(1, "meh", 1)], scores={"correctness": 1}),
        )
        for i in range(8)
    ]
    body = render_comment(comparison(pairs), CTX)
    assert "<details open><summary><b>⚖️ Rubric scores" in body
    assert "| <code>correctness</code> 📉 | 8 | 2.00 | 1.00 | −1.00 | 8 ↓ · 0 ↑ | 0.008 |" in body
    assert "### 🔎" not in body  # every case still passes: nothing to explain


def test_needs_review_says_why_the_judge_answer_was_unusable() -> None:
    reason = "judge answer is not JSON: 'I would say this is quite good.'"
    base = result("b", severity="blocker", checks=[judged(2, "fine")], scores={"correctness": 2})
    head = result(
        "b",
        "needs_review",
        severity="blocker",
        checks=[RubricResult.unusable("correctness", 2, reason)],
    )
    body = render_comment(comparison([(base, head)]), CTX)
    part = explained(body)
    assert "the judge's answer **could not be used**: judge answer is not JSON" in part
    assert "| <code>correctness</code> | 2 | 2/2 | needs review |" in part
    review = body[body.index("🔍 Needs review") :]
    assert "judge answer is not JSON: 'I would say this is quite good.'" in review.replace(
        "&#x27;", "'"
    )


def test_a_fix_shows_why_the_base_failed() -> None:
    base = result("f", "fail", "Transfers are free.", checks=[failed("include:fee")])
    head = result("f", output="Transfers cost a fee of NGN 50.")
    body = render_comment(comparison([(base, head)]), CTX)
    fixes = body[body.index("✅ Base vs head of 1 fix") :]
    assert "the required phrase <code>fee</code> is **missing** on base; head said" in fixes
    assert "- Transfers are free.\n+ Transfers cost a fee of NGN 50." in fixes


def test_identical_outputs_show_as_context_only() -> None:
    assert diff_lines("Same answer.", "Same answer.") == ["  Same answer."]
    long = " ".join(f"Sentence number {i} is here." for i in range(40))
    lines = diff_lines(long, long.replace("number 20 ", "number twenty "))
    assert lines[0] == "  ⋯" and lines[-1] == "  ⋯"
    assert [line[0] for line in lines[1:-1]] == [" ", "-", "+", " "]


# --- hostile text, held-out cases, the size limit -----------------------------------------------


def hostile_pair(i: int, output: str, needle: str) -> tuple[CaseResult, CaseResult]:
    base = result(f"h{i}", output=f"{output} {needle} {output}", checks=[judged(2, output)])
    head = result(
        f"h{i}",
        "fail",
        f"{needle[::-1]} {output} changed",
        checks=[
            failed(f"include:{needle}", output),
            failed(f"exclude:{output[:20]}", output),
            failed(f"test:{output[:30]}", output),
            judged(0, output),
        ],
    )
    return base, head


def test_hostile_outputs_in_both_sides_keep_the_structure() -> None:
    system = SystemDiff(
        files=[FileDiff(path="p.md", status="modified", diff="@@ -1 +1 @@\n-x\n+y", diff_lines=3)]
    )
    bad = comparison(
        [hostile_pair(i, o, f"needle-{o[:8]}") for i, o in enumerate(HOSTILE_OUTPUTS)],
        system_diff=system,
    )
    benign_outputs = [f"plain answer {i}" for i in range(len(HOSTILE_OUTPUTS))]
    good = comparison(
        [hostile_pair(i, o, f"needle-{o[:8]}") for i, o in enumerate(benign_outputs)],
        system_diff=system,
    )
    hostile_md, benign_md = render_comment(bad, CTX), render_comment(good, CTX)
    assert len(hostile_md) <= COMMENT_MAX_CHARS
    parsed, expected = structure(hostile_md), structure(benign_md)
    assert parsed.tags == expected.tags
    assert parsed.tags["details"] == parsed.tags["summary"]
    assert parsed.tags["img"] == 0 and parsed.tags["script"] == 0
    assert not [a for a in parsed.attributes if a.startswith("on")]
    scanned = "".join(parsed.scanned_text)
    assert not LIVE_MENTION.search(scanned) and not LIVE_REFERENCE.search(scanned)
    assert not CONTROL.search("".join(parsed.all_text))
    assert github_html(hostile_md).count('<pre lang="diff">') >= 5


# characters that mean something to Markdown, HTML, GitHub or a terminal
DANGER = "`*_~|<>&\"'@#$\\[]()!:/.\n \x1b\u202e" + "abcCAC012"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.text(alphabet=DANGER, max_size=300),
    head=st.text(alphabet=DANGER, max_size=300),
    needle=st.text(alphabet=DANGER, min_size=1, max_size=12),
    note=st.text(alphabet=DANGER, max_size=80),
)
def test_any_text_on_either_side_stays_inert(base: str, head: str, needle: str, note: str) -> None:
    pair = (
        result("x", output=base, checks=[judged(2, note)]),
        result(
            "x",
            "fail",
            head,
            checks=[
                failed(f"include:{needle}", note),
                failed(f"exclude:{needle}"),
                judged(0, note),
            ],
        ),
    )
    system = SystemDiff(
        files=[FileDiff(path=needle, status="added", diff=f"@@ -0,0 +1 @@\n+{head}")]
    )
    body = render_comment(comparison([pair], system_diff=system), CTX)
    html = github_html(body)
    parsed = structure(body)
    allowed = {
        "p", "h3", "ul", "li", "code", "pre", "a", "b", "strong", "em", "table", "thead", "tbody",
        "tr", "th", "td", "details", "summary", "sub", "br",
    }  # fmt: skip
    assert set(parsed.tags) <= allowed, set(parsed.tags) - allowed
    assert parsed.tags["details"] == html.count("</details>") == parsed.tags["summary"]
    assert parsed.tags["pre"] == html.count('<pre lang="diff">') + html.count(
        '<pre lang="mermaid">'
    )
    assert parsed.tags["pre"] >= 2  # the case's diff and the file's
    assert not LIVE_MENTION.search("".join(parsed.scanned_text))
    assert not CONTROL.search("".join(parsed.all_text))
    shown = render_text(comparison([pair], system_diff=system), CTX, colour=True)
    assert not re.search(r"\x1b(?!\[(?:3[126]|0)m)", shown)  # only our own colour codes


def test_held_out_regressions_show_id_and_verdict_only() -> None:
    secret = "HELD-OUT-ANSWER"
    base = result("hidden", output=f"{secret} base", heldout=True, checks=[judged(2, secret)])
    head = result(
        "hidden",
        "fail",
        f"{secret} head",
        heldout=True,
        checks=[failed(f"include:{secret}", secret), judged(0, secret)],
        scores={"correctness": 0},
    )
    base.scores = {"correctness": 2}
    visible = (result("v", output="a"), result("v", "fail", "b", checks=[failed("include:a")]))
    c = comparison([(base, head), visible])
    assert c.rubric is not None and c.rubric.heldout_left_out == 1 and not c.rubric.dimensions
    markdown = render_comment(c, CTX)
    for out in (markdown, render_json(c), render_junit(c), render_text(c, CTX)):
        assert secret not in out
        assert "correctness" not in out
    assert "hidden" in markdown and "hidden" not in explained(markdown)


def test_many_long_regressions_fit_with_and_n_more() -> None:
    ticks = "`" * 7
    pairs = [
        (
            result(f"case-{i:04d}", output=f"{ticks} base answer {i} " * 200),
            result(
                f"case-{i:04d}",
                "fail",
                f"{ticks} head answer {i} " * 200,
                checks=[failed("equals")],
            ),
        )
        for i in range(400)
    ]
    files = [
        FileDiff(
            path=f"prompts/p{i}.md",
            status="modified",
            diff="\n".join(f"+line {j}" for j in range(400)),
        )
        for i in range(30)
    ]
    c = comparison(pairs, system_diff=SystemDiff(files=files))
    body = render_comment(c, CTX)
    assert len(body.encode("utf-16-le")) // 2 <= COMMENT_MAX_CHARS
    assert "### 📉 Regressions: passed on base, fail on head (400)" in body
    assert re.search(r"…and [0-9,]+ more regressions in the \[full report\]", body)
    assert re.search(r"…and [0-9,]+ more files in the \[full report\]", body)
    assert "more lines in the full report" in body
    parsed = structure(body)
    assert parsed.tags["details"] == parsed.tags["summary"]


def test_the_preview_colours_diff_lines_as_github_does() -> None:
    base = result("k", output="old line")
    head = result("k", "fail", "new <line>", checks=[failed("include:old")])
    page = html_page(render_comment(comparison([(base, head)]), CTX), title="t")
    assert '<span class="pl-md">- old line</span>' in page
    assert '<span class="pl-mi1">+ new &lt;line&gt;</span>' in page


def test_a_chart_quoted_in_an_output_stays_text_in_the_preview() -> None:
    chart = '```mermaid\nxychart-beta\n    x-axis ["a", "b"]\n    bar [50, 60]\n```'
    base = result("k", output=f"Intro.\n{chart}\nold")
    head = result("k", "fail", f"Intro.\n{chart}\nnew", checks=[failed("include:old")])
    page = html_page(render_comment(comparison([(base, head)]), CTX), title="t")
    assert "&lt;svg" not in page and "<svg" not in page
    assert "  xychart-beta" in page  # shown as the diff's context line
