"""The flow's plan and its sides: the policy is built once per flow, from the base's gate.yml,
and a side's `gate run` command line carries its typed fields, read back by `gate run` itself."""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.flows import check as check_flow
from helpers.noisy_world import commit, make_repo, model_json
from hypothesis import given
from hypothesis import strategies as st

from gate.flow import baseline as baseline_module
from gate.flow import plan as plan_module
from gate.flow import pr
from gate.flow import reports as reports_module
from gate.flow import sides as sides_module
from gate.inputs import config as config_module
from gate.inputs.cases import Case
from gate.inputs.config import PythonSystem
from gate.run.spec import Measure, OwnSystem, SideSpec

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
    outcomes = check_flow(
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
names = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=20)


@given(
    root=paths,
    suite=names,
    label=names.filter(bool),
    checks_root=paths,
    cache_dir=st.none() | paths,
    shard=st.none() | st.integers(1, 9).map(lambda n: f"{n}/9"),
    use_cache=st.booleans(),
    record=st.none() | paths,
    answers=st.none() | paths,
    repeats=st.integers(1, 9),
)
def test_a_side_reaches_its_runner_whole(
    root: Path,
    suite: str,
    label: str,
    checks_root: Path,
    cache_dir: Path | None,
    shard: str | None,
    use_cache: bool,
    record: Path | None,
    answers: Path | None,
    repeats: int,
) -> None:
    """The runner reads back the side the flow wrote, every field (a suite named `--` or
    `-x`, any path) as it was: one typed value, no command line in between."""
    case = Case(id="c1", task="t", input={"q": "?"}, expect={"must_include": ["x"]})
    spec = SideSpec(
        label=label,
        suite=suite,
        side="head",
        root=root,
        measure=Measure(cases=(case,), checks_root=checks_root, repeats=repeats),
        own=OwnSystem(system=PythonSystem(kind="python", target="app:answer")),
        cache_dir=cache_dir,
        use_cache=use_cache,
        shard=shard,
        record=record,
        answers=answers,
    )
    assert SideSpec.model_validate_json(spec.model_dump_json(by_alias=True)) == spec


def test_a_repeats_auto_suite_starts_one_runner_per_side_and_writes_each_report_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 0 and every round of `repeats: auto` are requests to the same two runner
    processes; each side's report is written once, by the flow; every gate.yml is parsed
    once per commit (the head's and the base's), and never in a runner."""
    repo = make_repo(tmp_path / "repo", IDS, {})
    (repo / "gate.yml").write_text(one_suite())
    commit(repo, "one suite")
    (repo / "model.json").write_text(model_json({i: 0.5 for i in IDS[:6]}))
    commit(repo, "six cases turn flaky")
    trace = tmp_path / "trace.jsonl"
    monkeypatch.setattr(sides_module, "runner_argv", traced_runner(trace))
    writes = counted(monkeypatch, reports_module, "write_report")
    parsed_head = counted(monkeypatch, config_module, "read_config")
    parsed_base = counted(monkeypatch, baseline_module, "read_config")
    log = io.StringIO()
    (outcome,) = check_flow(
        repo, repo / "gate.yml", "HEAD~1", tmp_path / "out", stream=log,
        environ={**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    rounds = outcome.comparison.head_meta.auto.rounds  # type: ignore[union-attr]
    assert rounds >= 1, log.getvalue()  # the flaky cases got more runs
    runners = [json.loads(line) for line in trace.read_text().splitlines()]
    assert sorted(r["label"] for r in runners) == ["base", "head"]
    assert all(r["requests"] == rounds + 1 and r["parsed"] == 0 for r in runners)
    written = [str(args[0]) for args in writes]
    assert sorted(Path(p).name for p in written) == ["base.jsonl", "head.jsonl"]
    assert (len(parsed_head), len(parsed_base)) == (1, 1)  # the head's and the base's


def one_suite() -> str:
    suite = {
        "name": "main",
        "cases": "cases.jsonl",
        "system": {"kind": "python", "target": "app:answer"},
    }
    return json.dumps({"watch": ["model.json"], "repeats": "auto", "suites": [suite]}) + "\n"


TRACED_RUNNER = """
import json, sys
import gate.inputs.config as config
import gate.run.serve as serve
from gate.run.protocol import REQUEST

parsed, requests, label = [], [], []
real_read = config.read_config
config.read_config = lambda *a, **k: parsed.append(1) or real_read(*a, **k)
real_validate = REQUEST.validate_json
class Counting:
    def validate_json(self, line):
        requests.append(line)
        return real_validate(line)
serve.REQUEST = Counting()
real_spec = serve.SideSpec.model_validate_json
serve.SideSpec = type("S", (), {"model_validate_json": staticmethod(
    lambda raw: label.append(json.loads(raw)["label"]) or real_spec(raw))})
code = serve.main(sys.argv[2:])
with open(sys.argv[1], "a") as out:
    close = sum('"close"' in r for r in requests)
    out.write(json.dumps({"label": label[0], "requests": len(requests) - close,
                          "parsed": len(parsed)}) + "\\n")
sys.exit(code)
"""


def traced_runner(trace: Path) -> Callable[[int, int, object], list[str]]:
    """The flow's runner command, wrapped: each runner appends its label, how many run
    requests it answered and how many configs it parsed to `trace`."""
    script = trace.with_suffix(".py")
    script.write_text(TRACED_RUNNER)

    def argv(requests: int, records: int, env: object) -> list[str]:
        return [sys.executable, "-I", str(script), str(trace), str(requests), str(records)]

    return argv
