"""Turn parse and validation failures into `InputError`s that name file, line and key.

YAML documents are composed into nodes first so that every key path can be mapped back to the
line it came from; pydantic's error locations are then translated into those paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from gate.errors import InputError

Loc = tuple[str | int, ...]


@dataclass
class Locator:
    """Maps a key path inside a parsed document to a 1-based line number."""

    root: yaml.Node | None
    base_line: int = 1

    def line(self, loc: Loc) -> int | None:
        node = self.root
        best = node.start_mark.line + 1 if node is not None else None
        for part in loc:
            node = _child(node, part)
            if node is None:
                break
            best = node.start_mark.line + 1
        if best is None:
            return None
        return best + self.base_line - 1


def _child(node: yaml.Node | None, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == part:
                return value
        return None
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int):
        return node.value[part] if 0 <= part < len(node.value) else None
    return None


def key_line(locator: Locator, loc: Loc) -> int | None:
    """The line of the *key* for a mapping entry (better than the value for extra keys)."""
    if not loc:
        return locator.line(loc)
    parent = locator.root
    for part in loc[:-1]:
        parent = _child(parent, part)
    if isinstance(parent, yaml.MappingNode):
        for key, _value in parent.value:
            if key.value == loc[-1]:
                return key.start_mark.line + locator.base_line
    return locator.line(loc)


def load_yaml(text: str, file: str | Path) -> tuple[Any, Locator]:
    """Parse YAML text, returning the data and a locator for its key paths."""
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        raise InputError(f"malformed YAML: {exc.problem or exc}", file=file, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"malformed YAML: {exc}", file=file) from None
    return data, Locator(node)


def format_loc(loc: Iterable[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def known_fields(*models: type[BaseModel]) -> set[str]:
    """Every field name (and alias) reachable from these models, for "did you mean" hints."""
    seen: set[type[BaseModel]] = set()
    names: set[str] = set()

    def visit(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, field in model.model_fields.items():
            names.add(field.alias or name)
            for sub in _models_in(field.annotation):
                visit(sub)

    for model in models:
        visit(model)
    return names


def _models_in(annotation: Any) -> Iterable[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        yield annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        yield from _models_in(arg)


def suggest(word: str, vocabulary: Iterable[str]) -> str:
    import difflib  # for a typo's message only

    match = difflib.get_close_matches(word, list(vocabulary), n=1, cutoff=0.6)
    return f" (did you mean `{match[0]}`?)" if match else ""


def _strip_union_tags(loc: Loc, data: Any) -> Loc:
    """Drop pydantic's union tags (e.g. 'openai', 'list[str]') from an error location."""
    clean: list[str | int] = []
    node = data
    for part in loc:
        present = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if present:
            clean.append(part)
            node = node[part]  # type: ignore[index]
        elif isinstance(node, dict | list) and isinstance(part, str) and _looks_like_tag(part):
            continue
        else:
            clean.append(part)
            node = None
    return tuple(clean)


def _looks_like_tag(part: str) -> bool:
    return any(ch in part for ch in "[]()'\",") or part in {
        "str",
        "int",
        "float",
        "bool",
        "dict",
        "list",
        "openai",
        "anthropic",
        "http",
        "command",
        "python",
        "replay",
    }


def validation_error(
    err: ValidationError,
    *,
    file: str | Path,
    data: Any,
    locator: Locator | None = None,
    line: int | None = None,
    prefix: Loc = (),
    vocabulary: Iterable[str] = (),
) -> InputError:
    """Convert the most telling pydantic error into an `InputError` with file, line and key.

    A misspelt key yields both "unknown key" and "required key missing": the typo is the one
    worth reporting, with its suggestion."""
    errors = err.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = _strip_union_tags(tuple(first["loc"]), data)
    kind = first["type"]
    message = first["msg"]
    if kind == "extra_forbidden":
        message = f"unknown key{suggest(str(loc[-1]), vocabulary)}"
    elif kind == "missing":
        message = "required key is missing"
    elif "input" in first and kind not in ("value_error", "assertion_error"):
        message = f"{message} (got {_short(first['input'])})"
    elif kind == "value_error":
        message = message.removeprefix("Value error, ")
    if locator is not None:
        line = key_line(locator, loc) if kind == "extra_forbidden" else locator.line(loc)
    return InputError(message, file=file, line=line, key=format_loc(prefix + loc) or None)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
