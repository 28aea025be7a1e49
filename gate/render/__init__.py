"""Render a `Comparison`: the PR comment, the job summary, the terminal text, JSON and JUnit.

Pure apart from loading templates, which come as text (`TemplateSet`). The gate writes the top
of the comment itself: the suite's hidden marker (how the PR flow finds it again) and the
verdict line; a template renders only the body below them, defused so that it can add neither
(`gate.render.headline`). The comment always fits GitHub's 65,536-character limit: lists are
shortened step by step until the body fits, with a minimal body as the last resort.
"""

from __future__ import annotations

import functools
import hashlib
import re
import traceback
from collections.abc import Callable
from typing import TypeVar

from jinja2 import TemplateError, TemplateSyntaxError
from jinja2.sandbox import SecurityError

from gate.compare.models import Comparison
from gate.errors import InputError
from gate.inputs.templates import TemplateSet
from gate.render.defuse import defuse_body
from gate.render.environment import environment
from gate.render.headline import headline
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
    "check_templates",
    "comment_marker",
    "render_comment",
    "render_json",
    "render_junit",
    "render_suite",
    "render_summary",
    "render_text",
]

COMMENT_MAX_CHARS = 65_536
SUMMARY_MAX_BYTES = 1024 * 1024
SCALES = (1.0, 0.5, 0.25, 0.12, 0.05, 0.0)
BLANK_RUNS = re.compile(r"\n{3,}")
T = TypeVar("T")


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


def minimal_body(ctx: RenderContext) -> str:
    """The last resort when nothing else fits below the verdict line: where to look."""
    where = safe_url(ctx.run_url)
    pointer = f"[the full report]({where})" if where else "the full report"
    return f"The details do not fit in a comment: see {pointer}.\n"


def _template_error(exc: Exception, templates: TemplateSet | None) -> InputError:
    """The error at the template's file and line (the innermost template frame)."""
    if isinstance(exc, TemplateSyntaxError):
        return InputError(f"template error: {exc.message}", file=exc.filename, line=exc.lineno)
    shown = {f.display for f in templates.files} if templates else set()
    frames = [
        f for f in traceback.extract_tb(exc.__traceback__)
        if f.filename in shown or f.filename.endswith(".j2")
    ]  # fmt: skip
    file = frames[-1].filename if frames else (templates.origin if templates else None)
    line = frames[-1].lineno if frames else None
    if isinstance(exc, SecurityError):
        why = f"blocked by the template sandbox: {exc}"
    elif isinstance(exc, TemplateError):
        why = str(exc.message or exc)
    else:
        why = f"{type(exc).__name__}: {exc}"
    return InputError(f"template error: {why}", file=file, line=line)


def _render_within(
    name: str,
    comparison: WordedComparison,
    ctx: RenderContext,
    limits: Limits,
    top: Callable[[Limits], str],
    fits: Callable[[str], bool],
    style: Style = MARKDOWN,
) -> str:
    """`top` (the gate's own lines) and the template's body, shortened until they fit."""
    template = _guarded(ctx.templates, lambda: environment(ctx.templates, style).get_template(name))
    for factor in SCALES:
        scaled = limits.scaled(factor)
        context = template_context(comparison, ctx, scaled, style)
        rendered = _guarded(ctx.templates, functools.partial(template.render, context))
        body = top(scaled) + (defuse_body(rendered) if ctx.templates else rendered)
        if fits(body):
            return body
    return top(limits.scaled(0.0)) + minimal_body(ctx)


def _guarded(templates: TemplateSet | None, step: Callable[[], T]) -> T:
    """A step of jinja2's; what goes wrong in a user's template is an `InputError` there."""
    try:
        return step()
    except Exception as exc:
        if templates is None and not isinstance(exc, TemplateError):
            raise  # the built-in templates' own bug: not the user's input
        raise _template_error(exc, templates) from None


def _headline(
    comparison: WordedComparison, style: Style = MARKDOWN, end: str = "\n\n"
) -> Callable[[Limits], str]:
    """The verdict line, the gate's own: no template writes it."""
    return lambda limits: str(headline(comparison, style, limits.reason_chars)) + end


def render_comment(
    comparison: Comparison, ctx: RenderContext, *, max_chars: int = COMMENT_MAX_CHARS
) -> str:
    """One suite's comment (`gate compare`'s): marker, verdict line and body, at most
    `max_chars` characters."""
    marker = comment_marker(ctx.suite if ctx.suite != "default" else comparison.suite)
    return render_section(comparison, ctx, max_chars=max_chars, top=f"{marker}\n")


def render_section(
    comparison: Comparison, ctx: RenderContext, *, max_chars: int, top: str = ""
) -> str:
    """A suite's verdict line and body, after `top`, at most `max_chars` characters (the PR
    comment's section of the suite: `gate.render.pr_comment`)."""
    words = worded(comparison)
    verdict = _headline(words)
    return _render_within(
        "comment.md.j2",
        words,
        ctx,
        COMMENT_LIMITS,
        lambda limits: f"{top}{verdict(limits)}",
        lambda body: utf16_length(body) <= max_chars,
    )


def render_summary(
    comparison: Comparison, ctx: RenderContext, *, max_bytes: int = SUMMARY_MAX_BYTES
) -> str:
    """The job summary: a title, the verdict line and the comment's layout with longer lists,
    at most `max_bytes` of UTF-8."""
    title = f"## Eval Gate · {text(comparison.suite, 80)}\n\n"
    words = worded(comparison)
    verdict = _headline(words)
    return _render_within(
        "summary.md.j2",
        words,
        ctx,
        SUMMARY_LIMITS,
        lambda limits: title + verdict(limits),
        lambda body: utf8_length(body) <= max_bytes,
    )


def render_text(comparison: Comparison, ctx: RenderContext, *, colour: bool = False) -> str:
    """The comment for a terminal (`--format text`): the same view as the comment, written
    as plain text (`colour`: diff lines red and green)."""
    words, style = worded(comparison), PlainStyle(colour)
    body = _render_within(
        "comment.txt.j2",
        words,
        ctx,
        COMMENT_LIMITS,
        _headline(words, style, end="\n"),
        lambda body: True,
        style,
    )
    return BLANK_RUNS.sub("\n\n", body).strip() + "\n"


def render_suite(
    comparison: Comparison, ctx: RenderContext, *, own: TemplateSet | None = None
) -> tuple[str, str]:
    """A suite's comment and job summary with `ctx`'s templates. `own`: the PR's own
    templates when others render its comment: rendered as well, the output thrown away, so
    that a template that breaks is the PR's bad input now, not every later PR's."""
    ctx = ctx.model_copy(update={"suite": comparison.suite})
    if own is not None:
        mine = ctx.model_copy(update={"templates": own})
        render_comment(comparison, mine), render_summary(comparison, mine)
    return render_comment(comparison, ctx), render_summary(comparison, ctx)


def check_templates(templates: TemplateSet) -> None:
    """Every template of the set compiled: a syntax error (or an unknown filter or test) is
    an `InputError` at its file and line before anything runs."""
    env = environment(templates)
    for file in templates.files:
        try:
            env.get_template(file.name)
        except TemplateSyntaxError as exc:
            raise _template_error(exc, templates) from None


def render_json(comparison: Comparison) -> str:
    """The stable `json` format: the comparison's fields and its findings in words, held-out
    cases already stripped."""
    return worded(comparison).model_dump_json(indent=2) + "\n"
