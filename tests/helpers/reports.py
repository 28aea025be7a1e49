"""Helpers shared by the compare, stats and render tests: real report files on disk.

Reports are written with the engine's own `ReportWriter` and read back with `read_report`,
so the tests exercise the same files `gate run` produces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gate.report.checks import (
    CheckResult,
    CodeTestResult,
    ExpectedResult,
    OtherResult,
    PhraseResult,
    PlainResult,
    RubricResult,
)
from gate.report.io import ReportWriter, read_report
from gate.report.models import Attempt, CaseResult, Report, RunMeta, Tokens

HOSTILE_OUTPUTS = [
    "| a | b |\n|---|---|\n| c | d |",
    "```\nfenced\n```\n~~~\ntilde\n~~~",
    "`` ` `` backticks ```` and ` lone",
    "</details></summary></table></td> closing tags",
    '<img src=x onerror="alert(1)"> and <svg onload=alert(1)>',
    "<script>alert(document.cookie)</script><style>body{display:none}</style>",
    "@octocat please look, cc @github/security-team and @everyone",
    "fixes #123 and org/repo#45 and GH-7",
    "\x1b[31mred\x1b[0m \x00 nul \x07 bell \x7f del \x85 nel \u2028 ls",
    "\u202eevil\u202c \u2066isolate\u2069 \u200fRTL mark",
    "<!-- comment start and --> end <![CDATA[x]]>",
    "[link](javascript:alert(1)) ![img](https://evil.example/x.png) <https://evil.example>",
    "&lt;script&gt; &#64;octocat &#x40;octocat entities",
    "$\\frac{1}{0}$ and $$x$$ math",
    "# heading\n- list\n> quote\n1. ordered\n---",
    "*emph* **strong** _u_ ~~strike~~ \\ backslash",
    "<details><summary>fake</summary>inner",
    "x" * 100_000,
]


# The `json` format's stable keys (SPEC, "Stable interfaces").
STABLE_KEYS = (
    "verdict",
    "base_pass_rate",
    "head_pass_rate",
    "delta_points",
    "regressions",
    "fixes",
    "blocker_failures",
    "p_value",
)


def check(name: str, passed: bool | None, detail: str = "") -> CheckResult:
    """A result of the kind its name starts with: `include:X` has the phrase X, `rubric:d` is
    the judge's (unscored), `test:t` names its test, a kind of no parts (`regex`,
    `max_chars:800`) or one this gate does not know (`check-1`) has only its name and detail."""
    kind, _, rest = name.partition(":")
    common = {"name": name, "passed": passed, "detail": detail}
    if kind in ("include", "exclude", "contains"):
        return PhraseResult(kind=kind, phrase=rest, **common)
    if kind == "rubric":
        return RubricResult(kind="rubric", dimension=rest, reason=detail, **common)
    if kind in ("test", "hidden"):
        return CodeTestResult(kind=kind, test=rest, **common)
    if kind == "equals":
        return ExpectedResult(kind="equals", **common)
    if kind in ("regex", "max_chars", "compile"):
        return PlainResult(kind=kind, **common)
    return OtherResult(kind=kind, **common)


def case(
    id: str,
    status: str = "pass",
    *,
    task: str = "faq",
    severity: str = "major",
    **extra: Any,
) -> dict[str, Any]:
    """One case line; a failing case gets a failed check unless `checks` is given."""
    row: dict[str, Any] = {
        "id": id,
        "task": task,
        "severity": severity,
        "status": status,
        "passed": status == "pass",
        "output": extra.pop("output", f"answer of {id}"),
    }
    if status == "fail" and "checks" not in extra:
        row["checks"] = [check("include:CAC", False, 'missing "CAC"')]
    if status == "needs_review" and "checks" not in extra:
        row["checks"] = [check("rubric:correctness", None, "judge answer is not JSON")]
    if status == "error" and "error" not in extra:
        row["error"] = "system error: HTTP 503 after 5 retries"
    row.update(extra)
    return row


def write_report(
    folder: Path,
    label: str,
    rows: list[dict[str, Any]],
    *,
    suite: str = "support",
    sha: str | None = None,
    repeats: int = 1,
    files: dict[str, str] | None = None,
    system: dict[str, Any] | None = None,
) -> Path:
    meta = RunMeta(
        label=label,
        suite=suite,
        git_sha=sha,
        gate_version="0.1.0",
        created_at="2025-06-01T12:00:00+00:00",
        repeats=repeats,
        files=files or {},
        system=system or {"kind": "python", "target": "app:answer"},
        n_cases=len(rows),
    )
    writer = ReportWriter(folder, label)
    writer.open(meta)
    for index, row in enumerate(rows):
        values = {"file": "cases/suite.jsonl", "line": index + 1, "index": index, **row}
        writer.write(CaseResult.model_validate(values))
    writer.close(meta)
    return writer.jsonl


def report(folder: Path, label: str, rows: list[dict[str, Any]], **kwargs: Any) -> Report:
    return read_report(write_report(folder, label, rows, **kwargs))


def repeated(id: str, outcomes: list[str], **extra: Any) -> dict[str, Any]:
    """A case run len(outcomes) times; the majority decides, like the runner."""
    attempts = [
        Attempt(
            repeat=i,
            status=o,  # type: ignore[arg-type]
            latency_ms=100.0 + i,
            tokens=Tokens(prompt=10, completion=5),
        )
        for i, o in enumerate(outcomes)
    ]
    passes = outcomes.count("pass")
    scored = [o for o in outcomes if o != "error"]
    status = "pass" if passes * 2 > len(scored) else "fail"
    row = case(id, status, **extra)
    row.update(
        repeats=len(outcomes),
        attempts=[a.model_dump() for a in attempts],
        pass_fraction=round(passes / len(scored), 4) if scored else 0.0,
        flaky=len(set(scored)) > 1,
    )
    return row
