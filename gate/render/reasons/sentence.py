"""One sentence per finding: the dispatcher every module of words registers with, and the
number formats they share (`gate.render.reasons` gathers the sentences into reasons and notes).
"""

from __future__ import annotations

from functools import singledispatch


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
