"""The jinja2 environment of the Markdown templates: a sandbox, escaping by default, filters.

Templates are data, not code: a user's templates (`templates:` in gate.yml, possibly brought
by the PR under test) render in jinja2's immutable sandbox, so they reach no Python internals
(`cycler.__init__.__globals__`, `''.__class__.__mro__`, `|attr("__globals__")`, format
strings), no environment and no file. On top of jinja2's rules, no attribute of a class, a
module, a path or a file is readable, none is handed out, and `*`/`**` cannot build huge
values. The templates come as text (`TemplateSet`), so the loader reads no disk either.

Every `{{ value }}` is escaped as untrusted inline text unless it is `Md` (trusted Markdown,
what the filters below return) or jinja2 `Markup` (macro output, `|safe`), so a template that
forgets a filter stays safe. Autoescaping is on only so that jinja2 treats macro output as
trusted; `_finalize` does the Markdown escaping before jinja2's HTML escaping sees the value.
Templates are the package's `gate.templates`; a user's set comes first and may replace any of
them, or extend ours through the `gate/` prefix (`{% extends "gate/comment.md.j2" %}`).
"""

from __future__ import annotations

import functools
import io
import os
import types
from collections.abc import Callable

from jinja2 import (
    BaseLoader,
    ChoiceLoader,
    FunctionLoader,
    PackageLoader,
    PrefixLoader,
    StrictUndefined,
)
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from markupsafe import Markup

from gate.inputs.templates import TemplateSet
from gate.render import values
from gate.render.markdown import Md, mermaid_label
from gate.render.plain import columns
from gate.render.style import MARKDOWN, Style

# Nothing a template may read an attribute of, or be handed as an attribute's value.
OPAQUE = (type, types.ModuleType, os.PathLike, io.IOBase)
MAX_PRODUCT = 100_000  # items or characters `*` may build
MAX_EXPONENT = 100


class TemplateSandbox(ImmutableSandboxedEnvironment):
    """jinja2's immutable sandbox, closed further: see the module's docstring."""

    intercepted_binops = frozenset({"*", "**"})

    def is_safe_attribute(self, obj: object, attr: str, value: object) -> bool:
        if isinstance(obj, OPAQUE) or isinstance(value, OPAQUE):
            return False
        return bool(super().is_safe_attribute(obj, attr, value))

    def call_binop(self, context: Context, operator: str, left: object, right: object) -> object:
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"an exponent above {MAX_EXPONENT} is not allowed")
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                if not (isinstance(seq, str | list | tuple) and isinstance(times, int)):
                    continue
                if len(seq) * times > MAX_PRODUCT:
                    raise SecurityError(f"`*` may build at most {MAX_PRODUCT:,} items")
        return super().call_binop(context, operator, left, right)


def _finalizer(style: Style) -> Callable[[object], Markup]:
    def finalize(value: object) -> Markup:
        """Runs on every `{{ }}` before jinja's own escaping, which then lets `Markup` through."""
        if isinstance(value, Markup):
            return value
        if value is None:
            return Md("")
        if isinstance(value, bool | int | float):
            return Md(str(value))
        return style.text(value, limit=2000)

    return finalize


def _user_loader(templates: TemplateSet) -> FunctionLoader:
    def load(name: str) -> tuple[str, str, Callable[[], bool]] | None:
        found = templates.get(name)
        return None if found is None else (found.source, found.display, lambda: True)

    return FunctionLoader(load)


def _loader(templates: TemplateSet | None) -> BaseLoader:
    ours = PackageLoader("gate.templates", ".")
    loaders: list[BaseLoader] = [PrefixLoader({"gate": ours}), ours]
    if templates is not None:
        loaders.insert(0, _user_loader(templates))
    return ChoiceLoader(loaders)


@functools.lru_cache(maxsize=8)
def environment(templates: TemplateSet | None = None, style: Style = MARKDOWN) -> TemplateSandbox:
    """The templates' sandbox, its escaping and filters those of `style`."""
    env = TemplateSandbox(
        loader=_loader(templates),
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
        prose=lambda value, limit=300: style.prose(value, limit),
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
