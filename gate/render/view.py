"""What the templates are given: the comparison plus ready-made, already escaped pieces.

Pure: no I/O. Anything computed from untrusted text here is returned as escaped `Md`.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict

from gate import __version__
from gate.compare.budgets import cost_change_shown
from gate.compare.models import CaseChange, Comparison
from gate.inputs.templates import TemplateSet
from gate.render import values
from gate.render.diff import Explained, explain, file_block
from gate.render.markdown import Md, code, link, mermaid_label, text
from gate.render.metadata import file_rows, system_cell
from gate.render.usage import usage_rows

ICONS = {"pass": "✅", "fail": "❌", "error": "⚠️", "skipped": "⏭️"}
REPOSITORY = re.compile(r"[A-Za-z0-9_.\-]+/[A-Za-z0-9_.\-]+")
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
URL = re.compile(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]+")


class RenderContext(BaseModel):
    """Where the comparison is shown: links need the repository and the shas."""

    model_config = ConfigDict(frozen=True)

    suite: str = "default"
    repository: str | None = None
    server_url: str = "https://github.com"
    head_sha: str | None = None
    base_sha: str | None = None
    run_url: str | None = None
    report_hint: str | None = None
    templates: TemplateSet | None = None  # the user's comment templates, as text


class Limits(BaseModel):
    """How much of each list a body shows; scaled down until the body fits its limit."""

    model_config = ConfigDict(frozen=True)

    rows: int
    items: int
    excerpts: int
    excerpt_chars: int
    excerpt_lines: int
    tasks: int
    chart_tasks: int
    checks: int
    detail_chars: int
    id_chars: int
    reasons: int
    reason_chars: int
    diff_files: int = 8  # system files whose diff is shown
    diff_lines: int = 60  # lines of each

    def scaled(self, factor: float) -> Limits:
        counts = (
            "rows",
            "items",
            "excerpts",
            "tasks",
            "chart_tasks",
            "checks",
            "reasons",
            "diff_files",
            "diff_lines",
        )
        update = {name: int(getattr(self, name) * factor) for name in counts}
        update["checks"] = max(update["checks"], 1 if factor > 0 else 0)
        update["reasons"] = max(update["reasons"], 1)
        if factor < 1:
            update["excerpt_chars"] = max(int(self.excerpt_chars * factor), 200)
            update["detail_chars"] = max(int(self.detail_chars * factor), 60)
            update["reason_chars"] = max(int(self.reason_chars * factor), 160)
        return self.model_copy(update=update)


COMMENT_LIMITS = Limits(
    rows=30,
    items=50,
    excerpts=6,
    excerpt_chars=600,
    excerpt_lines=12,
    tasks=20,
    chart_tasks=12,
    checks=3,
    detail_chars=140,
    id_chars=80,
    reasons=8,
    reason_chars=400,
)
SUMMARY_LIMITS = Limits(
    rows=300,
    items=500,
    excerpts=40,
    excerpt_chars=2000,
    excerpt_lines=40,
    tasks=200,
    chart_tasks=20,
    checks=6,
    detail_chars=300,
    id_chars=120,
    reasons=20,
    reason_chars=600,
    diff_files=50,
    diff_lines=400,
)


def safe_url(url: str | None) -> Md | None:
    if not url or not URL.fullmatch(url):
        return None
    return Md(url.replace("(", "%28").replace(")", "%29"))


def _repo_base(ctx: RenderContext) -> str | None:
    server = safe_url(ctx.server_url.rstrip("/"))
    if server is None or not ctx.repository or not REPOSITORY.fullmatch(ctx.repository):
        return None
    return f"{server}/{ctx.repository}"


def case_url(case: CaseChange, ctx: RenderContext) -> str | None:
    """The case's line at the head sha (the base sha for removed cases), when known."""
    sha = ctx.head_sha if case.head is not None else ctx.base_sha
    base = _repo_base(ctx)
    if case.heldout or not case.file or base is None or not sha or not SHA.fullmatch(sha):
        return None
    anchor = f"#L{case.line}" if case.line > 0 else ""
    return f"{base}/blob/{sha}/{quote(case.file.lstrip('/'))}{anchor}"


def sha_link(sha: str | None, ctx: RenderContext) -> Md:
    if not sha or not SHA.fullmatch(sha):
        return Md(values.DASH)
    base = _repo_base(ctx)
    label = Md(f"<code>{sha[:7]}</code>")
    return link(label, f"{base}/commit/{sha}") if base else label


def checks_cell(case: CaseChange, limits: Limits) -> Md:
    """One table cell: the failed (or unreviewed) checks with their detail, or the error."""
    if case.heldout:
        return Md("held out")
    checks = case.failed_checks + case.review_checks
    if not checks:
        return text(case.error, limits.detail_chars) if case.error else Md(values.DASH)
    parts = []
    for check in checks[: limits.checks]:
        part = code(check.name, 60)
        if check.passed is None:
            part = Md(part + " (needs review)")
        if check.detail:
            part = Md(f"{part} {text(check.detail, limits.detail_chars)}")
        parts.append(part)
    if len(checks) > limits.checks:
        parts.append(Md(f"+{len(checks) - limits.checks} more"))
    return Md("<br>".join(parts))


def headline_parts(c: Comparison) -> list[Md]:
    parts = []
    if c.regressions:
        parts.append(values.plural(len(c.regressions), "regression"))
    if c.blocker_failures:
        parts.append(values.plural(len(c.blocker_failures), "blocker"))
    if c.errors:
        parts.append(values.plural(len(c.errors), "error"))
    if c.fixes:
        parts.append(values.plural(len(c.fixes), "fix", "fixes"))
    if c.needs_review:
        parts.append(Md(f"{len(c.needs_review):,} to review"))
    if c.flaky:
        parts.append(Md(f"{len(c.flaky):,} flaky"))
    cost = cost_change_shown(c.base_usage, c.head_usage, c.policy.budgets) if c.paired else None
    if cost is not None:
        parts.append(Md(f"cost {values.pts(cost, 0)}%"))
    return parts


def _explained(cases: list[CaseChange], limits: Limits) -> list[Explained]:
    return [
        explain(
            case,
            checks=limits.checks,
            chars=limits.detail_chars,
            lines=2 * limits.excerpt_lines,
            diff_chars=2 * limits.excerpt_chars,
        )
        for case in cases
    ]


def explained_cases(c: Comparison, limits: Limits) -> tuple[list[Explained], int]:
    """Base against head for the cases that decide: blocking failures, then regressions."""
    seen: dict[str, CaseChange] = {}
    for case in c.case_list([*c.blocker_failures, *c.regressions]):
        if not case.heldout:
            seen.setdefault(case.id, case)
    shown = list(seen.values())
    return _explained(shown[: limits.excerpts], limits), len(shown)


def explained_fixes(c: Comparison, limits: Limits) -> tuple[list[Explained], int]:
    fixes = [case for case in c.case_list(c.fixes) if not case.heldout]
    return _explained(fixes[: limits.excerpts], limits), len(fixes)


def rubric_rows(c: Comparison) -> list[dict[str, Md]]:
    if c.rubric is None:
        return []
    return [
        {
            "dimension": code(d.dimension, 60),
            "n": values.num(d.n),
            "base": Md(f"{d.base_mean:.2f}"),
            "head": Md(f"{d.head_mean:.2f}"),
            "delta": Md(values.MINUS + f"{-d.delta:.2f}" if d.delta < 0 else f"+{d.delta:.2f}"),
            "moves": Md(f"{d.lower:,} ↓ · {d.higher:,} ↑"),
            "p": values.p_value(d.p_value),
            "fell": Md("📉" if d.delta < 0 and d.p_value < c.policy.alpha else ""),
        }
        for d in c.rubric.dimensions
    ]


def system_files(c: Comparison, limits: Limits) -> list[dict[str, Md]]:
    if c.system_diff is None:
        return []
    return [
        {
            "path": code(f.path, 120),
            "status": Md(f.status),
            "counts": Md(f"+{f.added:,} {values.MINUS}{f.removed:,}"),
            "block": file_block(f, max_lines=limits.diff_lines, max_chars=limits.diff_lines * 120),
        }
        for f in c.system_diff.files[: limits.diff_files]
    ]


def chart(c: Comparison, limits: Limits) -> dict[str, list[Md]] | None:
    tasks = [t for t in c.tasks if t.n > 0][: limits.chart_tasks]
    if len(tasks) < 2:
        return None
    ordered = sorted(tasks, key=lambda t: t.task)
    return {
        # inside a code block Markdown escapes would show: these are sanitised instead
        "labels": [Md(mermaid_label(t.task)) for t in ordered],
        "base": [Md(f"{t.base_pass_rate or 0:.1f}") for t in ordered],
        "head": [Md(f"{t.head_pass_rate or 0:.1f}") for t in ordered],
    }


def meta_rows(c: Comparison, ctx: RenderContext) -> list[dict[str, Md]]:
    b, h = c.base_meta, c.head_meta
    if b is None or h is None:
        return []
    dirty = {True: " (uncommitted changes)", False: "", None: ""}
    return [
        {
            "label": Md("Commit"),
            "base": Md(sha_link(ctx.base_sha or b.git_sha, ctx) + dirty[b.git_dirty]),
            "head": Md(sha_link(ctx.head_sha or h.git_sha, ctx) + dirty[h.git_dirty]),
        },
        {
            "label": Md("System" + (" (changed)" if b.system != h.system else "")),
            "base": system_cell(b.system, h.system),
            "head": system_cell(h.system, b.system),
        },
        {"label": Md("Report"), "base": code(b.label, 80), "head": code(h.label, 80)},
        {"label": Md("Created"), "base": text(b.created_at, 40), "head": text(h.created_at, 40)},
        {"label": Md("Gate"), "base": text(b.gate_version, 20), "head": text(h.gate_version, 20)},
        {
            "label": Md("Cases · repeats"),
            "base": Md(f"{c.base.n:,} · {'auto' if b.auto else b.repeats}"),
            "head": Md(f"{c.head.n:,} · {'auto' if h.auto else h.repeats}"),
        },
    ]


AUTO_STOPS = {
    "clear": "the decision was clear (the interval of the delta lies on one side of −threshold)",
    "settled": "no case was uncertain any more",
    "budget": "the call budget was reached",
    "failed": "a side failed",
    "": "after the first round",
}


def auto_line(c: Comparison) -> Md | None:
    """repeats: auto: how many calls each side made (over the paired cases, as the usage
    table counts them: right for merged shards too), and why the gate stopped."""
    head = c.head_meta.auto if c.head_meta else None
    if not head or not c.base_meta or not c.base_meta.auto or not c.paired:
        return None
    base_calls, head_calls = c.base_usage.calls, c.head_usage.calls
    rounds = int(head.get("rounds") or 0)
    stop = AUTO_STOPS.get(str(head.get("stop", "")), "")
    return Md(
        f"repeats auto: base {base_calls:,} calls, head {head_calls:,} "
        f"({(base_calls + head_calls) / (2 * c.paired):.1f} per case and side) in "
        f"{1 + rounds} round{'s' if rounds else ''}; stopped: {stop}"
    )


def delta_digits(c: Comparison) -> int:
    """Digits that keep the delta honest next to the threshold: a drop of 3.03 points reads
    "−3.03 pts, threshold 3", not "−3.0 pts, threshold 3" (which reads as within it)."""
    delta, threshold = c.delta_points, c.policy.threshold
    if delta is None or abs(delta) == threshold:
        return 1
    return 2 if round(abs(delta), 1) == threshold else 1


def template_context(c: Comparison, ctx: RenderContext, limits: Limits) -> dict[str, Any]:
    explained, explained_total = explained_cases(c, limits)
    fixes, fixes_total = explained_fixes(c, limits)
    return {
        "c": c,
        "ctx": ctx,
        "limits": limits,
        "delta_digits": delta_digits(c),
        "version": __version__,
        "verdict_icon": Md(ICONS[c.verdict]),
        "headline_parts": headline_parts(c),
        # nothing was compared (skipped, or a side could not run): the reason is the headline
        "reason_headline": c.verdict == "skipped" or (c.verdict == "error" and not c.head.n),
        "report_url": safe_url(ctx.run_url),
        "case_url": lambda case: case_url(case, ctx),
        "sha_link": lambda sha: sha_link(sha, ctx),
        "checks": lambda case: checks_cell(case, limits),
        "new_blockers": set(c.new_blocker_failures),
        "explained": explained,
        "explained_total": explained_total,
        "explained_fixes": fixes,
        "explained_fixes_total": fixes_total,
        "rubric_rows": rubric_rows(c),
        "system_files": system_files(c, limits),
        "system_total": len(c.system_diff.files) if c.system_diff else 0,
        "chart": chart(c, limits),
        "usage_rows": usage_rows(c),
        "meta_rows": meta_rows(c, ctx),
        "auto_line": auto_line(c),
        "file_rows": file_rows(c),
    }
