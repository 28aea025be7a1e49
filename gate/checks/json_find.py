"""Find the JSON in an answer: the whole answer, a ```json fence in it, or the first object or
array embedded in prose ("Here is the JSON: {...} Hope it helps"). Pure.

Model output is hostile input: the search in prose reads the first `PROSE_CHARS` characters
and tries at most `MAX_STARTS` places where an object or array could begin (so it stays under
a second on any answer), and nesting too deep for the parser counts as "does not parse".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

MAX_STARTS = 1000
PROSE_CHARS = 100_000
JSON_LANGUAGES = frozenset({"json", "jsonc", "json5", "javascript", "js", ""})
_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w+#.-]*)[^\n]*\n(?P<body>.*?)^[ \t]*```", re.S | re.M)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Found:
    value: Any
    where: str  # "the whole answer", "a ```json fence", "the prose at character N"


def parse_whole(text: str) -> Any:
    """The whole answer as JSON (surrounding whitespace allowed); raises ValueError."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, parse_whole(text)
    except ValueError:
        return False, None


def _fenced(text: str) -> Found | None:
    for match in _FENCE.finditer(text):
        if match["lang"].lower() in JSON_LANGUAGES:
            ok, value = _loads(match["body"])
            if ok:
                return Found(value, f"a ```{match['lang'].lower() or ''} fence")
    return None


def _embedded(text: str) -> Found | None:
    text = text[:PROSE_CHARS]
    starts = 0
    for match in re.finditer(r"[\[{]", text):
        starts += 1
        if starts > MAX_STARTS:
            return None
        try:
            value, _ = _DECODER.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            continue
        return Found(value, f"the prose at character {match.start()}")
    return None


def find_json(text: str) -> Found | None:
    """The answer's JSON value, searched in that order; None when there is none."""
    ok, value = _loads(text)
    if ok:
        return Found(value, "the whole answer")
    return _fenced(text) or _embedded(text)
