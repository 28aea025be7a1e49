"""The flow's plan and its sides: the policy is built once per flow, from the base's gate.yml,
and a side's `gate run` command line carries its typed fields, read back by `gate run` itself."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.noisy_world import commit, make_repo, model_json
from hypothesis import given
from hypothesis import strategies as st

from gate.cli import build_parser
from gate.flow import plan as plan_module
from gate.flow import pr
from gate.flow.sides import MoreRuns, Side, gate_run_args
from gate.inputs.shard import Shard

IDS = [f"c{i:02d}" for i in range(20)]
SUITES = ("first", "second")


def two_suites(**keys: Any) -> str:
    suites = [
        {"name": n, "cases": "cases.jsonl", "system": {"kind": "python", "target": "app:answer"}}
        for n in SUITES
    ]
    config = {"watch": ["model.json"], "concurrency": 4, "repeats": "auto", **keys}
    return json.dumps({**config, "suites": suites}, indent=1) + "\n"


def counted(monkeypatch: pytest.MonkeyPatch, module: object, name: str) -> list[object]:
    """Calls of the real `module.name`, recorded as they happen."""
    real: Callable[..., Any] = getattr(module, name)
    calls: list[object] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return calls


def test_the_bases_policy_is_built_once_and_judges_every_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two suites, `repeats: auto` (the rounds judge by the policy too), a base gate.yml whose
    threshold is 1 and a head's that would let a 15-point drop through: both suites fail by
    the base's policy, which the one planning step built once."""
    repo = make_repo(tmp_path / "repo", IDS, {})
    (repo / "gate.yml").write_text(two_suites(threshold=1))
    commit(repo, "two suites")
    (repo / "gate.yml").write_text(two_suites(threshold=50))
    (repo / "model.json").write_text(model_json({i: 0.0 for i in IDS[:3]}))
    commit(repo, "three cases break; a laxer threshold")
    plans = counted(monkeypatch, pr, "plan_flow")
    policies = counted(monkeypatch, plan_module, "flow_policy")
    log = io.StringIO()
    outcomes = pr.run_check(
        repo, repo / "gate.yml", "HEAD~1", tmp_path / "out", stream=log,
        environ={**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    assert [o.suite for o in outcomes] == list(SUITES)
    assert [o.comparison.verdict for o in outcomes] == ["fail", "fail"]
    assert all(o.comparison.policy.threshold == 1 for o in outcomes)
    assert all(o.comparison.delta_points == pytest.approx(-15.0) for o in outcomes)
    assert all("threshold: 1 → 50" in o.markdown for o in outcomes)  # the head's: a note
    assert log.getvalue().count("repeats auto: ") == 2  # both suites ran their rounds
    assert len(plans) == 1 and len(policies) == 1


paths = st.lists(
    st.text(st.characters(codec="utf-8", exclude_characters="/\x00"), min_size=1, max_size=12),
    min_size=1,
    max_size=3,
).map(lambda parts: Path("/", *parts))


@given(
    root=paths,
    config=paths,
    suite=st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20).filter(
        lambda name: name != "--"  # gate.yml refuses it: argparse drops a `--` value
    ),
    # the flow's labels are `base`, `head` and their shards': never `--`, which argparse
    # before Python 3.11.9 reads as no value even in `--label=--`
    report=paths.filter(lambda path: path.name != "--"),
    system_config=st.none() | paths,
    heldout=st.none() | paths,
    shard=st.none() | st.integers(1, 9).map(lambda n: Shard(n, 9)),
    use_cache=st.booleans(),
    more=st.none() | st.builds(MoreRuns, cases_from=paths, repeats=st.integers(1, 50)),
    extra=st.fixed_dictionaries(
        {},
        optional={
            "checks_root": paths,
            "added_cases": paths,
            "cache_dir": paths,
            "record": paths,
            "answers": paths,
            "cases_from": paths,
            "repeats": st.integers(1, 9),
        },
    ),
)
def test_a_sides_command_line_is_its_fields(
    root: Path,
    config: Path,
    suite: str,
    report: Path,
    system_config: Path | None,
    heldout: Path | None,
    shard: Shard | None,
    use_cache: bool,
    more: MoreRuns | None,
    extra: dict[str, Any],
) -> None:
    """`gate run`'s own parser reads back every field (a suite named `-x` included); a round
    of `repeats: auto` neither records answers nor takes round 0's case list or repeats."""
    report = report.with_name(report.name + ".jsonl")
    side = Side(
        "base", root, config, suite, report, system_config=system_config,
        heldout_detail=heldout, shard=shard, use_cache=use_cache, **extra,
    )  # fmt: skip
    args = build_parser("run").parse_args(gate_run_args(side, more))
    assert (args.command, Path(args.root), Path(args.config)) == ("run", root, config)
    assert args.suite == suite
    assert Path(args.out) / f"{args.label}.jsonl" == report
    assert (args.system_config and Path(args.system_config)) == system_config
    assert (args.heldout_detail and Path(args.heldout_detail)) == heldout
    assert (args.shard and Shard.parse(args.shard)) == shard
    assert args.no_cache is not use_cache
    for name in ("checks_root", "added_cases", "cache_dir", "answers"):
        assert (getattr(args, name) and Path(getattr(args, name))) == extra.get(name)
    assert args.append is (more is not None)
    if more is None:
        assert (args.record and Path(args.record)) == extra.get("record")
        assert (args.cases_from and Path(args.cases_from)) == extra.get("cases_from")
        assert args.repeats == extra.get("repeats")
    else:
        assert args.record is None
        assert Path(args.cases_from) == more.cases_from and args.repeats == more.repeats
