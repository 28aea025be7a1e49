"""The PR's one comment: the PR's verdict on top, a line per suite, then a section per suite
that has something to show, all under GitHub's size limit, read as GitHub renders it."""

from __future__ import annotations

from pathlib import Path

from helpers.github_html import github_html
from helpers.pr_comment import section
from helpers.reports import case, check, report

from gate.compare.models import Comparison, skipped_comparison
from gate.compare.pairing import compare
from gate.compare.system import FileDiff, SystemDiff
from gate.inputs.policy import Policy
from gate.render import COMMENT_MAX_CHARS, RenderContext, render_comment
from gate.render.pr_comment import PR_MARKER, render_pr_comment

CTX = RenderContext(head_sha="a" * 40, base_sha="b" * 40, report_hint="reports")


def suite(tmp_path: Path, name: str, failing: int, n: int = 20, **head: object) -> Comparison:
    folder = tmp_path / name
    base = [case(f"{name}-{i:03d}") for i in range(n)]
    after = [
        case(f"{name}-{i:03d}", "fail" if i < failing else "pass", **head)
        if i < failing
        else case(f"{name}-{i:03d}")
        for i in range(n)
    ]
    c = compare(report(folder, "base", base), report(folder, "head", after), Policy())
    return c.model_copy(update={"suite": name})


def test_one_suite_is_its_section_under_the_prs_marker(tmp_path: Path) -> None:
    c = suite(tmp_path, "support", 3)
    body = render_pr_comment([c], CTX)
    alone = render_comment(c, CTX.model_copy(update={"suite": "support"}))
    assert body.split("\n", 1) == [PR_MARKER, alone.split("\n", 1)[1]]


def test_the_prs_verdict_then_a_line_per_suite_then_what_has_something_to_show(
    tmp_path: Path,
) -> None:
    failing = suite(tmp_path, "support", 3)
    unchanged = suite(tmp_path, "safety", 0)
    skipped = skipped_comparison("no watched file changed", suite="docs")
    body = render_pr_comment([failing, unchanged, skipped], CTX)
    lines = body.splitlines()
    assert lines[0] == PR_MARKER and body.count("<!-- eval-gate") == 1
    assert lines[1] == "❌ **Eval Gate: fail** — 3 suites: 1 fail (support), 1 pass, 1 skipped"
    assert lines[3].startswith("- ❌ **support**: fail — pass rate 100.0% → 85.0% (−15.0 pts)")
    assert (
        lines[4] == "- ✅ **safety**: pass — pass rate 100.0% → 100.0% (±0.0 pts) · nothing changed"
    )
    assert lines[5] == "- ⏭️ **docs**: skipped — no watched file changed"
    assert "❌ **Eval Gate: fail** (support) — " in section(body, "support")
    assert "(safety) — " not in body and "(docs) — " not in body  # one line each
    html = github_html(body)
    assert html.count("<hr") == 1 and html.count("<strong>Eval Gate: fail</strong>") == 2


def test_every_suite_gets_its_share_and_the_whole_fits(tmp_path: Path) -> None:
    """Six suites, each failing its 2,000 cases with long outputs: every section is there,
    cut to its share, and the comment is within GitHub's limit."""
    noisy = {"output": "`|<details>@all " * 300, "checks": [check("include:x", False, "d" * 400)]}
    suites = [suite(tmp_path, f"s{k}", 2000, n=2000, **noisy) for k in range(6)]
    body = render_pr_comment(suites, CTX)
    assert len(body.encode("utf-16-le")) // 2 <= COMMENT_MAX_CHARS
    for k in range(6):
        assert "2,000 regressions" in section(body, f"s{k}").splitlines()[1]


def test_a_change_to_the_system_two_suites_share_is_shown_once(tmp_path: Path) -> None:
    diff = SystemDiff(
        base_sha="b" * 40,
        head_sha="a" * 40,
        files=[
            FileDiff(
                path="prompts/support.md",
                status="modified",
                removed=1,
                diff="@@ -1,2 +1,1 @@\n say: CAC\n-say: fees",
                diff_lines=3,
            )
        ],
    )
    first, second = (
        suite(tmp_path, name, 3).model_copy(update={"system_diff": diff})
        for name in ("support", "safety")
    )
    body = render_pr_comment([first, second], CTX)
    assert body.count("What the PR changed in the system") == 1
    assert "shown under support" in section(body, "safety")
