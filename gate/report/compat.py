"""Reports of older schema versions, read as the current one.

A report's metadata line names its `schema_version`; a line of an older version is upgraded
step by step to the current shape before it is validated, so every reader (compare, merge,
`gate run --append`) sees one shape. A report of a newer version than this gate knows is
refused, never guessed at.

- 1 -> 2: `auto` held the plan's keys, `rounds`, `stop` ("" before the flow's end) and
  `calls` in one object; it is now `{plan: {...}, rounds, stop (null before the end), calls}`.
- 2 -> 3: a check result names its `kind` and carries its parts (`gate.report.checks`). Before,
  the kind was the name's prefix (`include:CAC`) and the judge's score and minimum were words
  in `detail` (`2/2 (meets minimum 1): …`): read here, once, from a report of version 1 or 2.
  A promptfoo assertion's result is told from the gate's own by its `metric`, `scored` or
  `fraction` (a promptfoo result always has one; of the gate's checks only `python` does): a
  promptfoo `python` assertion without a metric, which cannot be told apart, reads as the
  gate's `python` check (both show by name and detail).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from pydantic import JsonValue

from gate import REPORT_SCHEMA_VERSION
from gate.errors import InputError
from gate.report.plan import Plan

Line = dict[str, JsonValue]

CHECKS_KNOWN_SINCE = 3  # reports before this version name no check's kind
_JUDGED = re.compile(r"^(\d+)/2 \((?:meets|below) minimum (\d+)\):\s*(.*)$", re.DOTALL)
_PHRASES = ("include", "exclude", "contains")
_PLAIN = (
    *("regex", "not_regex", "max_chars", "min_chars", "contains_any", "contains_all"),
    *("json", "json_exact", "json_schema", "tool_calls_order", "no_tool_calls", "compile"),
)


def _auto_v2(data: Line) -> Line:
    auto = data.get("auto")
    if not isinstance(auto, dict):
        return data
    plan = {key: auto[key] for key in Plan.model_fields if key in auto}
    record: Line = {
        "plan": plan,
        "rounds": auto.get("rounds", 0),
        "stop": auto.get("stop") or None,
        "calls": auto.get("calls"),
    }
    return {**data, "auto": record}


def _same(data: Line) -> Line:
    return data


# UPGRADES[v - 1] turns a metadata line of version v into one of version v + 1.
UPGRADES: tuple[Callable[[Line], Line], ...] = (_auto_v2, _same)
assert len(UPGRADES) == REPORT_SCHEMA_VERSION - 1


def version_of(data: Line, file: Path) -> int:
    """The schema version of a metadata line, one this gate reads."""
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or not 1 <= version <= REPORT_SCHEMA_VERSION:
        raise InputError(
            f"report schema version {version!r}: this gate reads versions 1 to "
            f"{REPORT_SCHEMA_VERSION} (a newer gate wrote it?)",
            file=file,
            line=1,
            key="schema_version",
        )
    return version


def upgrade_meta(data: Line, file: Path) -> Line:
    """A metadata line of any known version in the current version's shape."""
    for step in UPGRADES[version_of(data, file) - 1 :]:
        data = step(data)
    return {**data, "schema_version": REPORT_SCHEMA_VERSION}


def upgrade_case(data: Line, version: int) -> Line:
    """A case line of `version` in the current version's shape: its checks (and its
    attempts') with their kind and parts."""
    if version >= CHECKS_KNOWN_SINCE:
        return data
    attempts = data.get("attempts")
    if isinstance(attempts, list):
        attempts = [
            {**a, "checks": _checks(a.get("checks"))} if isinstance(a, dict) else a
            for a in attempts
        ]
    return {**data, "checks": _checks(data.get("checks")), "attempts": attempts or []}


def _checks(value: JsonValue) -> list[JsonValue]:
    if not isinstance(value, list):
        return []
    return [_check(c) if isinstance(c, dict) else c for c in value]


def _check(check: Line) -> Line:
    """A version 2 check result (`name`, `passed`, `detail`, `score`, `fraction`, `metric`,
    `scored`) as its kind's model."""
    name, detail = check.get("name"), check.get("detail")
    if not isinstance(name, str):
        return check  # refused by the model, with the line's number
    kept: Line = {"name": name, "passed": check.get("passed"), "detail": detail or ""}
    prefix, _, rest = name.partition(":")
    fraction = check.get("fraction")
    if prefix == "python" and "metric" not in check and "scored" not in check:
        return {**kept, "kind": "python", "target": rest, "fraction": fraction}
    if "metric" in check or "scored" in check or fraction is not None:
        return _promptfoo(kept, prefix, rest, check)
    if prefix in _PHRASES:
        return {**kept, "kind": prefix, "phrase": rest}
    if prefix == "rubric":
        return {**kept, **_judged(rest, str(detail or ""), check.get("score"))}
    if prefix in ("test", "hidden"):
        return {**kept, "kind": prefix, "test": rest}
    if prefix == "tool_call":
        place, _, tool = rest.partition(":")
        numbered = place.isdigit() and bool(tool)
        parts: Line = {"tool": tool, "position": int(place)} if numbered else {"tool": rest}
        return {**kept, "kind": "tool_call", **parts}
    if prefix in ("equals", "starts_with") or prefix in _PLAIN:
        return {**kept, "kind": prefix}
    return {**kept, "kind": prefix or "unknown"}


def _judged(dimension: str, detail: str, score: JsonValue) -> Line:
    """A rubric result's parts: `2/2 (meets minimum 1): reason`, or why the answer was unusable."""
    found = _JUDGED.match(detail)
    if found is None:
        return {"kind": "rubric", "dimension": dimension, "score": score, "reason": detail}
    return {
        "kind": "rubric",
        "dimension": dimension,
        "score": int(found.group(1)),
        "minimum": int(found.group(2)),
        "reason": found.group(3),
    }


def _promptfoo(kept: Line, prefix: str, rest: str, check: Line) -> Line:
    fraction = check.get("fraction")
    score = fraction if isinstance(fraction, int | float) else 0.0
    if prefix == "threshold" and "metric" not in check and not check.get("scored"):
        try:
            return {**kept, "kind": "threshold", "threshold": float(rest), "fraction": score}
        except ValueError:
            pass
    return {
        **kept,
        "kind": "assertion",
        "assertion": prefix.rpartition("/")[2],
        "fraction": score,
        "metric": check.get("metric"),
        "scored": bool(check.get("scored")),
    }
