"""Reports of older schema versions, read as the current one.

A report's metadata line names its `schema_version`; a line of an older version is upgraded
step by step to the current shape before it is validated, so every reader (compare, merge,
`gate run --append`) sees one shape. Case lines have not changed since version 1. A report of
a newer version than this gate knows is refused, never guessed at.

- 1 -> 2: `auto` held the plan's keys, `rounds`, `stop` ("" before the flow's end) and
  `calls` in one object; it is now `{plan: {...}, rounds, stop (null before the end), calls}`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from gate import REPORT_SCHEMA_VERSION
from gate.errors import InputError
from gate.report.plan import Plan

Meta = dict[str, Any]


def _auto_v2(data: Meta) -> Meta:
    auto = data.get("auto")
    if not isinstance(auto, dict):
        return data
    plan = {key: auto[key] for key in Plan.model_fields if key in auto}
    record = {
        "plan": plan,
        "rounds": auto.get("rounds", 0),
        "stop": auto.get("stop") or None,
        "calls": auto.get("calls"),
    }
    return {**data, "auto": record}


# UPGRADES[v - 1] turns a metadata line of version v into one of version v + 1.
UPGRADES: tuple[Callable[[Meta], Meta], ...] = (_auto_v2,)
assert len(UPGRADES) == REPORT_SCHEMA_VERSION - 1


def upgrade_meta(data: Meta, file: Path) -> Meta:
    """A metadata line of any known version in the current version's shape."""
    version = data.get("schema_version", 1)
    if not isinstance(version, int) or not 1 <= version <= REPORT_SCHEMA_VERSION:
        raise InputError(
            f"report schema version {version!r}: this gate reads versions 1 to "
            f"{REPORT_SCHEMA_VERSION} (a newer gate wrote it?)",
            file=file,
            line=1,
            key="schema_version",
        )
    for step in UPGRADES[version - 1 :]:
        data = step(data)
    return {**data, "schema_version": REPORT_SCHEMA_VERSION}
