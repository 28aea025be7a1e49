"""`gate check`'s flow on a local repository, with each suite's comment rendered as the
command renders it (the flow returns outcomes; its callers render)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.compare.models import Comparison
from gate.flow.pr import FlowOutcome, run_check
from gate.render import RenderContext, render_suite
from gate.render.pr_comment import render_pr_comment


@dataclass(frozen=True)
class Shown:
    suite: str
    comparison: Comparison
    markdown: str
    summary: str
    context: RenderContext


def rendered(flow: FlowOutcome, report_hint: str = "reports") -> list[Shown]:
    ctx = RenderContext(
        head_sha=flow.head_sha,
        base_sha=flow.base_sha,
        report_hint=report_hint,
        templates=flow.templates,
    )
    shown = []
    for outcome in flow.suites:
        _, summary = render_suite(outcome.comparison, ctx, own=flow.head_templates)
        suite_ctx = ctx.model_copy(update={"suite": outcome.suite})
        markdown = render_pr_comment([outcome.comparison], ctx)  # its section of the PR's
        shown.append(Shown(outcome.suite, outcome.comparison, markdown, summary, suite_ctx))
    return shown


def check(repo: Path, config: Path, base_ref: str | None, out: Path, **options: Any) -> list[Shown]:
    """`gate check` in-process: each suite's outcome with its comment."""
    return rendered(run_check(repo, config, base_ref, out, **options), str(out))
