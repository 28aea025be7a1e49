"""The comment's statistics, one line each: the pairs, the delta and its interval, the test,
the repeats' test, what the suite can resolve, and whether the change is significant.

Pure; written in the output's `Style`. Each line says what its number means (see
docs/comment.md, "Statistics").
"""

from __future__ import annotations

from gate.compare.droptest import METHODS, DropTest
from gate.compare.models import Comparison
from gate.compare.power import Power
from gate.compare.stats import ResamplingResult, Significance
from gate.render.headline import delta_digits
from gate.render.markdown import Md
from gate.render.style import Style
from gate.render.values import g, num, p_value, pts


def _pairs(s: Significance, style: Style) -> Md:
    n = s.counts
    counted = (
        " (counted here by their majority outcome; the delta is of the pass fractions)"
        if s.resampling
        else ""
    )
    return Md(
        f"{style.strong('Pairs:')} {num(n.n)} cases ran on both sides{counted}: "
        f"{num(n.both_pass)} passed on both, {num(n.both_fail)} failed on both, "
        f"{style.strong(num(n.regressed))} passed only on base and "
        f"{style.strong(num(n.fixed))} only on head. Only these {num(n.discordant)} discordant "
        "pairs carry evidence of a change."
    )


def _delta(c: Comparison, s: Significance, style: Style) -> Md:
    interval = style.strong(f"[{pts(s.ci_low_points)}, {pts(s.ci_high_points)}]")
    return Md(
        f"{style.strong('Δ pass rate:')} {pts(c.delta_points, delta_digits(c))} pts; "
        f"{g(s.confidence * 100)}% confidence interval {interval} pts, by {s.ci_method}. The "
        "interval is the range of true changes in pass rate that the data are consistent with."
    )


def _test(s: Significance, style: Style) -> Md:
    low, high = s.ci_low_points, s.ci_high_points
    disagree = (
        s.resampling is None
        and low is not None
        and high is not None
        and (high < 0 or low > 0) != s.significant
    )
    note = (
        " The interval and the exact test disagree here: the exact test is conservative near "
        "the edge (the mid-p value is closer to the interval)."
        if disagree
        else ""
    )
    return Md(
        f"{style.strong('p-value:')} {style.strong(p_value(s.p_value))}, from the {s.test}, a "
        f"two-sided binomial test on the {num(s.counts.discordant)} discordant pairs (mid-p "
        f"{p_value(s.mid_p_value)}). It is the chance of an imbalance between regressions and "
        "fixes at least this large if the change made no difference." + note
    )


def _repeats(s: Significance, r: ResamplingResult, style: Style) -> Md:
    patterns = (
        "all sign patterns enumerated"
        if r.exact
        else f"{num(r.resamples_test)} random sign patterns"
    )
    return Md(
        f"{style.strong('Repeats:')} per-case pass fractions changed by "
        f"{pts(r.mean_delta_points)} pts on average; {g(s.confidence * 100)}% interval "
        f"[{pts(r.ci_low_points)}, {pts(r.ci_high_points)}] by {r.interval_method} "
        f"({num(r.resamples_ci)} resamples); {style.strong(f'p = {p_value(r.p_value)}')} from a "
        f"{r.test} ({patterns}, seed {r.seed}). With repeats, this test decides significance."
    )


def _resolution(c: Comparison, w: Power, style: Style) -> Md:
    design = (
        f"; the rounds aimed at {num(w.design_points, 1)} pts within the budget"
        if w.design_points is not None
        else ""
    )
    return Md(
        f"{style.strong('Resolution:')} one case is {num(w.case_weight_points, 1)} pts. With "
        f"{num(w.n)} cases × {g(round(w.runs_per_case, 1))} runs per side the standard error "
        f"of the delta is {num(w.se_points, 2)} pts, so at this suite's level of "
        f"{g(100 * w.level)}% the drop test catches a drop of "
        f"{style.strong(f'{num(w.detectable_points, 1)} pts')} {g(w.power * 100)}% of the time"
        f"{design} (Miller 2024, power analysis of the drop test)."
    )


def _drop_test(c: Comparison, d: DropTest, style: Style) -> Md:
    verdict = "significant" if d.significant else "not significant"
    said = (
        f"{style.strong('Drop test:')} {style.strong(f'p = {p_value(d.p_value)}')} against no "
        f"change (one-sided), by the {METHODS[d.method]}"
    )
    if not d.decides:
        return Md(
            f"{said}. With fixed repeats it does not decide: a drop past the threshold fails on "
            "its own (`require_significance: true` makes it decide, at this suite's share of "
            f"the PR's false-block rate of {g(100 * c.policy.false_block_rate)}%)."
        )
    undecided = "blocks" if c.policy.inconclusive == "block" else "does not block"
    return Md(
        f"{said}; the bar was {p_value(d.bar)}, from this suite's level of {g(100 * d.level)}% "
        f"(its share of the PR's false-block rate of {g(100 * c.policy.false_block_rate)}%): "
        f"{verdict}. A drop past the threshold blocks only when it is significant; otherwise "
        f"the suite is inconclusive, which {undecided} (`inconclusive: {c.policy.inconclusive}`)."
    )


def statistics_lines(c: Comparison, style: Style) -> list[Md]:
    """The lines of the statistics section; none when no case ran on both sides."""
    s = c.statistics
    if s is None or not s.counts.n:
        return []
    lines = [_pairs(s, style), _delta(c, s, style), _test(s, style)]
    if s.resampling:
        lines.append(_repeats(s, s.resampling, style))
    if c.power:
        lines.append(_resolution(c, c.power, style))
    if c.drop_test:
        lines.append(_drop_test(c, c.drop_test, style))
    return lines
