"""Cost budgets: a PR that buys a little accuracy with a lot of spend can still be a loss.

Pure. Each budget is the largest allowed increase, in percent of the base, of the cases both
sides ran (every call counted, as in the usage table); a breach is a failing `Finding`.
"""

from __future__ import annotations

from gate.compare.findings import (
    BudgetExceeded,
    BudgetFromZero,
    BudgetMetric,
    BudgetUnmeasured,
    Finding,
)
from gate.compare.models import SideUsage
from gate.inputs.policy import Budgets

NOTABLE_COST_CHANGE_PCT = 10.0  # the headline shows a cost change beyond this without a budget


def increase_pct(base: float | None, head: float | None) -> float | None:
    """head over base in percent (+25.0 for 1.25x); None when either is unknown or base is 0."""
    if base is None or head is None or base <= 0:
        return None
    return 100.0 * (head - base) / base


def _tokens(side: SideUsage) -> float | None:
    """A side's total tokens; None when it reported none (a system that returns no usage), which
    is not a rise "from 0" when the other side's does."""
    return float(side.tokens_total) if side.tokens_total else None


def _metrics(
    base: SideUsage, head: SideUsage
) -> dict[BudgetMetric, tuple[float | None, float | None]]:
    return {
        "cost": (base.cost_usd, head.cost_usd),
        "tokens": (_tokens(base), _tokens(head)),
        "latency_p95": (base.latency_p95_ms, head.latency_p95_ms),
    }


def budget_findings(base: SideUsage, head: SideUsage, budgets: Budgets) -> list[Finding]:
    """A failing finding per exceeded budget; a note for a budget that cannot be measured."""
    found: list[Finding] = []
    values = _metrics(base, head)
    limits: tuple[tuple[BudgetMetric, float | None], ...] = (
        ("cost", budgets.cost_pct),
        ("tokens", budgets.tokens_pct),
        ("latency_p95", budgets.latency_p95_pct),
    )
    for metric, limit in limits:
        if limit is None:
            continue
        before, after = values[metric]
        if before is None or after is None:
            found.append(BudgetUnmeasured(metric=metric))
            continue
        if before <= 0:
            if after > 0:
                found.append(BudgetFromZero(metric=metric))
            continue
        rise = increase_pct(before, after)
        if rise is not None and rise > limit + 1e-9:
            found.append(BudgetExceeded(metric=metric, rise_pct=rise, limit_pct=limit))
    return found


def cost_change_shown(base: SideUsage, head: SideUsage, budgets: Budgets) -> float | None:
    """The cost change the headline shows: whenever a budget is set or it exceeds 10%."""
    change = increase_pct(base.cost_usd, head.cost_usd)
    if change is None:
        return None
    return change if budgets.any or abs(change) > NOTABLE_COST_CHANGE_PCT else None
