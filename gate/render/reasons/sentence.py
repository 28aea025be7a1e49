"""One sentence per finding: the dispatcher every module of words registers with, and the
number, id and value formats they share (`gate.render.reasons` gathers the sentences into
reasons and notes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import singledispatch

from pydantic import JsonValue

from gate.compare.findings import PolicyChange
from gate.compare.instrument_findings import KeyChange

SHOWN_IDS = 5


@singledispatch
def sentence(finding: object) -> str:
    raise TypeError(f"no words for {type(finding).__name__}")


def fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}".replace("-", "\N{MINUS SIGN}")


def p_text(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def share(level: float) -> str:
    """A level as a percentage: 0.005 -> "0.5%"."""
    return f"{100 * level:.3g}%"


def listed(items: Sequence[str]) -> str:
    """The first items, and how many more there are."""
    more = f" and {len(items) - SHOWN_IDS} more" if len(items) > SHOWN_IDS else ""
    return ", ".join(items[:SHOWN_IDS]) + more


def quoted(names: Iterable[str]) -> str:
    """Names as code: `a`, `b`."""
    return ", ".join(f"`{name}`" for name in names)


def policy_value(value: JsonValue) -> str:
    if isinstance(value, dict):  # e.g. budgets: only the keys that are set
        return "{" + ", ".join(f"{k}: {policy_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(map(policy_value, value)) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)


def key_changes(changes: Sequence[KeyChange | PolicyChange]) -> str:
    """`key: base → head; …`"""
    return "; ".join(f"{c.key}: {policy_value(c.base)} → {policy_value(c.head)}" for c in changes)
