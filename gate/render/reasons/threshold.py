"""The threshold rule's findings and the resolution notes, in words (registered with
`gate.render.reasons.sentence`)."""

from __future__ import annotations

from gate.compare.findings import (
    CoarseSuite,
    Drop,
    Inconclusive,
    NoBaseline,
    Underpowered,
    WithinThreshold,
)
from gate.render.reasons.sentence import fmt, p_text, sentence, share


def _points(drop_points: float, threshold: float) -> str:
    if drop_points > threshold >= round(drop_points, 1):
        return f"{drop_points:.2f}"  # 3.03 points, not "3.0, more than the threshold of 3"
    return fmt(drop_points)


def _dropped(drop_points: float, threshold: float) -> str:
    shown = _points(drop_points, threshold)
    return f"the pass rate dropped {shown} points, more than the threshold of {threshold:g}"


@sentence.register
def _(f: Drop) -> str:
    if f.p_value is None or f.bar is None or f.level is None:
        return _dropped(f.drop_points, f.threshold)
    return (
        f"{_dropped(f.drop_points, f.threshold)}, and the drop is significant against no change "
        f"(p = {p_text(f.p_value)}, one-sided; the bar was {p_text(f.bar)}, from this suite's "
        f"level of {share(f.level)}, its share of the PR's false-block rate)"
    )


def _to_decide(f: Inconclusive) -> str:
    if f.single_runs:
        return (
            "with one run per case the gate cannot tell these changes from noise: repeats "
            "(`repeats: auto`) would decide it"
        )
    if f.more_runs is None or f.cases is None:
        return "more runs of these cases cannot decide it; more cases can"
    noun = "case" if f.cases == 1 else "cases"
    per_case = f.more_runs / f.cases
    shown = f"{per_case:.1f}" if per_case < 10 else f"{per_case:,.0f}"
    each = f" (about {shown} each)" if f.cases > 1 else ""
    return (
        f"about {f.more_runs:,} more runs on each side, over the {f.cases:,} {noun} whose runs "
        f"disagree{each}, would decide it if the estimate stayed where it is"
    )


@sentence.register
def _(f: Inconclusive) -> str:
    interval = f"[{fmt(f.ci_low_points)}, {fmt(f.ci_high_points)}]"
    confidence = f"{100 * f.confidence:g}%"
    if f.why == "not_significant":
        said = (
            f"inconclusive: the pass rate dropped {_points(-f.delta_points, f.threshold)} points "
            f"({confidence} "
            f"interval {interval}), past the threshold of {f.threshold:g}, but the drop is not "
            f"significant against no change (p = {p_text(f.p_value)}, one-sided; the bar is "
            f"{p_text(f.bar)}, from this suite's level of {share(f.level)}, its share of the "
            "PR's false-block rate)"
        )
    else:
        said = (
            "inconclusive: repeats: auto spent its budget before this suite was decided: the "
            f"pass rate changed by {fmt(f.delta_points)} points, and its {confidence} interval "
            f"{interval} still reaches past −{f.threshold:g}"
        )
    return f"{said}; {_to_decide(f)}"


@sentence.register
def _(f: WithinThreshold) -> str:
    sign = "+" if f.delta_points >= 0 else ""
    return (
        f"the pass rate changed by {sign}{fmt(f.delta_points)} points "
        f"(a drop of more than {f.threshold:g} blocks)"
    )


@sentence.register
def _(f: NoBaseline) -> str:
    return (
        "this suite is new: the base has no such suite, so there is no baseline and the "
        "threshold rule does not apply; the head's own blocking cases and errors still count"
    )


@sentence.register
def _(f: CoarseSuite) -> str:
    return (
        f"this suite cannot enforce a {f.threshold:g}-point threshold: with {f.cases} cases one "
        f"case is {f.case_weight_points:.1f} points, so a single regression decides, and the "
        f"drop it catches 9 times in 10 is {fmt(f.detectable_points)} points"
    )


@sentence.register
def _(f: Underpowered) -> str:
    if f.advice == "fixed" and f.se_points is not None and f.noise_blocks is not None:
        return (
            f"with a standard error of {fmt(f.se_points)} points, noise alone takes this suite "
            f"past the threshold of {f.threshold:g} in about {share(f.noise_blocks)} of PRs that "
            "change nothing, and fixed repeats fail on that alone; `repeats: auto` (or "
            "`require_significance: true`) blocks only a drop the drop test finds, keeping "
            "such false blocks under `false_block_rate`"
        )
    said = (
        f"this comparison catches only drops of {fmt(f.detectable_points)} points or more 9 "
        f"times in 10 (at its level of {share(f.level)}): smaller drops past the threshold of "
        f"{f.threshold:g} are often inconclusive"
    )
    if f.advice == "budget":
        return (
            f"{said}; the rounds of `repeats: auto` ended before they reached the design's "
            "precision: a larger `max_calls_per_case` or `max_cost_usd`, or more cases, "
            "resolve them"
        )
    return (
        f"{said}; more cases or repeats (`repeats: auto` spends them where they decide) "
        "resolve them"
    )
