"""What the templates are given: the comparison plus ready-made pieces, written in the output's
`Style` (Markdown for the comment and the job summary, plain text for a terminal), so that
every format is built from the same view.

Pure: no I/O. Anything computed from untrusted text here comes out inert, through the style.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gate import __version__
from gate.compare.models import CaseChange, Comparison, TaskDelta
from gate.compare.system import FileStatus
from gate.render import values
from gate.render.diff import Explained, explain, file_block
from gate.render.groups import error_groups
from gate.render.headline import (
    ICONS,
    accepted_by,
    auto_line,
    context_line,
    delta_digits,
    headline_parts,
    reason_headline,
)
from gate.render.links import RenderContext, case_url, safe_url, sha_link
from gate.render.markdown import Md, mermaid_label
from gate.render.metadata import file_rows, meta_rows, policy_line
from gate.render.paths import ChangedPath, path_view, turn_rows
from gate.render.reasons import WordedComparison
from gate.render.statistics import statistics_lines
from gate.render.style import Style
from gate.render.usage import usage_rows


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
    path_steps: int = 12  # steps of an agent's path shown side by side
    group_ids: int = 5  # ids named in a row of cases with the same error

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
            "path_steps",
        )
        update = {name: int(getattr(self, name) * factor) for name in counts}
        update["checks"] = max(update["checks"], 1 if factor > 0 else 0)
        update["reasons"] = max(update["reasons"], 1)
        update["group_ids"] = max(int(self.group_ids * factor), 1)
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
    path_steps=60,
)


def checks_cell(case: CaseChange, limits: Limits, style: Style) -> Md:
    """One table cell: the failed (or unreviewed) checks with their detail, or the error."""
    if case.heldout:
        return Md("held out")
    shown = case.shown
    checks = shown.failed_checks + shown.review_checks
    if not checks:
        error = case.head.error if case.head else None
        return style.text(error, limits.detail_chars) if error else Md(values.DASH)
    parts = []
    for check in checks[: limits.checks]:
        part = style.code(check.name, 60)
        if check.passed is None:
            part = Md(part + " (needs review)")
        if check.detail:
            part = Md(f"{part} {style.text(check.detail, limits.detail_chars)}")
        parts.append(part)
    if len(checks) > limits.checks:
        parts.append(Md(f"+{len(checks) - limits.checks} more"))
    return style.lines(parts)


def failed_names(case: CaseChange, limits: Limits, style: Style) -> Md:
    """` · failed: include:CAC, regex` for the header of an explained case: the checks by
    name (their detail is what the explanation says); empty for a held-out case."""
    side = case.head if case.head is not None and case.head.status != "pass" else case.base
    if case.heldout or side is None:
        return Md("")
    parts = []
    for label, checks in (("failed", side.failed_checks), ("needs review", side.review_checks)):
        if checks:
            names = [style.code(c.name, 60) for c in checks[: limits.checks]]
            more = f" +{len(checks) - limits.checks} more" if len(checks) > limits.checks else ""
            parts.append(f" · {label}: {', '.join(names)}{more}")
    return Md("".join(parts))


def since_cell(case: CaseChange, c: Comparison) -> Md:
    """Since when a blocking case fails on head, and its runs with repeats."""
    new = case.id in set(c.new_blocker_failures)
    since = f"🆕 new: {values.change(case)}" if new else "already failing on base"
    if case.repeated:
        since += f" · runs passed {values.runs_change(case)}"
        if case.flaky:
            since += " · 🎲 flaky"
        base = case.base
        if c.policy.blockers == "new" and base is not None and base.passes != base.repeats:
            since += " · does not block (`blockers: new`)"
    return Md(since)


def _explained(cases: list[CaseChange], limits: Limits, style: Style) -> list[Explained]:
    return [
        explain(
            case,
            style,
            checks=limits.checks,
            chars=limits.detail_chars,
            lines=2 * limits.excerpt_lines,
            diff_chars=2 * limits.excerpt_chars,
            steps=max(limits.path_steps, 2),
        )
        for case in cases
    ]


def explained_cases(c: Comparison, limits: Limits, style: Style) -> tuple[list[Explained], int]:
    """Base against head for the cases that decide: blocking failures, then regressions."""
    seen: dict[str, CaseChange] = {}
    for case in c.case_list([*c.blocker_failures, *c.regressions]):
        if not case.heldout:
            seen.setdefault(case.id, case)
    shown = list(seen.values())
    return _explained(shown[: limits.excerpts], limits, style), len(shown)


def changed_paths(
    c: Comparison, limits: Limits, style: Style, explained: list[Explained]
) -> tuple[list[ChangedPath], int]:
    """The agent cases whose path changed that no explanation above shows already."""
    shown = {x.case.id for x in explained}
    cases = [
        case for case in c.case_list(c.path_changed) if not case.heldout and case.id not in shown
    ]
    steps = max(limits.path_steps, 2)
    return [
        ChangedPath(
            case,
            path_view(case, style, steps=steps, chars=limits.detail_chars),
            turn_rows(case, style, limits.detail_chars),
        )
        for case in cases[: limits.excerpts]
    ], len(cases)


def deciding_cases(
    explained: list[Explained], c: Comparison
) -> dict[str, list[Explained] | list[str]]:
    """Each deciding case once, where it is listed: the blocking cases, then the regressions
    that are not blocking. Those explained (`explained`) show everything about the case; the
    rest (held out, or past the limit) are table rows."""
    blocking = set(c.blocker_failures)
    shown = {x.case.id for x in explained}
    apart = [i for i in c.regressions if i not in blocking]
    return {
        "blocker_explained": [x for x in explained if x.case.id in blocking],
        "blocker_rest": [i for i in c.blocker_failures if i not in shown],
        "regressions_apart": apart,
        "regression_explained": [x for x in explained if x.case.id not in blocking],
        "regression_rest": [i for i in apart if i not in shown],
    }


SHORT_DIFF_LINES = 30  # a system change this short is shown open on a comment that blocks


def system_open(c: Comparison, limits: Limits) -> bool:
    """The PR's change to the system is shown open when it may have caused a fail (or an
    inconclusive suite) and is short enough to read at a glance."""
    if c.system_diff is None or c.verdict not in ("fail", "inconclusive"):
        return False
    files = c.system_diff.files[: limits.diff_files]
    return sum(f.diff_lines for f in files) <= SHORT_DIFF_LINES


def explained_fixes(c: Comparison, limits: Limits, style: Style) -> tuple[list[Explained], int]:
    fixes = [case for case in c.case_list(c.fixes) if not case.heldout]
    return _explained(fixes[: limits.excerpts], limits, style), len(fixes)


def unchanged(t: TaskDelta) -> bool:
    """A task whose cases all kept their outcome: nothing of it moved."""
    return not (t.regressions or t.fixes or t.added or t.removed or t.delta_points)


def task_rows(c: Comparison, limits: Limits, style: Style) -> list[dict[str, Md]]:
    """One row per task that changed, then one row for all the unchanged ones (none when
    every task is unchanged: the template says so in a line)."""

    def cases(t: TaskDelta) -> Md:
        unpaired = f" (+{t.added}/−{t.removed})" if t.added or t.removed else ""
        return Md(f"{values.num(t.n)}{unpaired}")

    changed = [t for t in c.tasks if not unchanged(t)]
    rows = [
        {
            "task": style.text(t.task, 60),
            "cases": cases(t),
            "base": values.pct(t.base_pass_rate),
            "head": values.pct(t.head_pass_rate),
            "delta": values.pts(t.delta_points),
            "regressions": values.num(t.regressions),
            "fixes": values.num(t.fixes),
        }
        for t in changed[: limits.tasks]
    ]
    still = [t for t in c.tasks if unchanged(t)]
    if still and changed:
        rows.append(folded_row(still, style))
    return rows


def folded_row(tasks: list[TaskDelta], style: Style) -> dict[str, Md]:
    """The unchanged tasks as one row: their names and their pooled pass rate (the same on
    both sides)."""
    n = sum(t.n for t in tasks)
    rate = 100 * sum(t.base_passed for t in tasks) / n if n else None
    names = ", ".join(style.text(t.task, 60) for t in tasks[:4]) + (", …" if len(tasks) > 4 else "")
    return {
        "task": style.emphasis(f"{values.plural(len(tasks), 'task')} unchanged: {names}"),
        "cases": values.num(n),
        "base": values.pct(rate),
        "head": values.pct(rate),
        "delta": values.pts(0.0),
        "regressions": values.num(0),
        "fixes": values.num(0),
    }


def metric_rows(c: Comparison, limits: Limits, style: Style) -> list[dict[str, Md]]:
    """promptfoo's metrics, the largest drop first (`gate.compare.metrics`)."""
    return [
        {
            "metric": style.text(r.metric, 60),
            "cases": values.num(r.n),
            "base": values.pct(r.base_pass_rate),
            "head": values.pct(r.head_pass_rate),
            "delta": values.pts(r.delta_points),
        }
        for r in c.metrics[: limits.tasks]
    ]


def rubric_rows(c: Comparison, style: Style) -> list[dict[str, Md]]:
    if c.rubric is None:
        return []
    return [
        {
            "dimension": style.code(d.dimension, 60),
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


FILE_STATUS: dict[FileStatus, str] = {
    "added": "added",
    "removed": "removed",
    "modified": "modified",
    "no_longer_read": "no longer read",
    "newly_read": "newly read",
}


def system_files(c: Comparison, limits: Limits, style: Style) -> list[dict[str, Md]]:
    if c.system_diff is None:
        return []
    return [
        {
            "path": style.code(f.path, 120),
            "status": Md(FILE_STATUS[f.status]),
            "counts": Md(f"+{f.added:,} {values.MINUS}{f.removed:,}"),
            "block": file_block(
                f, style, max_lines=limits.diff_lines, max_chars=limits.diff_lines * 120
            ),
        }
        for f in c.system_diff.files[: limits.diff_files]
    ]


def chart(c: Comparison, limits: Limits) -> dict[str, list[Md]] | None:
    """Base and head of the tasks that changed, when two or more did (bars of equal height
    say nothing the folded row does not)."""
    tasks = [t for t in c.tasks if t.n > 0 and not unchanged(t)][: limits.chart_tasks]
    if len(tasks) < 2:
        return None
    ordered = sorted(tasks, key=lambda t: t.task)
    return {
        # inside a code block Markdown escapes would show: these are sanitised instead
        "labels": [Md(mermaid_label(t.task)) for t in ordered],
        "base": [Md(f"{t.base_pass_rate or 0:.1f}") for t in ordered],
        "head": [Md(f"{t.head_pass_rate or 0:.1f}") for t in ordered],
    }


def template_context(
    c: WordedComparison, ctx: RenderContext, limits: Limits, style: Style
) -> dict[str, object]:
    explained, explained_total = explained_cases(c, limits, style)
    fixes, fixes_total = explained_fixes(c, limits, style)
    paths, paths_total = changed_paths(c, limits, style, [*explained, *fixes])
    return {
        **deciding_cases(explained, c),
        "blocking_ids": set(c.blocker_failures),
        "system_open": system_open(c, limits),
        "c": c,
        "ctx": ctx,
        "limits": limits,
        "delta_digits": delta_digits(c),
        "version": __version__,
        "verdict_icon": Md(ICONS[c.verdict]),
        "accepted": accepted_by(c) is not None,
        "headline_parts": headline_parts(c),
        "reason_headline": reason_headline(c),
        "context_line": context_line(c, ctx, style),
        "report_url": safe_url(ctx.run_url),
        "case_url": lambda case: case_url(case, ctx),
        "sha_link": lambda sha: sha_link(sha, ctx, style),
        "checks": lambda case: checks_cell(case, limits, style),
        "failed_names": lambda case: failed_names(case, limits, style),
        "error_groups": lambda ids, side: error_groups(c, ids, side),
        "since": lambda case: since_cell(case, c),
        "new_blockers": set(c.new_blocker_failures),
        "explained": explained,
        "explained_total": explained_total,
        "explained_fixes": fixes,
        "explained_fixes_total": fixes_total,
        "changed_paths": paths,
        "changed_paths_total": paths_total,
        "task_rows": task_rows(c, limits, style),
        "tasks_unchanged": sum(1 for t in c.tasks if unchanged(t)),
        "rubric_rows": rubric_rows(c, style),
        "metric_rows": metric_rows(c, limits, style),
        "system_files": system_files(c, limits, style),
        "system_total": len(c.system_diff.files) if c.system_diff else 0,
        "chart": chart(c, limits),
        "usage_rows": usage_rows(c, style),
        "statistics": statistics_lines(c, style),
        "meta_rows": meta_rows(c, ctx, style),
        "policy_line": policy_line(c, ctx, style),
        "auto_line": auto_line(c),
        "file_rows": file_rows(c, style),
    }
