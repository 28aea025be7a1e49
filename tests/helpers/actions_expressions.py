"""GitHub Actions expressions (`${{ ... }}`), the part workflows here use, evaluated the way
the runner does: contexts (`github.event.pull_request.base.sha`, `steps.cache.outputs.x`,
names with hyphens), string, number, boolean and null literals, `!`, `==`, `!=`, `&&`, `||`
(which yield an operand, not a boolean), parentheses, and the functions `success()`,
`failure()`, `cancelled()`, `always()`, `format()`, `contains()` and `startsWith()`.

Comparison follows GitHub's rules: strings compare ignoring case, other mixed types are
compared as numbers. Anything else (an unknown context or function, a syntax this parser does
not know) raises, so a workflow that uses more than the simulation understands fails the test
instead of being evaluated wrongly.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)"
    r"|(?P<op>==|!=|&&|\|\||<=|>=|[!()\[\].,<>])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)
INTERPOLATION = re.compile(r"\$\{\{(.*?)\}\}", re.S)
STATUS_FUNCTIONS = ("success", "failure", "cancelled", "always")


@dataclass
class Status:
    """What the status functions see: whether an earlier step of the job failed."""

    failed: bool = False


def _tokens(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        match = TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"expression not understood at {text[pos:]!r} in {text!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return math.nan
    return math.nan


def equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if left is None and right is None:
        return True
    if type(left) is type(right) and not isinstance(left, (int, float, bool)):
        return bool(left == right)
    return _number(left) == _number(right)


def truthy(value: Any) -> bool:
    return value not in (None, False, 0, "") and not (
        isinstance(value, float) and math.isnan(value)
    )


def as_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Parser:
    def __init__(self, text: str, contexts: Mapping[str, Any], status: Status) -> None:
        self.tokens = _tokens(text)
        self.pos = 0
        self.contexts = contexts
        self.functions: dict[str, Callable[..., Any]] = {
            "success": lambda: not status.failed,
            "failure": lambda: status.failed,
            "cancelled": lambda: False,
            "always": lambda: True,
            "format": _format,
            "contains": lambda hay, needle: _contains(hay, needle),
            "startsWith": lambda s, p: as_string(s).casefold().startswith(as_string(p).casefold()),
        }

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise ValueError(f"expected {value!r} at token {self.pos} of {self.tokens}")
        self.pos += 1
        return token

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()} in {self.tokens}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_()
            value = value if truthy(value) else right
        return value

    def and_(self) -> Any:
        value = self.comparison()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Any:
        value = self.unary()
        while self.peek() in (("op", "=="), ("op", "!=")):
            _, op = self.take()
            right = self.unary()
            value = equal(value, right) if op == "==" else not equal(value, right)
        return value

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, value = self.take()
        if kind == "string":
            return value[1:-1].replace("''", "'")
        if kind == "number":
            return float(value)
        if (kind, value) == ("op", "("):
            inner = self.or_()
            self.take(")")
            return inner
        if kind != "name":
            raise ValueError(f"unexpected {value!r} in {self.tokens}")
        if value in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[value]
        if self.peek() == ("op", "("):
            return self.call(value)
        if value not in self.contexts:
            raise ValueError(f"unknown context {value!r}")
        return self.properties(self.contexts[value])

    def call(self, name: str) -> Any:
        if name not in self.functions:
            raise ValueError(f"function {name}() is not simulated")
        self.take("(")
        args = []
        while self.peek() != ("op", ")"):
            args.append(self.or_())
            if self.peek() == ("op", ","):
                self.take()
        self.take(")")
        return self.functions[name](*args)

    def properties(self, value: Any) -> Any:
        while self.peek() in (("op", "."), ("op", "[")):
            _, op = self.take()
            key = self.take()[1] if op == "." else as_string(self.or_())
            if op == "[":
                self.take("]")
            value = value.get(key) if isinstance(value, Mapping) else None
        return value


def _format(template: str, *args: Any) -> str:
    return re.sub(r"\{(\d+)\}", lambda m: as_string(args[int(m.group(1))]), template)


def _contains(hay: Any, needle: Any) -> bool:
    if isinstance(hay, list):
        return any(equal(item, needle) for item in hay)
    return as_string(needle).casefold() in as_string(hay).casefold()


def evaluate(text: str, contexts: Mapping[str, Any], status: Status | None = None) -> Any:
    """The value of one expression (the text inside `${{ }}`)."""
    return _Parser(text, contexts, status or Status()).parse()


def interpolate(text: str, contexts: Mapping[str, Any], status: Status | None = None) -> str:
    """A `with:` or `env:` value: every `${{ ... }}` replaced by its value as a string."""
    return INTERPOLATION.sub(lambda m: as_string(evaluate(m.group(1), contexts, status)), text)


def condition(text: str | bool | None, contexts: Mapping[str, Any], status: Status) -> bool:
    """An `if:`: `${{ }}` optional; without a status function it means `success() && (...)`."""
    if text is None:
        return not status.failed
    if isinstance(text, bool):
        return text and not status.failed
    inner = text.strip()
    whole = INTERPOLATION.fullmatch(inner)
    expression = whole.group(1) if whole else inner
    if not any(re.search(rf"\b{name}\s*\(", expression) for name in STATUS_FUNCTIONS):
        expression = f"success() && ({expression})"
    return truthy(evaluate(expression, contexts, status))
