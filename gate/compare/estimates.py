"""Per-case pass fractions that stay unbiased when the runs were allocated adaptively.

Pure. With a fixed number of repeats a case's pass fraction (passes / runs) is an unbiased
estimate of its pass probability. Under `repeats: auto` it is not: a case gets more runs
*because* its first runs were mixed, so the runs that decided the allocation are not a fair
sample (a case at p = .97 that is extended only after a failure shows 5/6 where the truth is
.97). The estimate used instead is the Rao-Blackwellised first run (Girshick, Mosteller &
Savage 1946): E[X1 | where the case ended], which for a sampling plan that decides at round
boundaries from the counts so far is

    p̂ = (# admissible run sequences ending at (N, T) whose first run passed)
        / (# admissible run sequences ending at (N, T))

where *admissible* means the plan would have produced exactly that many runs for it. Every
sequence with the same (N, T) is equally likely whatever p is, so p̂ = E[X1 | N, T] and
E[p̂] = E[X1] = p: unbiased by construction, for any p. The plan may look at the other side's
runs of the same case (they are independent of this side's); the round at which the whole
process stopped is taken as given (see docs/comment.md, "repeats: auto").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import comb
from statistics import NormalDist

from gate.errors import InputError
from gate.report.models import CaseResult
from gate.report.plan import Plan, boundaries, continues


def unbiased_fraction(
    plan: Plan, own: Sequence[bool], other: Sequence[bool], *, stopped_by_rule: bool
) -> float:
    """The estimate of this side's pass probability of one case (see the module's doc).

    `own` and `other` are this case's outcomes in run order on this side and the other;
    `stopped_by_rule`: the case stopped because `continues` said so (not because the whole
    process stopped, or `max_repeats`)."""
    runs = len(own)
    if runs == 0:
        raise ValueError("no runs")
    marks = boundaries(plan, runs)
    if len(marks) == 1 and not stopped_by_rule:
        return sum(own) / runs  # nothing was chosen: the plain fraction
    other_at = [sum(other[:m]) for m in marks]
    first = marks[0]
    ways = [comb(first, t) for t in range(first + 1)]
    ways1 = [comb(first - 1, t - 1) if t >= 1 else 0 for t in range(first + 1)]
    for j in range(1, len(marks)):
        before, size = marks[j - 1], marks[j] - marks[j - 1]
        new = [0] * (marks[j] + 1)
        new1 = [0] * (marks[j] + 1)
        for t in range(before + 1):
            if not ways[t] or not continues(plan, t, other_at[j - 1], before, j - 1):
                continue
            for s in range(size + 1):
                new[t + s] += ways[t] * comb(size, s)
                new1[t + s] += ways1[t] * comb(size, s)
        ways, ways1 = new, new1
    total = sum(own)
    if stopped_by_rule:
        last = marks[-1]
        if continues(plan, total, other_at[-1], last, len(marks) - 1):
            raise ValueError("the plan would have continued this case")
    if ways[total] == 0:
        raise ValueError("these runs cannot come from this plan")
    return ways1[total] / ways[total]


def pair_fractions(plan: Plan | None, base: CaseResult, head: CaseResult) -> tuple[float, float]:
    """The two sides' estimates of one paired case: the pass fraction over its runs with fixed
    repeats, the unbiased estimate of `repeats: auto` otherwise. Under auto an errored run
    counts as not passed, as in the rounds' rule and interval, whether or not the case got
    more runs than round 0 (with fixed repeats the fraction is over the scored runs)."""
    if plan is None:
        return plain_fraction(base), plain_fraction(head)
    b, h = base.run_passes(), head.run_passes()
    if len(b) <= plan.first and len(h) <= plan.first:  # round 0 only: nothing was chosen
        return sum(b) / len(b), sum(h) / len(h)
    if len(b) != len(h):
        raise InputError(
            f"case {head.id!r} has {len(b)} runs on base and {len(h)} on head; under "
            "repeats: auto both sides of a case get the same runs",
            key="attempts",
        )
    by_rule = head.auto_end == "rule"
    try:
        return (
            unbiased_fraction(plan, b, h, stopped_by_rule=by_rule),
            unbiased_fraction(plan, h, b, stopped_by_rule=by_rule),
        )
    except ValueError as exc:
        raise InputError(f"case {head.id!r}: {exc}", key="attempts") from None


def plain_fraction(result: CaseResult) -> float:
    return result.pass_fraction if result.repeats > 1 else float(result.passed)


def delta_interval(diffs: Sequence[float], alpha: float) -> tuple[float, float, float] | None:
    """The mean of per-case differences and its normal interval at 1 - alpha, in points: what
    `repeats: auto` checks after each round (the case-level standard error of Miller 2024)."""
    n = len(diffs)
    if n < 2:
        return None
    mean = sum(diffs) / n
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    half = NormalDist().inv_cdf(1 - alpha / 2) * sd / math.sqrt(n)
    return 100 * mean, 100 * (mean - half), 100 * (mean + half)


def decision_clear(interval: tuple[float, float, float] | None, threshold: float) -> bool:
    """The threshold rule's outcome is settled: the interval lies wholly on one side of
    -threshold (or there is nothing to decide)."""
    if interval is None:
        return True
    _, low, high = interval
    return low > -threshold or high < -threshold
