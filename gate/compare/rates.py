"""The comparison's estimates: both sides' pass rates over the paired cases, their delta and
its test. Pure.

With repeats (fixed or `repeats: auto`) a side's pass rate is the mean of its cases' pass
fractions, each the unbiased estimate of `gate.compare.estimates` (not the share of majority
outcomes, which is biased); with single runs it is the share of cases that passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gate.compare.estimates import Moments, pair_moments
from gate.compare.stats import PairedCounts, Significance, paired_counts, significance
from gate.compare.totals import Estimates, points
from gate.inputs.policy import Policy
from gate.report.models import CaseResult, rate
from gate.report.plan import AutoRecord

Pairs = Sequence[tuple[CaseResult, CaseResult]]


@dataclass(frozen=True)
class PassRates:
    """The paired cases' outcomes on both sides, as rates and as their test."""

    repeated: bool  # a case ran more than once (or `repeats: auto` chose the runs)
    moments: list[tuple[Moments, Moments]] | None  # per pair, with repeats
    fractions: Estimates | None  # each case's pass fraction on both sides, with repeats
    table: PairedCounts  # the cases' (majority) outcomes, side by side
    stats: Significance
    base: float | None  # percent; None: no case paired
    head: float | None
    delta: float | None  # points, head − base
    diffs: list[float]  # each case's head − base, as a fraction


def pass_rates(pairs: Pairs, auto: AutoRecord | None, policy: Policy) -> PassRates:
    """The rates, their delta and its test over `pairs`; `auto` the plan `repeats: auto` ran."""
    repeated = auto is not None or any(r.repeats > 1 for b, h in pairs for r in (b, h))
    moments = [pair_moments(auto, b, h) for b, h in pairs] if repeated else None
    fractions: Estimates | None = (
        {h.id: (mb.mean, mh.mean) for (_, h), (mb, mh) in zip(pairs, moments, strict=True)}
        if moments is not None
        else None
    )
    table = paired_counts([(b.passed, h.passed) for b, h in pairs])
    shares = list(fractions.values()) if fractions is not None else None
    stats = significance(table, policy.alpha, shares)
    base: float | None
    head: float | None
    delta: float | None
    if shares:  # the mean of the per-case pass fractions: unbiased, where majorities are not
        n = len(shares)
        base = 100.0 * sum(b for b, _ in shares) / n
        head = 100.0 * sum(h for _, h in shares) / n
        delta = round(100.0 * sum(h - b for b, h in shares) / n, 9)
        diffs = [h - b for b, h in shares]
    else:
        base, head = rate(table.base_passed, table.n), rate(table.head_passed, table.n)
        delta = points(table.head_passed, table.base_passed, table.n)
        diffs = [float(h.passed) - float(b.passed) for b, h in pairs]
    return PassRates(repeated, moments, fractions, table, stats, base, head, delta, diffs)
