"""Templates written for nunjucks (promptfoo's engine), rendered with jinja2's sandbox. Pure.

jinja2 and nunjucks share their syntax and most built-in filters; `NUNJUCKS_FILTERS` adds the
ones jinja2 lacks (`dump`, `nl2br`) and promptfoo's own `load`. The gate's prompt environment
(`gate.providers.prompts`) has them too. `promptfoo_environment` also prints values as
nunjucks does (nothing for an undefined or null variable, `a,b` for a list, `1` for 1.0) and
knows no other variable than the template's, plus `env` (the promptfoo config's `env:`).
A filter neither engine has is an error naming the file, the line and the filter
(`unknown_filter`), found before anything renders.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from jinja2 import ChainableUndefined, TemplateSyntaxError, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from gate.errors import InputError
from gate.promptfoo.inputs.js import js_display, js_json_loads, js_stringify


def _dump(value: Any, indent: int | None = None) -> str:
    """nunjucks' `dump`: `JSON.stringify(value, null, indent)`."""
    return js_stringify(value, indent)


def _nl2br(value: Any) -> str:
    return re.sub(r"\r\n|\n", "<br />\n", "" if value is None else str(value))


def _load(value: Any) -> Any:
    """promptfoo's `load`: `JSON.parse`."""
    return js_json_loads(str(value))


NUNJUCKS_FILTERS: dict[str, Any] = {"dump": _dump, "nl2br": _nl2br, "load": _load}


def promptfoo_environment(env: Mapping[str, Any] | None = None) -> ImmutableSandboxedEnvironment:
    """An environment rendering as promptfoo's nunjucks does, inside jinja2's sandbox."""
    environment = ImmutableSandboxedEnvironment(
        undefined=ChainableUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        finalize=js_display,
    )
    environment.filters.update(NUNJUCKS_FILTERS)
    environment.globals["env"] = dict(env or {})
    return environment


def unknown_filter(environment: Any, source: str, display: str) -> InputError | None:
    """The first filter (or test) the template uses that the environment does not have."""
    try:
        tree = environment.parse(source)
    except TemplateSyntaxError:
        return None  # compiling reports it, with its own message
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        known = environment.filters if isinstance(node, nodes.Filter) else environment.tests
        if node.name not in known:
            what = "filter" if isinstance(node, nodes.Filter) else "test"
            return InputError(
                f"unknown {what} `{node.name}`: neither jinja2 nor nunjucks has it (the "
                "template's filters run in the gate, not in promptfoo's JavaScript)",
                file=display,
                line=node.lineno,
            )
    return None
