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
E[p̂] = E[X1] = p: unbiased by construction, for any p. The same count with the first two runs
passed gives E[X1·X2 | N, T], an unbiased estimate of p², so p̂² − that is an unbiased estimate
of the variance of p̂ (`Moments`): the drop test's standard error is the sum of these over the
cases and sides, the noise of these runs of these cases (not the spread between cases, which
a fixed suite does not sample). The plan may look at the other side's runs of the same case
(they are independent of this side's); the round at which the whole process stopped, and each
round's target, are taken as given (see docs/comment.md, "repeats: auto").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from math import comb
from typing import NamedTuple

from gate.errors import InputError
from gate.inputs.shard import Shard, shard_of
from gate.report.models import CaseResult
from gate.report.plan import AutoRecord, Plan, boundaries, continues


class Moments(NamedTuple):
    """One side's estimate of a case: `mean` estimates its pass probability p, `square`
    estimates p² (None: a single run, which says nothing of its own noise), both unbiased."""

    mean: float
    square: float | None
    runs: int

    @property
    def variance(self) -> float | None:
        """An unbiased estimate of the variance of `mean` (it may be slightly negative)."""
        return None if self.square is None else self.mean * self.mean - self.square


def plain_moments(passes: float, runs: int) -> Moments:
    """The moments of a fixed number of runs: the pass fraction and T(T−1) / (N(N−1))."""
    square = passes * (passes - 1) / (runs * (runs - 1)) if runs > 1 else None
    return Moments(passes / runs, square, runs)


def rao_blackwell(
    plan: Plan,
    own: Sequence[bool],
    other: Sequence[bool],
    *,
    stopped_by_rule: bool,
    targets: Sequence[float | None] = (),
) -> Moments:
    """The moments of this side of one case under `plan` (see the module's doc).

    `own` and `other` are this case's outcomes in run order on this side and the other;
    `stopped_by_rule`: the case stopped because `continues` said so (not because the whole
    process stopped, or `max_repeats`); `targets`: each round's target (rule spread)."""
    runs = len(own)
    if runs == 0:
        raise ValueError("no runs")
    marks = boundaries(plan, runs)
    total = sum(own)
    if len(marks) == 1 and not stopped_by_rule:
        return plain_moments(total, runs)  # nothing was chosen
    other_at = tuple(sum(other[:m]) for m in marks)
    rounds = tuple(targets[: len(marks)]) + (None,) * max(0, len(marks) - len(targets))
    ways, ways1, ways11 = _counts(plan, runs, other_at, rounds)
    if stopped_by_rule and continues(plan, total, other_at[-1], runs, len(marks) - 1, rounds[-1]):
        raise ValueError("the plan would have continued this case")
    if ways[total] == 0:
        raise ValueError("these runs cannot come from this plan")
    return Moments(ways1[total] / ways[total], ways11[total] / ways[total], runs)


@lru_cache(maxsize=65536)
def _counts(
    plan: Plan, runs: int, other_at: tuple[int, ...], rounds: tuple[float | None, ...]
) -> tuple[list[int], list[int], list[int]]:
    """For each number of passes t in `runs` runs: the admissible run sequences, those whose
    first run passed, and those whose first two runs passed."""
    marks = boundaries(plan, runs)
    first = marks[0]
    ways = [comb(first, t) for t in range(first + 1)]
    ways1 = [comb(first - 1, t - 1) if t >= 1 else 0 for t in range(first + 1)]
    ways11 = [comb(first - 2, t - 2) if t >= 2 else 0 for t in range(first + 1)]
    for j in range(1, len(marks)):
        before, size = marks[j - 1], marks[j] - marks[j - 1]
        new, new1, new11 = ([0] * (marks[j] + 1) for _ in range(3))
        for t in range(before + 1):
            goes_on = continues(plan, t, other_at[j - 1], before, j - 1, rounds[j - 1])
            if not ways[t] or not goes_on:
                continue
            for s in range(size + 1):
                factor = comb(size, s)
                new[t + s] += ways[t] * factor
                new1[t + s] += ways1[t] * factor
                new11[t + s] += ways11[t] * factor
        ways, ways1, ways11 = new, new1, new11
    return ways, ways1, ways11


def pair_moments(
    auto: AutoRecord | None, base: CaseResult, head: CaseResult
) -> tuple[Moments, Moments]:
    """The two sides' moments of one paired case: of the pass fraction over its runs with
    fixed repeats, of the unbiased estimate of `repeats: auto` otherwise. Under auto an errored
    run counts as not passed, as in the rounds' rule, whether or not the case got more runs
    than round 0 (with fixed repeats the fraction is over the scored runs)."""
    if auto is None:
        return fixed_moments(base), fixed_moments(head)
    plan = auto.plan
    b, h = base.run_passes(), head.run_passes()
    if len(b) <= plan.first and len(h) <= plan.first:  # round 0 only: nothing was chosen
        return plain_moments(sum(b), len(b)), plain_moments(sum(h), len(h))
    if len(b) != len(h):
        raise InputError(
            f"case {head.id!r} has {len(b)} runs on base and {len(h)} on head; under "
            "repeats: auto both sides of a case get the same runs",
            key="attempts",
        )
    by_rule = head.auto_end == "rule"
    targets = auto.targets
    if auto.shard_targets:  # merged shards: the targets of the case's own shard
        total = Shard.parse(next(iter(auto.shard_targets))).total
        targets = auto.shard_targets.get(f"{shard_of(head.id, total)}/{total}", [])
    try:
        return (
            rao_blackwell(plan, b, h, stopped_by_rule=by_rule, targets=targets),
            rao_blackwell(plan, h, b, stopped_by_rule=by_rule, targets=targets),
        )
    except ValueError as exc:
        raise InputError(f"case {head.id!r}: {exc}", key="attempts") from None


def fixed_moments(result: CaseResult) -> Moments:
    """Fixed repeats: the pass fraction (over the scored runs) and its square's estimate."""
    return plain_moments(plain_fraction(result) * result.repeats, result.repeats)


def plain_fraction(result: CaseResult) -> float:
    return result.pass_fraction if result.repeats > 1 else float(result.passed)


class DeltaEstimate(NamedTuple):
    """The delta of the pass rate (points), its standard error and degrees of freedom."""

    delta_points: float
    se_points: float
    df: float


def delta_estimate(pairs: Sequence[tuple[Moments, Moments]]) -> DeltaEstimate | None:
    """The mean per-case difference (head − base) and its standard error: the square root of
    the summed variance estimates of both sides over n², with Satterthwaite's degrees of
    freedom (each side of a case contributing N − 1). None: no case, or a case with a single
    run (no estimate of its noise). The error is never taken below one flipped run of one case
    (100 / (n · runs) points), so a suite whose runs all agreed is not claimed exact."""
    n = len(pairs)
    if n == 0 or any(m.square is None for pair in pairs for m in pair):
        return None
    delta = sum(h.mean - b.mean for b, h in pairs) / n
    terms = [v for pair in pairs for v in _variances(pair)]
    variance = sum(v for v, _ in terms)
    runs = sum(m.runs for pair in pairs for m in pair) / (2 * n)
    floor = 1.0 / (n * runs)
    se = max(math.sqrt(max(variance, 0.0)) / n, floor)
    spread = sum(max(v, 0.0) ** 2 / dof for v, dof in terms)
    df = variance**2 / spread if variance > 0 and spread > 0 else float(max(n - 1, 1))
    return DeltaEstimate(100.0 * delta, 100.0 * se, max(df, 1.0))


def _variances(pair: tuple[Moments, Moments]) -> list[tuple[float, int]]:
    return [(m.variance or 0.0, max(m.runs - 1, 1)) for m in pair]
