"""YAML as promptfoo reads it (js-yaml 5 with YAML 1.2's core schema and v4's extra tags), not
as PyYAML's YAML 1.1 does. Pure.

- Booleans are `true`/`True`/`TRUE`/`false`/`False`/`FALSE` only: `Yes`, `no`, `on`, `off`,
  `y` and `n` stay strings (`body: Yes` is the string "Yes").
- Null is `~`, `null`, `Null`, `NULL` or nothing.
- Integers are decimal (`0123` is 123, not octal), `0o17` or `0x1F`; `1_000` and `1:20` are
  strings. Floats need digits (`1e3` is a number, `.5` too), `.inf` and `.nan` count.
- Numbers are JavaScript's (`gate.promptfoo.inputs.js.js_value`): `1.0` is the integer 1.
- A date or timestamp (`2024-01-05`) becomes an empty object: what promptfoo hands a prompt
  after copying its variables (it prints `[object Object]`).
- A repeated key is an error (js-yaml's), merge keys (`<<:`) work, and a file holds one
  document.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

import yaml

from gate.errors import InputError
from gate.inputs.sourcemap import Locator
from gate.promptfoo.inputs.js import js_value

BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
FLOAT = re.compile(
    r"^(?:[-+]?[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|[-+]?\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
TIMESTAMP = re.compile(
    r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}"
    r"|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
    r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)$"
)
MERGE = re.compile(r"^(?:<<)$")
TAG = "tag:yaml.org,2002:"


class CoreLoader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2's core schema (as js-yaml resolves plain scalars)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}
    allow_duplicates = False

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            if not self.allow_duplicates:
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=True)
                    if isinstance(key, list | dict):
                        continue
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicated mapping key {key!r}", key_node.start_mark
                        )
                    seen.add(key)
        return super().construct_mapping(node, deep=deep)


class JsonModeLoader(CoreLoader):
    """js-yaml's `json: true`: a repeated key takes the last value (used to read JSON in
    answers, as promptfoo's `contains-json` does)."""

    yaml_implicit_resolvers: ClassVar[dict[Any, Any]] = {}
    allow_duplicates = True


def _int(loader: CoreLoader, node: Any) -> Any:
    text = loader.construct_scalar(node)
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if digits.startswith("0o"):
        return js_value(sign * int(digits[2:], 8))
    if digits.startswith("0x"):
        return js_value(sign * int(digits[2:], 16))
    return js_value(sign * int(digits, 10))


def _float(loader: CoreLoader, node: Any) -> Any:
    text = loader.construct_scalar(node).lower()
    if text.endswith(".inf"):
        return float("-inf") if text.startswith("-") else float("inf")
    if text.endswith(".nan"):
        return float("nan")
    return js_value(float(text))


def _timestamp(loader: CoreLoader, node: Any) -> dict[str, Any]:
    loader.construct_scalar(node)
    return {}


def _bool(loader: CoreLoader, node: Any) -> bool:
    return str(loader.construct_scalar(node)).lower() == "true"


for _loader in (CoreLoader, JsonModeLoader):
    for _tag, _pattern, _first in (
        ("bool", BOOL, list("tTfF")),
        ("null", NULL, ["~", "n", "N", ""]),
        ("int", INT, list("-+0123456789")),
        ("float", FLOAT, list("-+0123456789.")),
        ("timestamp", TIMESTAMP, list("0123456789")),
        ("merge", MERGE, ["<"]),
    ):
        _loader.add_implicit_resolver(TAG + _tag, _pattern, _first)
    _loader.add_constructor(TAG + "int", _int)
    _loader.add_constructor(TAG + "float", _float)
    _loader.add_constructor(TAG + "bool", _bool)
    _loader.add_constructor(TAG + "timestamp", _timestamp)


def load_yaml12(text: str, file: str | Path) -> tuple[Any, Locator]:
    """The document and a locator for its key paths; errors name the file and the line."""
    loader = None
    try:
        loader = CoreLoader(text)
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or str(exc)
        if "expected a single document" in str(exc):
            problem = "expected a single document in the file, found more"
        raise InputError(f"malformed YAML: {problem}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", file=file) from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, Locator(node)


def loads_json_mode(text: str) -> Any:
    """A candidate JSON object as promptfoo parses it (YAML in json mode); raises ValueError."""
    loader = None
    try:
        loader = JsonModeLoader(text)
        node = loader.get_single_node()
        return loader.construct_document(node) if node is not None else None
    except (yaml.YAMLError, RecursionError) as exc:
        raise ValueError(str(exc)) from None
    finally:
        if loader is not None:
            loader.dispose()
