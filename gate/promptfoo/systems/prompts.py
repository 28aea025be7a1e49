"""A promptfoo prompt rendered as promptfoo's `renderPrompt` renders it, in jinja2's sandbox
with nunjucks' filters and way of printing values (`gate.promptfoo.inputs.nunjucks`).

A prompt that is JSON (a chat prompt) has each of its strings rendered with the variables and
is written back as indented JSON; any other prompt is rendered as a template, after each text
variable is itself rendered (so a variable may use `{{ other }}`), unless it names a variable
the test lacks. An unfinished tag is text (promptfoo wraps such a prompt in `{% raw %}`). A
filter neither engine has, or a template that does not compile, is an error naming the prompt
and the line, before the first case.
"""

from __future__ import annotations

import re
from typing import Any

from jinja2 import Template, TemplateError, TemplateSyntaxError
from jinja2.sandbox import SecurityError

from gate.errors import InputError, SystemCallError
from gate.promptfoo.inputs.js import js_json_loads, js_stringify
from gate.promptfoo.inputs.nunjucks import promptfoo_environment, unknown_filter

_PARTIAL = re.compile(r"({%[^%]*$|{{[^}]*$|{#[^#]*$)", re.M)
_RAW = re.compile(r"{%\s*raw\s*%}")
_ENDRAW = re.compile(r"{%\s*endraw\s*%}")
_REFERENCE = re.compile(
    r"\{\{\s*([^{}\s|]+)\s*(?:\|[^}]+)?\}\}|\{%\s*(?:if|for)\s+([^{}\s]+)\s*.*?%\}"
)


def wrap_partial(text: str) -> str:
    """promptfoo's `autoWrapRawIfPartialNunjucks`."""
    if _PARTIAL.search(text) and not (_RAW.search(text) and _ENDRAW.search(text)):
        return "{% raw %}" + text + "{% endraw %}"
    return text


def _references_undefined(template: str, variables: dict[str, Any]) -> bool:
    """promptfoo's `referencesUndefinedVariables`, by its regular expressions."""
    cleaned = re.sub(r"\{#[\s\S]*?#\}", "", template)
    for match in _REFERENCE.finditer(cleaned):
        name = match.group(1) or match.group(2)
        root = re.match(r"^([A-Za-z_]\w*)", name or "")
        if root and root.group(1) != "env" and root.group(1) not in variables:
            return True
    return False


class PromptfooPrompt:
    """One prompt of a promptfoo config; `display` names it in errors (file, or config)."""

    def __init__(self, raw: str, display: str, env: dict[str, Any]) -> None:
        self.raw = raw
        self.display = display
        self.environment = promptfoo_environment(env)
        self._json = _json(raw)
        self._template: Template | None = None
        try:
            self._template = self._compile(wrap_partial(raw))
        except InputError:
            if self._json is None:
                raise  # a JSON prompt is rendered string by string; this is its fallback

    def _compile(self, source: str) -> Template:
        problem = unknown_filter(self.environment, source, self.display)
        if problem is not None:
            raise problem
        try:
            return self.environment.from_string(source)
        except TemplateSyntaxError as exc:
            raise InputError(
                f"template error: {exc.message}", file=self.display, line=exc.lineno
            ) from None

    def _render(self, template: Template | str, variables: dict[str, Any]) -> str:
        try:
            compiled = self._compile(template) if isinstance(template, str) else template
            return compiled.render(variables)
        except SecurityError as exc:
            raise SystemCallError(
                f"prompt {self.display}: blocked by the template sandbox: {exc}"
            ) from None
        except TemplateError as exc:
            raise SystemCallError(f"prompt {self.display}: {exc}") from None
        except InputError as exc:
            raise SystemCallError(
                f"prompt {self.display}: a variable's template: {exc.message}"
            ) from None
        except Exception as exc:
            raise SystemCallError(f"prompt {self.display}: {type(exc).__name__}: {exc}") from None

    def render(self, variables: dict[str, Any]) -> str:
        if self._json is not None:
            try:
                return js_stringify(self._walk(self._json, variables), 2)
            except SystemCallError:
                pass  # promptfoo then renders the prompt as text
        rendered = {
            key: self._render(wrap_partial(value), variables)
            if isinstance(value, str)
            and ("{{" in value or "{%" in value)
            and not _references_undefined(value, variables)
            else value
            for key, value in variables.items()
        }
        if self._template is None:
            raise SystemCallError(f"prompt {self.display}: does not render as JSON or as text")
        return self._render(self._template, rendered)

    def _walk(self, value: Any, variables: dict[str, Any]) -> Any:
        """promptfoo's `renderVarsInObject`."""
        if isinstance(value, str):
            return self._render(value, variables) if "{" in value else value
        if isinstance(value, list):
            return [self._walk(v, variables) for v in value]
        if isinstance(value, dict):
            return {k: self._walk(v, variables) for k, v in value.items()}
        return value


def _json(raw: str) -> Any:
    try:
        return js_json_loads(raw)
    except ValueError:
        return None
