"""The jinja2 environment of the Markdown templates: escaping by default, formatting filters.

Every `{{ value }}` is escaped as untrusted inline text unless it is `Md` (trusted Markdown,
what the filters below return) or jinja2 `Markup` (macro output, `|safe`), so a template that
forgets a filter stays safe. Autoescaping is on only so that jinja2 treats macro output as
trusted; `_finalize` does the Markdown escaping before jinja2's HTML escaping sees the value.
Templates are the package's `gate.templates`; a user's folder comes first and may replace any
of them, or extend ours through the `gate/` prefix (`{% extends "gate/comment.md.j2" %}`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    DictLoader,
    Environment,
    FileSystemLoader,
    PackageLoader,
    PrefixLoader,
    StrictUndefined,
)
from markupsafe import Markup

from gate.render import values
from gate.render.markdown import Md, mermaid_label
from gate.render.plain import columns
from gate.render.style import MARKDOWN, Style


def _finalizer(style: Style) -> Any:
    def finalize(value: Any) -> Markup:
        """Runs on every `{{ }}` before jinja's own escaping, which then lets `Markup` through."""
        if isinstance(value, Markup):
            return value
        if value is None:
            return Md("")
        if isinstance(value, bool | int | float):
            return Md(str(value))
        return style.text(value, limit=2000)

    return finalize


def _loader(
    template_dir: Path | None, files: tuple[tuple[str, str], ...] | None = None
) -> BaseLoader:
    ours = PackageLoader("gate.templates", ".")
    loaders: list[BaseLoader] = [PrefixLoader({"gate": ours}), ours]
    if template_dir is not None:
        loaders.insert(0, FileSystemLoader(str(template_dir)))
    if files is not None:
        loaders.insert(0, DictLoader(dict(files)))
    return ChoiceLoader(loaders)


@functools.lru_cache(maxsize=8)
def environment(
    template_dir: Path | None = None,
    style: Style = MARKDOWN,
    files: tuple[tuple[str, str], ...] | None = None,
) -> Environment:
    """The templates' environment, its escaping and filters those of `style`; `files`: user
    templates given as text, before `template_dir` and the built-in ones."""
    env = Environment(
        loader=_loader(template_dir, files),
        autoescape=True,
        finalize=_finalizer(style),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        text=lambda value, limit=300: style.text(value, limit),
        code=lambda value, limit=120: style.code(value, limit),
        block=lambda value, max_chars=600, max_lines=12, lang="": style.block(
            value, max_chars=max_chars, max_lines=max_lines, lang=lang
        ),
        link=lambda label, url: style.link(
            label if isinstance(label, Md) else style.text(label), url
        ),
        destination=lambda label, url: style.destination(
            label if isinstance(label, Md) else style.text(label), url
        ),
        md=Md,
        chart_label=lambda value, limit=24: Md(mermaid_label(str(value), limit)),
        pct=values.pct,
        pts=values.pts,
        num=values.num,
        g=values.g,
        ms=values.ms,
        usd=lambda value, signed=False: values.usd(value, signed, style),
        p=values.p_value,
        fraction=values.fraction,
        change=values.change,
        runs=values.runs_change,
        plural=values.plural,
        status=values.status,
        sha=values.short_sha,
        strong=style.strong,
        columns=columns,
    )
    return env
