"""Statistics of a paired comparison: the same cases run on base and on head.

Pure functions over counts and per-case fractions. The exact tests and intervals use the
standard library (`statistics.NormalDist`, `math.lgamma`) and the resampling uses numpy,
imported only when cases were repeated. scipy is deliberately not imported here: measured on
the CI-sized machine, `scipy.stats` takes 1.5-2.4 s and `scipy.special` 0.4-0.6 s to import,
against a 2 s budget for the whole of `gate compare`. The tests check every function against
`scipy.stats` (binomtest, its Wilson interval, permutation_test, bootstrap) and against
published examples.

Methods (named in the PR comment's statistics section):
- the interval for the difference of two paired proportions is Newcombe's hybrid score
  interval (Newcombe 1998, method 10; Fagerland, Lydersen & Laake 2017, ch. 8 "square-and-add");
- the test is the exact McNemar test: a two-sided binomial test of the discordant pairs
  (its mid-p value is reported alongside);
- with repeats, per-case pass fractions are compared by a paired sign-flip permutation test
  and a percentile bootstrap interval of the mean difference, both with a fixed seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

from pydantic import BaseModel, ConfigDict, Field

NEWCOMBE = "Newcombe's hybrid score interval for paired proportions (Newcombe 1998, method 10)"
MCNEMAR = "exact McNemar test"
SIGN_FLIP = "paired sign-flip permutation test on per-case pass fractions"
BOOTSTRAP = "percentile bootstrap of the mean per-case difference in pass fraction"

RESAMPLES_TEST = 9999
RESAMPLES_CI = 2000
SEED = 20240601
SIGN_CHUNK = 256
BOOTSTRAP_CELLS = 2_000_000  # resampled values held in memory at once


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class PairedCounts(Frozen):
    """The 2x2 table of paired outcomes: rows base, columns head."""

    both_pass: int = Field(0, ge=0)
    regressed: int = Field(0, ge=0, description="passed on base, not on head")
    fixed: int = Field(0, ge=0, description="passed on head, not on base")
    both_fail: int = Field(0, ge=0)

    @property
    def n(self) -> int:
        return self.both_pass + self.regressed + self.fixed + self.both_fail

    @property
    def base_passed(self) -> int:
        return self.both_pass + self.regressed

    @property
    def head_passed(self) -> int:
        return self.both_pass + self.fixed

    @property
    def discordant(self) -> int:
        return self.regressed + self.fixed


def paired_counts(pairs: Sequence[tuple[bool, bool]]) -> PairedCounts:
    """Count `(base_passed, head_passed)` pairs into the 2x2 table."""
    cells = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for base, head in pairs:
        cells[(bool(base), bool(head))] += 1
    return PairedCounts(
        both_pass=cells[(True, True)],
        regressed=cells[(True, False)],
        fixed=cells[(False, True)],
        both_fail=cells[(False, False)],
    )


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


def wilson_interval(successes: int, n: int, confidence: float) -> tuple[float, float]:
    """Wilson score interval of one proportion (equal to scipy's `method="wilson"`)."""
    if n <= 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = successes / n
    denominator = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, center - half), min(1.0, center + half)


def _correlation(table: PairedCounts) -> float:
    """Newcombe's phi: the correlation of the two paired outcomes, shrunk towards 0 when
    positive (the N/2 correction of method 10), and 0 when a margin is empty."""
    margins = (
        table.base_passed,
        table.n - table.base_passed,
        table.head_passed,
        table.n - table.head_passed,
    )
    if 0 in margins:
        return 0.0
    cross: float = table.both_pass * table.both_fail - table.regressed * table.fixed
    if cross > table.n / 2:
        cross -= table.n / 2
    elif cross >= 0:
        cross = 0.0
    return cross / math.sqrt(math.prod(margins))


def newcombe_paired_interval(table: PairedCounts, confidence: float) -> tuple[float, float]:
    """Confidence interval of `head rate - base rate` (as proportions, not points)."""
    n = table.n
    if n == 0:
        return -1.0, 1.0
    p_base, p_head = table.base_passed / n, table.head_passed / n
    l_base, u_base = wilson_interval(table.base_passed, n, confidence)
    l_head, u_head = wilson_interval(table.head_passed, n, confidence)
    phi = _correlation(table)
    delta = p_head - p_base
    down_head, up_base = p_head - l_head, u_base - p_base
    up_head, down_base = u_head - p_head, p_base - l_base
    low = delta - math.sqrt(max(down_head**2 + up_base**2 - 2 * phi * down_head * up_base, 0.0))
    high = delta + math.sqrt(max(up_head**2 + down_base**2 - 2 * phi * up_head * down_base, 0.0))
    return max(-1.0, low), min(1.0, high)


def _binomial_half_cdf(k: int, n: int) -> float:
    """P(X <= k) for X ~ Binomial(n, 1/2), summed in log space (no overflow at any n)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_all = math.lgamma(n + 1) + n * math.log(0.5)
    logs = [log_all - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(k + 1)]
    top = max(logs)
    total = math.exp(top) * math.fsum(math.exp(x - top) for x in logs)
    return min(1.0, float(f"{total:.12g}"))  # 12 digits are exact; drop the float noise


def mcnemar_exact(regressed: int, fixed: int) -> float:
    """Two-sided exact McNemar p-value: the discordant pairs under Binomial(b + c, 1/2)."""
    total = regressed + fixed
    if total == 0:
        return 1.0
    return min(1.0, 2 * _binomial_half_cdf(min(regressed, fixed), total))


def mcnemar_drop(regressed: int, fixed: int) -> float:
    """One-sided exact McNemar p-value against "no change" for a drop: the chance of at least
    `regressed` regressions among the discordant pairs if each were a coin flip."""
    total = regressed + fixed
    if total == 0:
        return 1.0
    return _binomial_half_cdf(total - regressed, total)  # P(X >= b) = P(X <= n - b) at 1/2


def mcnemar_mid_p(regressed: int, fixed: int) -> float:
    """The mid-p version: the exact p-value minus the probability of the observed table."""
    total = regressed + fixed
    if total == 0:
        return 1.0
    k = min(regressed, fixed)
    below, upto = _binomial_half_cdf(k - 1, total), _binomial_half_cdf(k, total)
    return min(1.0, float(f"{upto + below:.12g}"))  # 2 * (P(X <= k) - P(X = k) / 2)


class ResamplingResult(Frozen):
    """Repeats: per-case pass fractions compared by resampling (seeded, reproducible)."""

    test: str = SIGN_FLIP
    interval_method: str = BOOTSTRAP
    n: int = Field(description="paired cases")
    nonzero: int = Field(description="cases whose pass fraction changed")
    mean_delta_points: float
    ci_low_points: float
    ci_high_points: float
    p_value: float
    exact: bool = Field(description="all sign patterns enumerated instead of sampled")
    resamples_test: int
    resamples_ci: int
    seed: int


def sign_flip_test(
    diffs: Sequence[float], *, resamples: int = RESAMPLES_TEST, seed: int = SEED
) -> tuple[float, bool]:
    """Two-sided p-value of the sum of paired differences, and whether it was exact.

    Under "head is no different", each case's difference is as likely to have either sign.
    Zero differences carry no sign, so they are left out (the p-value does not change). All
    2^m sign patterns are enumerated when there are at most `resamples` of them; otherwise
    `resamples` random patterns give the p-value (count + 1) / (resamples + 1).
    This is scipy's `permutation_test(permutation_type="samples")`, done with a bit matrix:
    scipy's generic loop takes ~25 s for 10,000 cases, this takes ~0.2 s.
    """
    import numpy as np

    values = np.asarray([d for d in diffs if d != 0.0], dtype=np.float64)
    m = values.size
    if m == 0:
        return 1.0, True
    total = float(values.sum())
    # with signs s = 2b - 1 (b in {0, 1}), the statistic sum(s * v) is 2 * (b @ v) - total
    observed = abs(total) * (1 - 1e-12) - 1e-12
    if 2**m <= resamples:
        patterns = (np.arange(2**m, dtype=np.int64)[:, None] >> np.arange(m)) & 1
        hits = int((np.abs(2 * (patterns @ values) - total) >= observed).sum())
        return hits / 2**m, True
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, resamples, SIGN_CHUNK):
        rows = min(SIGN_CHUNK, resamples - start)
        random_bytes = rng.integers(0, 256, size=(rows, (m + 7) // 8), dtype=np.uint8)
        bits = np.unpackbits(random_bytes, axis=1, count=m).astype(np.float64)
        hits += int((np.abs(2 * (bits @ values) - total) >= observed).sum())
    return min(1.0, (hits + 1) / (resamples + 1)), False


def bootstrap_mean_interval(
    diffs: Sequence[float], confidence: float, *, resamples: int = RESAMPLES_CI, seed: int = SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `diffs` (scipy's `method="percentile"`)."""
    import numpy as np

    values = np.asarray(diffs, dtype=np.float64)
    if values.size == 0:
        return 0.0, 0.0
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    rows = max(1, BOOTSTRAP_CELLS // values.size)
    for start in range(0, resamples, rows):
        count = min(rows, resamples - start)
        picks = rng.integers(0, values.size, size=(count, values.size))
        means[start : start + count] = values[picks].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(means, [tail, 1 - tail])
    return float(low), float(high)


def resampling(
    fractions: Sequence[tuple[float, float]], confidence: float, *, seed: int = SEED
) -> ResamplingResult:
    """Compare per-case `(base_fraction, head_fraction)` pairs (head minus base)."""
    diffs = [head - base for base, head in fractions]
    p_value, exact = sign_flip_test(diffs, seed=seed)
    low, high = bootstrap_mean_interval(diffs, confidence, seed=seed)
    mean = sum(diffs) / len(diffs) if diffs else 0.0
    return ResamplingResult(
        n=len(diffs),
        nonzero=sum(1 for d in diffs if d != 0.0),
        mean_delta_points=round(100 * mean, 6),
        ci_low_points=round(100 * low, 6),
        ci_high_points=round(100 * high, 6),
        p_value=p_value,
        exact=exact,
        resamples_test=RESAMPLES_TEST,
        resamples_ci=RESAMPLES_CI,
        seed=seed,
    )


class Significance(Frozen):
    """Everything the comment's statistics section shows, and the decision it feeds."""

    confidence: float
    alpha: float
    counts: PairedCounts
    ci_method: str = NEWCOMBE
    ci_low_points: float | None = None
    ci_high_points: float | None = None
    test: str = MCNEMAR
    p_value: float | None = None
    mid_p_value: float | None = None
    resampling: ResamplingResult | None = None
    decision_test: str = MCNEMAR
    decision_p_value: float | None = None
    significant: bool = False


def significance(
    table: PairedCounts,
    alpha: float,
    fractions: Sequence[tuple[float, float]] | None = None,
) -> Significance:
    """Interval and tests of a paired comparison; `fractions` when cases were repeated.

    `significant` says the change (either way) is unlikely to be chance at level `alpha`:
    with repeats the resampling test on fractions decides, else the exact McNemar test. With
    repeats the interval is the bootstrap interval of the mean fraction difference (the delta
    is of the fractions); the 2x2 table and McNemar's test stay, of the majority outcomes.
    """
    confidence = 1 - alpha
    if table.n == 0:
        return Significance(confidence=confidence, alpha=alpha, counts=table)
    p_value = mcnemar_exact(table.regressed, table.fixed)
    result = resampling(fractions, confidence) if fractions else None
    decision_test, decision_p = (
        (SIGN_FLIP, result.p_value) if result is not None else (MCNEMAR, p_value)
    )
    if result is not None:  # the delta is of the fractions: so is its interval
        ci_method, low_points, high_points = BOOTSTRAP, result.ci_low_points, result.ci_high_points
    else:
        low, high = newcombe_paired_interval(table, confidence)
        ci_method, low_points, high_points = NEWCOMBE, round(100 * low, 6), round(100 * high, 6)
    return Significance(
        confidence=confidence,
        alpha=alpha,
        counts=table,
        ci_method=ci_method,
        ci_low_points=low_points,
        ci_high_points=high_points,
        p_value=p_value,
        mid_p_value=mcnemar_mid_p(table.regressed, table.fixed),
        resampling=result,
        decision_test=decision_test,
        decision_p_value=decision_p,
        significant=decision_p < alpha,
    )
