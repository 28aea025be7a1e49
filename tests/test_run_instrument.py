"""A side's runner and the PR flow's rule, in-process on real projects: the code that judges
comes from the measure's `checks_root` (the base's checkout, for both sides), cases another
gate.yml adds are asked and marked, and recorded answers are judged again exactly as they were
given (`record`, then `answers`), priced by the measure's `prices`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.cli import ECHO_APP, Project

from gate.inputs.config import load_config
from gate.report.models import CaseResult
from gate.run.cases import added_cases, checked_cases, read_suite_cases
from gate.run.side import SideRunner, spec_of_config
from gate.run.spec import SideSpec

PYTHON = {"kind": "python", "target": "app:answer"}


def setup(project: Project, rows: list[dict], **config: object) -> None:
    project.write("app.py", ECHO_APP)
    project.cases("cases.jsonl", rows)
    project.config({"suites": [{"name": "s", "cases": "cases.jsonl", "system": PYTHON}], **config})


def spec(project: Project, **update: Any) -> SideSpec:
    loaded = load_config(project.root / "gate.yml")
    made = spec_of_config(
        loaded, loaded.config.suites[0], project.root, label="run", cache_dir=None,
        show_progress=False,
    )  # fmt: skip
    measure = update.pop("measure", {})
    return made.model_copy(update={**update, "measure": made.measure.model_copy(update=measure)})


def run(side: SideSpec, repeats: int = 1) -> dict[str, CaseResult]:
    found: dict[str, CaseResult] = {}
    with SideRunner(side) as runner:
        runner.run(None, repeats, lambda result: found.__setitem__(result.id, result))
    return found


def test_the_check_code_comes_from_the_checks_root(tmp_path: Path) -> None:
    """The same python check module in two checkouts: the one of `checks_root` judges,
    whatever `root` (the side whose system runs) holds."""
    side, judging = Project(tmp_path / "side"), Project(tmp_path / "judging")
    rows = [{"id": "a", "input": {"say": "hi"}, "expect": {"python": "grade:check"}}]
    setup(side, rows)
    side.write("grade.py", "def check(output, case):\n    return True\n")  # the PR's, lenient
    judging.write("grade.py", "def check(output, case):\n    return 'bye' in output['text']\n")
    assert run(spec(side, measure={"checks_root": judging.root}))["a"].status == "fail"
    assert run(spec(side))["a"].status == "pass"  # without it, the side's own code judges


def test_added_cases_are_asked_and_marked_and_unjudgeable_ones_left_out(tmp_path: Path) -> None:
    """Cases another gate.yml adds are asked and marked; those the measuring instrument cannot
    judge (check code it lacks, a rubric without its judge) are left out, not an error."""
    project = Project(tmp_path / "p")
    setup(project, [{"id": "a", "input": {"say": "x"}, "expect": {"must_include": ["x"]}}])
    head = Project(tmp_path / "head")
    head.cases(
        "cases.jsonl",
        [
            {"id": "a", "input": {"say": "other"}, "expect": {"must_include": ["nope"]}},
            {"id": "b", "input": {"say": "y"}, "expect": {"must_include": ["y"]}},
            {"id": "c", "input": {"say": "z"}, "expect": {"python": "only_on_head:check"}},
            {"id": "d", "input": {"say": "w"}, "expect": {"rubric": {"helpful": 2}}},
        ],
    )
    judge = {"kind": "openai", "model": "judge"}  # the head brings a judge; the base has none
    head.config(
        {"judge": judge, "suites": [{"name": "s", "cases": "cases.jsonl", "system": PYTHON}]}
    )
    base, theirs = load_config(project.root / "gate.yml"), load_config(head.root / "gate.yml")
    mine = checked_cases(base, base.config.suites[0])
    new = [c for c in read_suite_cases(theirs, theirs.config.suites[0]) if c.id != "a"]
    judged, unjudged = added_cases(new, base, project.root)
    assert [c.id for c in judged] == ["b"] and [c.id for c in unjudged] == ["c", "d"]
    found = run(spec(project, measure={"cases": (*mine, *judged)}))
    assert sorted(found) == ["a", "b"]
    assert found["a"].added is False and found["a"].status == "pass"  # a: the base's
    assert found["b"].added is True and found["b"].file == "cases.jsonl"


def test_recorded_answers_are_judged_again_exactly(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    rows = [
        {"id": f"c{i}", "input": {"say": f"word{i}"}, "expect": {"must_include": [f"word{i}"]}}
        for i in range(4)
    ]
    setup(project, rows, prices={"echo": {"input": 1000.0, "output": 1000.0}})
    record = tmp_path / "answers.jsonl"
    run(spec(project, record=record), repeats=2)
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(recorded) == 8 and {r["repeat"] for r in recorded} == {0, 1}
    # The recording claims the answers came from a priced model; drop one run of c3.
    kept = [{**r, "model": "echo"} for r in recorded if (r["id"], r["repeat"]) != ("c3", 1)]
    record.write_text("".join(json.dumps(r) + "\n" for r in kept))
    stricter = [{**r, "expect": {"must_include": ["word0"]}} for r in rows]
    project.cases("cases.jsonl", stricter)  # another instrument, the same answers
    measuring = spec(project)
    chosen = tuple(c for c in measuring.measure.cases if c.id in ("c0", "c1", "c3"))
    again = run(spec(project, answers=record, measure={"cases": chosen}), repeats=2)
    assert sorted(again) == ["c0", "c1", "c3"]  # only the measured cases
    assert again["c0"].status == "pass" and again["c1"].status == "fail"
    runs = [a.status for a in again["c3"].attempts]
    assert runs == ["fail", "error"]  # run 1 was never recorded: an error, not run 0's answer
    assert "no recorded answer for run 1 of case 'c3'" in (again["c3"].error or "")
    assert again["c0"].cost_usd == 2 * (3 + 2) * 1000 / 1_000_000  # priced by this run
