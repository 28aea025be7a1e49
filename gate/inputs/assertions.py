"""promptfoo's assertion strings (`contains: Paris`, `not-icontains: sorry`, `is-json`,
`python: checks.py`) as the gate's `expect` keys. Pure; used for CSV case files.

The syntax is promptfoo's: `[not-]TYPE[(THRESHOLD)][:VALUE]`, where TYPE is one of promptfoo's
assertion types; a string that does not start with one is an `equals` check, as in promptfoo.
Values are stripped of surrounding blanks; `contains-any`, `contains-all` and their `i`
variants split their value at commas. A type the gate has no equivalent for is an error that
says so (`ValueError`), never a check that silently passes.
"""

from __future__ import annotations

import json
import re
from typing import Any

# promptfoo's assertion types (its BaseAssertionTypesSchema), so that `similar: x` is known to
# be an unsupported check rather than the expected answer "similar: x".
PROMPTFOO_TYPES = [
    "answer-relevance",
    "bleu",
    "classifier",
    "contains",
    "contains-all",
    "contains-any",
    "contains-html",
    "contains-json",
    "contains-sql",
    "contains-xml",
    "context-faithfulness",
    "context-recall",
    "context-relevance",
    "conversation-relevance",
    "cost",
    "equals",
    "factuality",
    "finish-reason",
    "g-eval",
    "gleu",
    "guardrails",
    "icontains",
    "icontains-all",
    "icontains-any",
    "is-html",
    "is-json",
    "is-refusal",
    "is-sql",
    "is-valid-function-call",
    "is-valid-openai-function-call",
    "is-valid-openai-tools-call",
    "is-xml",
    "javascript",
    "latency",
    "levenshtein",
    "llm-rubric",
    "pi",
    "meteor",
    "model-graded-closedqa",
    "model-graded-factuality",
    "moderation",
    "perplexity",
    "perplexity-score",
    "python",
    "regex",
    "rouge-n",
    "ruby",
    "similar",
    "starts-with",
    "tool-call-f1",
    "trace-error-spans",
    "trace-span-count",
    "trace-span-duration",
    "search-rubric",
    "webhook",
    "word-count",
    "select-best",
    "human",
    "max-score",
]
_TYPES = "|".join(re.escape(t) for t in sorted(PROMPTFOO_TYPES, key=len, reverse=True))
_ASSERTION = re.compile(rf"^(not-)?({_TYPES})(?:\((\d+(?:\.\d+)?)\))?(?::(.*))?$", re.DOTALL)
_PY_FILE = re.compile(r"^(?:file://)?(?P<path>[\w./-]+)\.py(?::(?P<fn>[A-Za-z_]\w*))?$")
_TARGET = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
PROMPTFOO_FUNCTION = "get_assert"
RUBRIC_HINT = "use `rubric` ({dimension: minimum}, judged 0-2) in a JSONL or YAML case"
JS_HINT = "JavaScript checks do not run here: write the check in Python (`python: checks.py`)"


def _items(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _literal(text: str) -> str:
    return re.escape(text)


def python_target(value: str) -> str:
    """promptfoo's `file.py` / `file://path/file.py:fn` or the gate's `module:function`."""
    value = value.strip()
    if _TARGET.match(value):
        return value
    found = _PY_FILE.match(value)
    if found is None:
        raise ValueError(
            f"{value[:60]!r} is not a check in a file: inline Python does not run here; put it "
            "in a module and write `python: module.py` (function get_assert) or `module:function`"
        )
    module = found["path"].removeprefix("./").replace("/", ".")
    if not re.match(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$", module):
        raise ValueError(f"{found['path']!r} is not an importable module path")
    return f"{module}:{found['fn'] or PROMPTFOO_FUNCTION}"


def _json_check(kind: str, value: str) -> dict[str, Any]:
    key = {"is-json": "json_exact", "contains-json": "json"}[kind]
    if not value:
        return {key: True}
    try:
        schema = json.loads(value)
    except ValueError:
        raise ValueError(f"`{kind}`: its value must be a JSON Schema (as JSON)") from None
    return {"json": schema, "json_exact": True} if key == "json_exact" else {"json": schema}


def _positive(kind: str, value: str) -> dict[str, Any]:
    simple = {
        "equals": "equals",
        "starts-with": "starts_with",
        "contains": "contains",
        "icontains": "must_include",
        "regex": "regex",
    }
    if kind in simple:
        key = simple[kind]
        return {key: value if key in ("equals", "starts_with") else [value]}
    if kind in ("contains-any", "contains-all"):
        return {kind.replace("-", "_"): _items(value)}
    if kind == "icontains-all":
        return {"must_include": _items(value)}
    if kind == "icontains-any":
        return {"regex": ["(?i)(?:" + "|".join(map(_literal, _items(value))) + ")"]}
    if kind in ("is-json", "contains-json"):
        return _json_check(kind, value)
    if kind == "python":
        return {"python": [python_target(value)]}
    raise LookupError(kind)


def _negative(kind: str, value: str) -> dict[str, Any]:
    if kind == "icontains":
        return {"must_not_include": [value]}
    if kind == "icontains-any":
        return {"must_not_include": _items(value)}
    if kind == "contains":
        return {"not_regex": [_literal(value)]}
    if kind == "contains-any":
        return {"not_regex": [_literal(item) for item in _items(value)]}
    if kind == "regex":
        return {"not_regex": [value]}
    if kind == "starts-with":
        return {"not_regex": [r"\A\s*" + _literal(value)]}
    if kind == "equals":
        return {"not_regex": [r"\A\s*" + _literal(value) + r"\s*\Z"]}
    raise LookupError(kind)


def _unsupported(kind: str, negated: bool) -> str:
    if kind == "javascript":
        return JS_HINT
    if kind in ("llm-rubric", "g-eval", "model-graded-closedqa", "factuality"):
        return f"promptfoo's `{kind}` is a model-graded check: {RUBRIC_HINT}"
    name = f"not-{kind}" if negated else kind
    return f"promptfoo's `{name}` has no equivalent here (see docs/cases.md for the checks)"


def expectation(text: str) -> tuple[dict[str, Any], float | None]:
    """The `expect` keys of one assertion string, and its threshold when it names one
    (`python(0.8): checks.py`). ValueError says why it cannot be a check here."""
    for prefix in ("javascript:", "fn:", "eval:"):
        if text.startswith(prefix):
            raise ValueError(JS_HINT)
    if text.startswith(("grade:", "llm-rubric:")):
        raise ValueError(f"a model-graded check: {RUBRIC_HINT}")
    if text.startswith("file://"):
        return {"python": [python_target(text)]}, None
    match = _ASSERTION.match(text)
    if match is None:
        return {"equals": text}, None
    negated, kind, threshold, value = match.groups()
    value = (value or "").strip()
    try:
        keys = _negative(kind, value) if negated else _positive(kind, value)
    except LookupError:
        raise ValueError(_unsupported(kind, bool(negated))) from None
    needs_value = kind not in ("is-json", "contains-json")
    if needs_value and not value:
        raise ValueError(f"`{match.group(0).split(':')[0]}` needs a value after the colon")
    return keys, float(threshold) if threshold else None
