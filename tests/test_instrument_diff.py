"""What the head changes in a suite's instrument, key by key and case by case."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gate.compare import findings as f
from gate.flow.instrument_diff import SuiteDefinition, case_changes, changes_judging, config_changes
from gate.inputs.cases import parse_case
from gate.inputs.config import read_config

SUITE = {"name": "s", "cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}}


def side(tmp_path: Path, **keys: Any) -> SuiteDefinition:
    suite = {**SUITE, **keys.pop("suite", {})}
    loaded = read_config(yaml.safe_dump({**keys, "suites": [suite]}), tmp_path / "gate.yml")
    return SuiteDefinition(loaded, loaded.config.suites[0], [], tmp_path)


def case(id: str, **fields: Any):  # type: ignore[no-untyped-def]
    data = {"id": id, "input": {"q": id}, "expect": {"must_include": ["x"]}, **fields}
    return parse_case(data, file=Path("c.jsonl"), display="c.jsonl", line=1)


def test_the_measuring_keys_that_differ_and_only_those(tmp_path: Path) -> None:
    base = side(
        tmp_path,
        watch=["prompts/**", "config/*.yaml"],
        prices={"a": {"input": 1, "output": 2}},
        judge={"model": "gpt-4o", "headers": {"X-Key": "secret-one"}},
        sandbox={"timeout_s": 5, "pythonpath": ["sdk"]},
    )
    head = side(
        tmp_path,
        watch=["config/*.yaml", "!config/local.yaml"],
        prices={"a": {"input": 1, "output": 2}, "b": {"input": 0, "output": 0}},
        judge={"model": "gpt-4o", "headers": {"X-Key": "secret-two"}},  # same names, new value
        sandbox={"timeout_s": 60, "pythonpath": ["other"], "prelude": "import x"},
        suite={"system": {"kind": "command", "command": ["./run"]}},
    )
    found = {type(x): x for x in config_changes(base, head)}
    assert set(found) == {
        f.WatchNarrowed, f.PricesChanged, f.SandboxLimitsChanged, f.SystemChanged,
    }  # fmt: skip
    watch = found[f.WatchNarrowed]
    assert isinstance(watch, f.WatchNarrowed)
    assert watch.removed == ["prompts/**"] and watch.excluded == ["!config/local.yaml"]
    limits = found[f.SandboxLimitsChanged]
    assert isinstance(limits, f.SandboxLimitsChanged)
    assert [(c.key, c.base, c.head) for c in limits.changes] == [("timeout_s", 5.0, 60.0)]
    prices = found[f.PricesChanged]
    assert isinstance(prices, f.PricesChanged) and [c.model for c in prices.changes] == ["b"]
    renamed = config_changes(base, side(tmp_path, judge={"model": "gpt-4o", "headers": {"Y": "v"}}))
    (judge,) = [x for x in renamed if isinstance(x, f.JudgeChanged)]
    assert [(c.key, c.base, c.head) for c in judge.changes] == [("headers", ["X-Key"], ["Y"])]
    assert "secret" not in judge.model_dump_json()  # a header's value may be a secret


def test_cases_by_id() -> None:
    base = [case("a"), case("b", severity="blocker"), case("c"), case("d", heldout=True)]
    head = [
        case("a", expect={"must_include": ["y"]}),
        case("b", severity="minor"),
        case("d", task="other"),
        case("e"),
    ]
    found = case_changes(base, head, unjudged=["e"])
    kinds = [type(x) for x in found]
    assert kinds == [
        f.CasesRemoved, f.CasesAdded, f.CasesEdited, f.CasesEdited, f.SeveritiesChanged,
        f.HeldoutChanged,
    ]  # fmt: skip
    removed, added, expect, task, severities, heldout = found
    assert isinstance(removed, f.CasesRemoved) and removed.ids == ["c"]
    assert isinstance(added, f.CasesAdded) and (added.ids, added.unjudged) == (["e"], ["e"])
    assert isinstance(expect, f.CasesEdited) and (expect.field, expect.ids) == ("expect", ["a"])
    assert isinstance(task, f.CasesEdited) and (task.field, task.ids) == ("task", ["d"])
    assert isinstance(severities, f.SeveritiesChanged)
    assert [(c.id, c.base, c.head) for c in severities.changes] == [("b", "blocker", "minor")]
    assert isinstance(heldout, f.HeldoutChanged) and heldout.shown == ["d"]
    assert changes_judging(found) and not changes_judging([heldout])
    assert case_changes(base, base, unjudged=[]) == []
