"""The comment's cost table: calls, tokens, cost and latency of both sides and their change.

Pure: numbers in, escaped `Md` out.
"""

from __future__ import annotations

import functools
from typing import Protocol

from gate.compare.models import Comparison, SideUsage
from gate.render import values
from gate.render.markdown import Md
from gate.render.style import Style


class Shown(Protocol):
    """How a row's numbers read: `show(value)`, or as a change, `show(delta, signed=True)`."""

    def __call__(self, value: float | None, signed: bool = False) -> Md: ...


def _delta(base: float | None, head: float | None, show: Shown) -> Md:
    if base is None or head is None:
        return Md(values.DASH)
    diff = show(head - base, signed=True)
    # A change the shown values round away (0 ms and 0 ms) gets no percentage of its own.
    hidden = head != base and show(head) == show(base)
    relative = f" ({values.pts((head - base) / base * 100, 0)}%)" if base and not hidden else ""
    return Md(f"{diff}{relative}")


def usage_rows(c: Comparison, style: Style) -> list[dict[str, Md]]:
    b: SideUsage = c.base_usage
    h: SideUsage = c.head_usage

    def count(value: float | None, signed: bool = False) -> Md:
        return values.num(value, signed=signed)

    def latency(value: float | None, signed: bool = False) -> Md:
        if value is None or not signed:
            return values.ms(value)
        return Md(
            ("+" if value > 0 else values.MINUS if value < 0 else "±") + values.ms(abs(value))
        )

    money = functools.partial(values.usd, style=style)
    rows: list[tuple[str, float | None, float | None, Shown]] = [
        ("Calls", b.calls, h.calls, count),
        ("Prompt tokens", b.tokens_prompt, h.tokens_prompt, count),
        ("Completion tokens", b.tokens_completion, h.tokens_completion, count),
        ("Total tokens", b.tokens_total, h.tokens_total, count),
        ("Cost", b.cost_usd, h.cost_usd, money),
        ("Latency p50", b.latency_p50_ms, h.latency_p50_ms, latency),
        ("Latency p95", b.latency_p95_ms, h.latency_p95_ms, latency),
    ]
    if b.judge_calls or h.judge_calls:
        rows += [
            ("Judge calls", b.judge_calls, h.judge_calls, count),
            ("Judge tokens", b.judge_tokens, h.judge_tokens, count),
            ("Judge cost", b.judge_cost_usd, h.judge_cost_usd, money),
        ]
    table = [
        {
            "label": Md(label),
            "base": show(base),
            "head": show(head),
            "delta": _delta(base, head, show),
        }
        for label, base, head, show in rows
    ]
    table.insert(1, _cached_row("From the cache", b.cached_calls, h.cached_calls))
    if b.judge_calls or h.judge_calls:
        table.insert(-2, _cached_row("Judge calls from the cache", b.judge_cached, h.judge_cached))
    return table


def _cached_row(label: str, base: int, head: int) -> dict[str, Md]:
    """Of the calls above, how many the response cache answered: no call made, nothing paid."""
    return {
        "label": Md(label),
        "base": values.num(base),
        "head": values.num(head),
        "delta": Md(values.DASH),
    }
