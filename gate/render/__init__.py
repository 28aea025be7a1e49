"""Render a `Comparison`: the PR comment, the job summary, the terminal text, JSON and JUnit.

Pure apart from loading templates. The comment always starts with the suite's hidden marker
(how the PR flow finds it again) and always fits GitHub's 65,536-character limit: lists are
shortened step by step until the body fits, with a minimal body as the last resort.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable

from jinja2 import TemplateError, TemplateSyntaxError

from gate.compare.models import Comparison
from gate.errors import InputError
from gate.render import values
from gate.render.environment import environment
from gate.render.headline import ICONS
from gate.render.junit import render_junit
from gate.render.links import RenderContext, safe_url
from gate.render.markdown import text
from gate.render.plain import PlainStyle
from gate.render.reasons import WordedComparison, worded
from gate.render.style import MARKDOWN, Style
from gate.render.view import COMMENT_LIMITS, SUMMARY_LIMITS, Limits, template_context

__all__ = [
    "COMMENT_MAX_CHARS",
    "SUMMARY_MAX_BYTES",
    "RenderContext",
    "comment_marker",
    "render_comment",
    "render_json",
    "render_junit",
    "render_summary",
    "render_text",
]

COMMENT_MAX_CHARS = 65_536
SUMMARY_MAX_BYTES = 1024 * 1024
SCALES = (1.0, 0.5, 0.25, 0.12, 0.05, 0.0)
BLANK_RUNS = re.compile(r"\n{3,}")


def comment_marker(suite: str) -> str:
    """A hidden HTML comment, one per suite; names that could break it are hashed."""
    if re.fullmatch(r"[A-Za-z0-9_.][A-Za-z0-9_.\-]{0,99}", suite) and "--" not in suite:
        return f"<!-- eval-gate:{suite} -->"
    digest = hashlib.sha256(suite.encode("utf-8")).hexdigest()[:12]
    safe = re.sub(r"[^A-Za-z0-9_.]+", "_", suite)[:40]
    return f"<!-- eval-gate:{safe}~{digest} -->"


def utf16_length(body: str) -> int:
    """GitHub counts characters; UTF-16 units are never fewer than code points."""
    return len(body.encode("utf-16-le")) // 2


def utf8_length(body: str) -> int:
    return len(body.encode("utf-8"))


def minimal_body(comparison: Comparison, ctx: RenderContext) -> str:
    """The last resort when nothing else fits: the verdict, the numbers, where to look."""
    c = comparison
    headline = (
        f"{ICONS[c.verdict]} **Eval Gate: {c.verdict}** ({text(c.suite, 60)}) — "
        f"pass rate {values.pct(c.base_pass_rate)} → {values.pct(c.head_pass_rate)} "
        f"({values.pts(c.delta_points)} pts) · "
        f"{values.plural(len(c.regressions), 'regression')} · "
        f"{values.plural(len(c.blocker_failures), 'blocker')} · "
        f"{values.plural(len(c.errors), 'error')}"
    )
    where = safe_url(ctx.run_url)
    pointer = f"[the full report]({where})" if where else "the full report"
    return f"{headline}\n\nThe details do not fit in a comment: see {pointer}.\n"


def _render_within(
    name: str,
    comparison: WordedComparison,
    ctx: RenderContext,
    limits: Limits,
    prefix: str,
    fits: Callable[[str], bool],
    style: Style = MARKDOWN,
) -> str:
    try:
        template = environment(ctx.template_dir, style, ctx.template_files).get_template(name)
        for factor in SCALES:
            context = template_context(comparison, ctx, limits.scaled(factor), style)
            body = prefix + template.render(context)
            if fits(body):
                return body
    except TemplateSyntaxError as exc:
        shown = f"{ctx.template_origin}/{exc.name}" if ctx.template_origin else exc.name
        raise InputError(
            f"template error: {exc.message}", file=exc.filename or shown, line=exc.lineno
        ) from None
    except TemplateError as exc:
        where = ctx.template_origin or ctx.template_dir or "the built-in templates"
        raise InputError(f"template error: {exc}", file=where, key=name) from None
    return prefix + minimal_body(comparison, ctx)


def render_comment(
    comparison: Comparison, ctx: RenderContext, *, max_chars: int = COMMENT_MAX_CHARS
) -> str:
    """The PR comment: marker first, at most `max_chars` characters."""
    marker = comment_marker(ctx.suite if ctx.suite != "default" else comparison.suite)
    return _render_within(
        "comment.md.j2",
        worded(comparison),
        ctx,
        COMMENT_LIMITS,
        marker + "\n",
        lambda body: utf16_length(body) <= max_chars,
    )


def render_summary(
    comparison: Comparison, ctx: RenderContext, *, max_bytes: int = SUMMARY_MAX_BYTES
) -> str:
    """The job summary: the same layout with longer lists, at most `max_bytes` of UTF-8."""
    return _render_within(
        "summary.md.j2",
        worded(comparison),
        ctx,
        SUMMARY_LIMITS,
        "",
        lambda body: utf8_length(body) <= max_bytes,
    )


def render_text(comparison: Comparison, ctx: RenderContext, *, colour: bool = False) -> str:
    """The comment for a terminal (`--format text`): the same view as the comment, written
    as plain text (`colour`: diff lines red and green)."""
    body = _render_within(
        "comment.txt.j2",
        worded(comparison),
        ctx,
        COMMENT_LIMITS,
        "",
        lambda body: True,
        PlainStyle(colour),
    )
    return BLANK_RUNS.sub("\n\n", body).strip() + "\n"


def render_json(comparison: Comparison) -> str:
    """The stable `json` format: the comparison's fields and its findings in words, held-out
    cases already stripped."""
    return worded(comparison).model_dump_json(indent=2) + "\n"
