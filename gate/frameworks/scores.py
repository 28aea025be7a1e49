"""inspect_ai's scores as the gate's pass and fail (pure).

Every score value becomes a number the way inspect reads its letter grades: `C` (correct) 1,
`P` (partial) 0.5, `I` (incorrect) and `N` (no answer) 0; booleans 1 and 0; numbers (and
numeric strings) as they are. The suite's `pass:` becomes a number the same way (`C` is 1, `P`
is 0.5, `true` is 1), and a score passes when its number reaches it: `pass: C` wants full
credit, `pass: P` takes partial credit, `pass: 0.7` a score of at least 0.7. A `pass:` that is
another word passes the scores equal to it. A value that is none of these (a list, a dict, an
unknown word) is an error, never a fail, and so is a sample with no score at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gate.frameworks.checks import score_check
from gate.report.checks import ScoreResult

LETTERS = {"C": 1.0, "P": 0.5, "I": 0.0, "N": 0.0}


class Unscorable(Exception):
    """A score the gate cannot read as pass or fail: the sample is an error."""


def as_number(value: Any) -> float | None:
    """A score value as inspect's letter grades read; None when it is not one."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        if value.strip().upper() in LETTERS:
            return LETTERS[value.strip().upper()]
        try:
            return float(value)
        except ValueError:
            return None
    return None


def passes(value: Any, wanted: str | float | bool) -> bool:
    """Whether a score value passes the suite's `pass:`."""
    bar = as_number(wanted)
    if bar is None:  # a word of the scorer's own: equal passes
        if not isinstance(value, str):
            raise Unscorable(f"{value!r} is not the word `pass:` names ({wanted!r})")
        return value.strip() == str(wanted).strip()
    number = as_number(value)
    if number is None:
        raise Unscorable(f"{value!r} is neither a grade (C, P, I, N), a boolean nor a number")
    return number >= bar


def score_checks(
    scores: Mapping[str, Any], wanted: str | float | bool, scorer: str | None
) -> list[ScoreResult]:
    """One check per scorer that decides (`scorer`, else every one): `score:NAME`, its value
    and explanation in the detail. `scores` maps a scorer's name to its inspect `Score`."""
    if scorer is not None:
        if scorer not in scores:
            raise Unscorable(f"no score from scorer {scorer!r} (scored by: {', '.join(scores)})")
        scores = {scorer: scores[scorer]}
    checks = []
    for name, score in scores.items():
        value = getattr(score, "value", None)
        if value is None:
            raise Unscorable(f"scorer {name!r} gave no value")
        number = as_number(value)
        fraction = number if number is not None and 0.0 <= number <= 1.0 else None
        explanation = str(getattr(score, "explanation", None) or "")
        checks.append(
            score_check(name, passes(value, wanted), value, wanted, explanation, fraction)
        )
    if not checks:
        raise Unscorable("unscored: the sample has no score")
    return checks
