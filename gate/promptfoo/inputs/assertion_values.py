"""A promptfoo assertion mapping as the gate's `Assertion`: its value rendered with the test's
variables and checked the way promptfoo's handler would check it, but when the suite is read
(a value promptfoo would reject at run time is an error naming the test, exit 2).

`file://` values are read (JSON and YAML as data, text trimmed); a python assertion's
`file://checks.py[:function]` becomes `module:function` of the checkout (the function defaults
to `get_assert`), its inline code a module of its own; `llm-rubric` takes its grader from the
assertion's `provider` or the test's `options.provider`, its prompt from `rubricPrompt`.
"""

from __future__ import annotations

import math
import re
from typing import Any

from jinja2 import TemplateError

from gate.errors import InputError
from gate.promptfoo.inputs.assertions import (
    ASSERTION_KEYS,
    LIST_TYPES,
    SUPPORTED,
    Assertion,
    AssertionContext,
    inline_module,
    module_target,
    split_values,
    unsupported,
)
from gate.promptfoo.inputs.files import FILE, parse_file, resolve
from gate.promptfoo.inputs.js import js_regex, js_stringify
from gate.promptfoo.inputs.nunjucks import promptfoo_environment, unknown_filter
from gate.promptfoo.inputs.providers import ProviderSpec, parse_provider
from gate.promptfoo.inputs.trajectory_values import READERS as TRAJECTORY_READERS
from gate.promptfoo.inputs.trajectory_values import TrajectoryValueError
from gate.promptfoo.inputs.yaml12 import load_yaml12

TEMPLATE_MARKS = ("{{", "{%", "{#")


def render(text: str, ctx: AssertionContext) -> str:
    """nunjucks' `renderString(text, vars)`."""
    if not any(mark in text for mark in TEMPLATE_MARKS):
        return text
    environment = promptfoo_environment(ctx.env)
    problem = unknown_filter(environment, text, ctx.where)
    if problem is not None:
        raise ctx.error(problem.message)
    try:
        return environment.from_string(text).render(dict(ctx.vars))
    except TemplateError as exc:
        raise ctx.error(f"the template {text[:60]!r} does not render: {exc}") from None


def _file_value(value: str, ctx: AssertionContext) -> Any:
    if ctx.read is None:
        raise ctx.error(f"{value!r}: a file:// value is not read here")
    path = resolve(ctx.base, value, ctx.where)
    if path.endswith((".py", ".js", ".cjs", ".mjs", ".ts")):
        raise ctx.error(f"{value!r}: a script computing the expected value does not run here")
    parsed = parse_file(ctx.read(path), path)
    return parsed.strip() if isinstance(parsed, str) else parsed


def rendered_value(value: Any, ctx: AssertionContext) -> Any:
    """promptfoo's `renderedValue`: strings rendered (a `file://` read), list items too."""
    if isinstance(value, str):
        return _file_value(value, ctx) if value.startswith(FILE) else render(value, ctx)
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, str) and item.startswith(FILE):
                out.append(_file_value(item, ctx))
            else:
                out.append(render(item, ctx) if isinstance(item, str) else item)
        return out
    return value


def _number(raw: dict[str, Any], key: str, ctx: AssertionContext) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ctx.error(f"`{key}` of a {raw.get('type')} assertion must be a number, got {value!r}")
    return float(value)


def _schema(kind: str, value: Any, ctx: AssertionContext) -> Any:
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = load_yaml12(value, ctx.where)[0]
    if not isinstance(value, dict):
        raise ctx.error(f"`{kind}`'s value must be a JSON Schema (a mapping)")
    import jsonschema

    try:
        jsonschema.validators.validator_for(value, default=jsonschema.Draft7Validator).check_schema(
            value
        )
    except jsonschema.SchemaError as exc:
        raise ctx.error(f"`{kind}`: invalid JSON Schema: {exc.message}") from None
    return value


def _checked_value(kind: str, value: Any, raw: dict[str, Any], ctx: AssertionContext) -> Any:
    """The value as the type's handler needs it; what it would refuse is an error now."""
    if kind in ("contains", "icontains"):
        ok = (isinstance(value, str) and value != "") or (
            isinstance(value, int | float) and not isinstance(value, bool) and not math.isnan(value)
        )
        if not ok:
            raise ctx.error(f"`{kind}` needs a string or number value")
    elif kind in LIST_TYPES:
        if not value:
            raise ctx.error(f"`{kind}` needs a value")
        if isinstance(value, str):
            try:
                value = split_values(value)
            except ValueError as exc:
                raise ctx.error(f"`{kind}`: {exc}") from None
        if not isinstance(value, list):
            raise ctx.error(f"`{kind}` needs a list or a comma-separated string")
    elif kind in ("starts-with", "regex"):
        if not isinstance(value, str) or not value:
            raise ctx.error(f"`{kind}` needs a string value")
        if kind == "regex":
            try:
                js_regex(value)
            except re.error as exc:
                raise ctx.error(f"`regex` {value!r} does not compile: {exc}") from None
    elif kind in ("is-json", "contains-json"):
        value = _schema(kind, value, ctx)
    elif kind in ("cost", "latency") and raw.get("threshold") is None:
        raise ctx.error(f"a `{kind}` assertion needs a `threshold`")
    elif kind in TRAJECTORY_READERS:
        try:
            value = TRAJECTORY_READERS[kind](value)
        except TrajectoryValueError as exc:
            raise ctx.error(f"`{kind}`: {exc}") from None
    elif kind == "llm-rubric" and isinstance(value, dict | list):
        value = js_stringify(value)
    elif kind == "llm-rubric" and value is not None and not isinstance(value, str):
        raise ctx.error("`llm-rubric` needs a string or object value")
    return value


_PY_FILE = re.compile(r"^[\w./-]+\.py(?::[A-Za-z_]\w*)?$")
_TARGET = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


def _python(value: Any, ctx: AssertionContext) -> tuple[str, str | None]:
    """A file (`file://checks.py:fn`; a bare `checks.py` too, which as code could never run),
    the gate's `module:function`, or inline code."""
    if not isinstance(value, str) or not value.strip():
        raise ctx.error("a `python` assertion needs a file or code as its value")
    value = (
        value.strip() if _PY_FILE.match(value.strip()) or _TARGET.match(value.strip()) else value
    )
    if _TARGET.match(value):
        return value, None
    if value.startswith(FILE) or _PY_FILE.match(value):
        ref, _, function = value.removeprefix(FILE).partition(":")
        if not ref.endswith(".py"):
            raise ctx.error(f"{value!r} is not a Python file")
        path = resolve(ctx.base, ref, ctx.where)
        try:
            return module_target(path, function or None), None
        except ValueError as exc:
            raise ctx.error(str(exc)) from None
    return inline_module(render(value, ctx))


def transform_target(value: Any, key: str, ctx: AssertionContext) -> str:
    """A transform of the output (an assertion's `transform`, a test's `options.transform`):
    a Python file's function (`file://transforms.py:fn`, `get_transform` by default), run in
    the sandbox as promptfoo runs it. Inline code is JavaScript to promptfoo: an error."""
    text = value.strip() if isinstance(value, str) else ""
    ref, _, function = text.removeprefix(FILE).partition(":")
    if text.startswith(FILE) and ref.endswith(".py"):
        try:
            return module_target(resolve(ctx.base, ref, ctx.where), function or "get_transform")
        except ValueError as exc:
            raise ctx.error(f"`{key}`: {exc}") from None
    shown = " ".join(text.split())[:60] or repr(value)
    raise ctx.error(
        f"`{key}` {shown!r} is JavaScript, which does not run here: write it as a Python "
        f"function `get_transform(output, context)` and name its file (`{key}: "
        "file://transforms.py`)"
    )


def _grader(raw: dict[str, Any], ctx: AssertionContext) -> ProviderSpec | None:
    spec = raw.get("provider") or ctx.options.get("provider")
    if isinstance(spec, dict) and "id" not in spec and isinstance(spec.get("text"), str | dict):
        spec = spec["text"]
    if spec is None:
        return None
    try:
        return parse_provider(spec, ctx.where)
    except InputError as exc:
        raise ctx.error(f"llm-rubric's grader: {exc.message}") from None


def _rubric_prompt(raw: dict[str, Any], ctx: AssertionContext) -> str | None:
    prompt = raw.get("rubricPrompt") or ctx.options.get("rubricPrompt")
    if isinstance(prompt, str) and prompt.startswith(FILE):
        prompt = _file_value(prompt, ctx)
    if prompt is None or prompt == {} or prompt == []:
        return None
    return prompt if isinstance(prompt, str) else js_stringify(prompt)


def parse_assertion(raw: Any, ctx: AssertionContext, *, in_set: bool = False) -> Assertion:
    if not isinstance(raw, dict) or not isinstance(raw.get("type"), str):
        raise ctx.error(f"an assertion must be a mapping with a string `type`, got {raw!r}")
    unknown = sorted(set(raw) - ASSERTION_KEYS)
    if unknown:
        raise ctx.error(f"assertion `{raw['type']}`: unknown key `{unknown[0]}`")
    if "contextTransform" in raw:
        raise ctx.error(
            f"assertion `{raw['type']}`: `contextTransform` is not supported (the context "
            "types that read it do not run here)"
        )
    full = raw["type"]
    if full == "assert-set" and not in_set:
        return _assert_set(raw, ctx)
    negated = full.startswith("not-")
    kind = full.removeprefix("not-")
    if kind not in SUPPORTED:
        raise unsupported(full, ctx)
    weight = _number(raw, "weight", ctx)
    metric = raw.get("metric")
    fields: dict[str, Any] = {
        "type": kind,
        "negated": negated,
        "threshold": _number(raw, "threshold", ctx),
        "weight": 1.0 if weight is None else weight,
        "metric": render(metric, ctx) if isinstance(metric, str) else None,
        "config": raw.get("config") if isinstance(raw.get("config"), dict) else None,
    }
    if raw.get("transform") is not None:
        fields["transform"] = transform_target(raw["transform"], "transform", ctx)
    if kind == "python":
        fields["python_target"], fields["python_source"] = _python(raw.get("value"), ctx)
        fields["value"] = raw.get("value")
    else:
        value = rendered_value(raw.get("value"), ctx)
        fields["value"] = _checked_value(kind, value, raw, ctx)
    if kind == "llm-rubric":
        fields["grader"] = _grader(raw, ctx)
        fields["rubric_prompt"] = _rubric_prompt(raw, ctx)
    return Assertion(**fields)


def _assert_set(raw: dict[str, Any], ctx: AssertionContext) -> Assertion:
    children = raw.get("assert")
    if not isinstance(children, list) or not children:
        raise ctx.error("an `assert-set` needs a list of assertions in `assert`")
    weight = _number(raw, "weight", ctx)
    metric = raw.get("metric")
    return Assertion(
        type="assert-set",
        threshold=_number(raw, "threshold", ctx),
        weight=1.0 if weight is None else weight,
        metric=render(metric, ctx) if isinstance(metric, str) else None,
        children=tuple(parse_assertion(child, ctx, in_set=True) for child in children),
    )


def parse_assertions(raw: Any, ctx: AssertionContext) -> tuple[Assertion, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ctx.error(f"`assert` must be a list, got {type(raw).__name__}")
    return tuple(parse_assertion(item, ctx) for item in raw)
