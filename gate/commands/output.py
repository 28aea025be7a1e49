"""What more than one command prints with: the default format of standard output, whether it
takes colour, and the line that sums up a side's report (`gate run`, `gate merge`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from gate.report.models import JudgeUsage, Summary


def terminal_default(out: str | None = None) -> str:
    """`text` for a person at a terminal, `markdown` for a pipe, a file or a script."""
    return "text" if out is None and sys.stdout.isatty() else "markdown"


def use_colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def describe(summary: Summary, path: Path) -> str:
    """`support: 9/11 passed (81.82%), 2 failed, 0 errors -> PATH`; with repeats the pass
    rate comes first, the one the comparison reads (the mean of the cases' pass fractions),
    then the cases by the outcome of most of their runs."""
    rate = "no case" if summary.pass_rate is None else f"{summary.pass_rate:.2f}%"
    meta = summary.meta
    if meta.repeats > 1 or meta.auto is not None:
        runs = "repeats: auto" if meta.auto is not None else f"{meta.repeats} runs each"
        counts = (
            f"pass rate {rate} ({summary.n} cases, {runs}; {summary.passed} passed most runs"
            f", {summary.failed} failed, {summary.errors} errors)"
        )
    else:
        counts = (
            f"{summary.passed}/{summary.n} passed ({rate})"
            f", {summary.failed} failed, {summary.errors} errors"
        )
    return (
        f"{meta.suite}: {counts}"
        + (f", {summary.needs_review} need review" if summary.needs_review else "")
        + judge_part(summary.judge)
        + "".join(retries_part(role, counts) for role, counts in summary.http.items())
        + f" -> {path}"
    )


def retries_part(role: str, counts: dict[str, int]) -> str:
    if not counts.get("retries"):
        return ""
    limited = counts.get("rate_limited", 0)
    return f"; {role} retried {counts['retries']} times" + (
        f" ({limited} x 429)" if limited else ""
    )


def judge_part(judge: JudgeUsage | None) -> str:
    if judge is None:
        return ""
    cost = f", ${judge.cost_usd:.4f}" if judge.cost_usd is not None else ""
    return (
        f"; judge {judge.calls} calls ({judge.cached} cached), {judge.tokens.total:,} tokens{cost}"
    )
