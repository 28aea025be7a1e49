"""What a promptfoo `python` assertion returned, read as promptfoo reads it
(`normalizeScriptResult`). Pure.

`True`/`False` (or the strings "true"/"false") pass or fail with score 1 or 0; a number is the
score and passes above 0, or at the assertion's `threshold` when it has one; a dict (or its
JSON) is a grading result `{pass, score, reason}` (`pass_` for `pass`), failing when its score
is below the threshold. `not-` inverts the pass, not the score. Anything else is a ValueError
saying what came back.
"""

from __future__ import annotations

import json
import math
from typing import Any

SHOWN = 80


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _grading(
    value: dict[Any, Any], threshold: float | None, negated: bool
) -> tuple[bool, float, str]:
    result = dict(value)
    if "pass_" in result and "pass" not in result:
        result["pass"] = result["pass_"]
    verdict, score, reason = result.get("pass"), result.get("score"), result.get("reason")
    if not (isinstance(verdict, bool) and isinstance(score, int | float) and _number(score)
            and isinstance(reason, str)):  # fmt: skip
        raise ValueError(
            f"returned {_shown(value)}: a dict must have a bool `pass`, a number `score` and a "
            "string `reason`"
        )
    if threshold is not None and score < threshold:
        verdict = False
        reason = f"Python score {score:g} is less than threshold {threshold:g}" + (
            f": {reason}" if reason else ""
        )
    passed = verdict != negated
    if passed != verdict:
        reason = (
            "Assertion passed"
            if passed
            else f"Python code returned {'true' if verdict else 'false'}"
        )
    return passed, float(score), reason


def script_verdict(value: Any, threshold: float | None, negated: bool) -> tuple[bool, float, str]:
    """(passed, score, reason) of the returned value; ValueError when it is none of these."""
    lowered = value.lower() if isinstance(value, str) else None
    if value is True or lowered == "true" or value is False or lowered == "false":
        raw = value is True or lowered == "true"
        passed = raw != negated
        return (
            passed,
            1.0 if passed else 0.0,
            "" if passed else f"Python code returned {str(raw).lower()}",
        )
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise ValueError(f"returned invalid JSON ({exc}): {_shown(value)}") from None
        if not isinstance(value, dict):
            raise ValueError(f"returned JSON that is not an object: {_shown(value)}")
    if isinstance(value, dict):
        return _grading(value, threshold, negated)
    if isinstance(value, list) or value is None:
        raise ValueError(
            f"returned {_shown(value)}; expected a bool, a number or {{pass, score, reason}}"
        )
    score = float(value) if _number(value) else _parse_float(value)
    raw = score > 0 if threshold is None else score >= threshold
    passed = raw != negated
    return passed, score, "" if passed else f"Python code returned {str(raw).lower()}"


def _parse_float(value: Any) -> float:
    """`Number.parseFloat(String(value))`: a leading number, else NaN (an error here)."""
    import re

    found = re.match(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|^\s*[-+]?Infinity", str(value))
    if found is None:
        raise ValueError(
            f"returned {_shown(value)}; expected a bool, a number or {{pass, score, reason}}"
        )
    number = float(found.group(0).replace("Infinity", "inf"))
    if math.isnan(number):
        raise ValueError(f"returned {_shown(value)}, which is not a number")
    return number
