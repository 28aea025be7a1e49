"""The terminal text (`--format text`): written from the same view as the Markdown comment, in
the plain style, never by stripping Markdown; untrusted text in it stays inert."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.cli import run_gate
from helpers.reports import HOSTILE_OUTPUTS, case, check, report, write_report

from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.inputs.policy import Budgets, Policy
from gate.render import RenderContext, render_comment, render_text
from gate.render.plain import width
from gate.render.reasons import words

CTX = RenderContext(
    suite="support", repository="o/r", head_sha="a" * 40, base_sha="b" * 40, run_url=None
)
MARKDOWN = re.compile(r"\*\*|<code>|<br>|</?details>|<summary>|\|---|```|\\[-_()#.!|*]|&[a-z]+;")
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _failing(tmp_path: Path) -> Comparison:
    base = [
        case("a", output="Register with the CAC first."),
        case("b"),
        case("c", "fail"),
        case("blk", severity="blocker"),
        case("gone"),
    ]
    head = [
        case("a", "fail", output="Register first."),
        case("b"),
        case("c"),
        case("blk", "fail", severity="blocker", checks=[check("include:X", False, "no X")]),
        case("new", task="other"),
    ]
    return compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())


def test_the_text_says_what_the_comment_says_without_markdown(tmp_path: Path) -> None:
    c = _failing(tmp_path)
    text = render_text(c, CTX)
    comment = render_comment(c, CTX)
    said = words(c)
    first = text.splitlines()[0]
    assert first == (
        "❌ Eval Gate: fail (support) — pass rate 75.0% → 50.0% (−25.0 pts, threshold 3) · "
        "2 regressions · 1 blocker · 1 fix"
    )
    assert first.split(" — ")[1] in comment.splitlines()[1]  # the headline's numbers
    for sentence in said.reasons:
        assert f"\n- {sentence}\n" in text
    for note in said.notes:
        assert f"\n- ℹ️ {note}\n" in text
    for title in ("🛑 Blocking cases failing on head (1)", "📉 Regressions: passed on base"):
        assert f"▸ {title}" in text and title in comment
    # a blocking case once, with everything about it: since when, why, base vs head
    assert "blk · faq · blocker · 🆕 new: pass → fail · failed: include:X\n  - the required" in text
    assert text.count("blk · ") == 1
    assert "One of them is a blocking case, shown above." in text
    assert "    - Register with the CAC first.\n    + Register first." in text  # base vs head
    assert "  - the required phrase CAC is missing on head; base said “Register with the CAC" in (
        text
    )
    assert "▸ 🆕 Added (only on head, not in the delta) (1)\n  - new · other" in text
    assert "· head aaaaaaa vs base bbbbbbb\n" in text  # commits, without their links
    linked = render_text(c, CTX.model_copy(update={"run_url": "https://ci.example/run/7"}))
    assert "· full report <https://ci.example/run/7>" in linked  # where to go, with its address
    assert not MARKDOWN.search(text), MARKDOWN.findall(text)
    assert "\x1b" not in text


def test_tables_are_aligned_columns(tmp_path: Path) -> None:
    rows = [case(f"c{i}", task=["faq", "coding-tasks"][i % 2]) for i in range(8)]
    head = [case(r["id"], "fail", task=r["task"]) if i < 2 else r for i, r in enumerate(rows)]
    c = compare(report(tmp_path, "base", rows), report(tmp_path, "head", head), Policy())
    text = render_text(c, CTX)
    table = text[text.index("▸ 📊 Pass rate by task (2)") :].splitlines()[1:4]
    assert table[0].split() == ["Task", "Cases", "Base", "Head", "Δ", "pts", "Regressions", "Fixes"]
    starts = {line.index(word) for line, word in zip(table, ("Cases", "4", "4"), strict=True)}
    assert len(starts) == 1  # one column, one start
    usage = text[text.index("▸ 💰 Cost, tokens and latency") :].splitlines()
    assert usage[3].startswith("  Calls") and usage[3].index("8") == usage[2].index("Base")
    assert width("✏️ changed") == 10 and width("🆕 new") == 6


def test_hostile_text_is_shown_but_inert(tmp_path: Path) -> None:
    base = [case(f"h{i}") for i in range(len(HOSTILE_OUTPUTS))]
    head = [
        case(f"h{i}", "fail", output=out, checks=[check("include:CAC", False, out)])
        for i, out in enumerate(HOSTILE_OUTPUTS)
    ]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    for colour in (False, True):
        text = render_text(c, CTX, colour=colour)
        assert not CONTROL.search(text.replace("\x1b[31m", "").replace("\x1b[32m", "")
                                  .replace("\x1b[36m", "").replace("\x1b[0m", ""))  # fmt: skip
        assert "␛[31mred␛[0m" in text  # an escape sequence is shown, never run
        assert "<U+202E>evil" in text
        assert '<img src=x onerror="alert(1)">' in text  # literal, not an HTML entity
        assert "&lt;" not in text.replace("&lt;script&gt; &#64;", "")


def test_colour_marks_the_diff_lines_only(tmp_path: Path) -> None:
    c = _failing(tmp_path)
    plain, coloured = render_text(c, CTX), render_text(c, CTX, colour=True)
    assert "\x1b" not in plain
    assert "    \x1b[31m- Register with the CAC first.\x1b[0m" in coloured
    assert "    \x1b[32m+ Register first.\x1b[0m" in coloured
    assert re.sub(r"\x1b\[\d+m", "", coloured) == plain


def test_budgets_money_and_a_skip_read_as_text(tmp_path: Path) -> None:
    rows = [case(f"c{i}", cost_usd=1.5) for i in range(10)]
    dearer = [case(f"c{i}", cost_usd=3.0) for i in range(10)]
    c = compare(
        report(tmp_path, "base", rows),
        report(tmp_path, "head", dearer),
        Policy(budgets=Budgets(cost_pct=20)),
    )
    text = render_text(c, CTX)
    assert "  Cost               $15.00  $30.00  +$15.00 (+100%)" in text
    assert "- cost rose 100.0% over the cases both sides ran" in text
    assert "· budgets cost +20%" in text


def test_gate_compare_prints_the_text_format(tmp_path: Path) -> None:
    base = write_report(tmp_path, "base", [case("a"), case("b")])
    head = write_report(tmp_path, "head", [case("a", "fail", output="bad"), case("b")])
    done = run_gate("compare", str(base), str(head), "--format", "text", cwd=tmp_path)
    assert done.code == 1
    assert done.out.startswith("❌ Eval Gate: fail (support) — pass rate 100.0% → 50.0%")
    assert "    - answer of a\n    + bad" in done.out and "▸ 📐 Statistics" in done.out
    # piped, the default is the Markdown comment
    piped = run_gate("compare", str(base), str(head), cwd=tmp_path)
    assert piped.out.startswith("<!-- eval-gate:support -->")
