"""Token usage to US dollars, from the `prices` table of gate.yml (USD per million tokens)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from gate.report.output import Usage

# A dated or aliased snapshot of a priced model: "gpt-4o-mini-2024-07-18", "claude-x-20241022".
_SNAPSHOT = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{8}|latest)$")


def find_price(
    prices: Mapping[str, Mapping[str, float]], *models: str | None
) -> Mapping[str, float] | None:
    names = [m for m in models if m]
    for name in names:
        if name in prices:
            return prices[name]
    for name in names:
        base = _SNAPSHOT.sub("", name)
        if base in prices:
            return prices[base]
    return None


def cost_usd(
    prices: Mapping[str, Mapping[str, float]], usage: Usage | None, *models: str | None
) -> float | None:
    """The cost of one call, or None when the model has no price or no usage was reported."""
    price = find_price(prices, *models)
    if price is None or usage is None:
        return None
    total = usage.prompt_tokens * price["input"] + usage.completion_tokens * price["output"]
    return round(total / 1_000_000, 10)
