"""`gate run`'s parts of the PR flow's rule, each through the real CLI: the code that judges
comes from `--checks-root` (the base's checkout, for both sides), cases another gate.yml adds
are asked and marked (`--added-cases`), and recorded answers are judged again exactly as they
were given (`--record`, then `--answers` with `--cases-from`), priced by the run's `prices`."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import ECHO_APP, Project, run_gate

PYTHON = {"kind": "python", "target": "app:answer"}


def setup(project: Project, rows: list[dict], **config: object) -> None:
    project.write("app.py", ECHO_APP)
    project.cases("cases.jsonl", rows)
    project.config({"suites": [{"name": "s", "cases": "cases.jsonl", "system": PYTHON}], **config})


def lines(project: Project, label: str = "run") -> dict[str, dict]:
    _, rows, _ = project.read_report(label=label)
    return {r["id"]: r for r in rows}


def test_the_check_code_comes_from_the_checks_root(tmp_path: Path) -> None:
    """The same python check module in two checkouts: the one of `--checks-root` judges,
    whatever `--root` (the side whose system runs) holds."""
    side, judging = Project(tmp_path / "side"), Project(tmp_path / "judging")
    rows = [{"id": "a", "input": {"say": "hi"}, "expect": {"python": "grade:check"}}]
    setup(side, rows)
    side.write("grade.py", "def check(output, case):\n    return True\n")  # the PR's, lenient
    judging.write("grade.py", "def check(output, case):\n    return 'bye' in output['text']\n")
    done = run_gate("run", "-q", "--checks-root", str(judging.root), cwd=side.root)
    assert done.code == 0, done.err
    assert lines(side)["a"]["status"] == "fail"
    assert run_gate("run", "-q", cwd=side.root).code == 0
    assert lines(side)["a"]["status"] == "pass"  # without it, the side's own code judges


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
    done = run_gate("run", "-q", "--added-cases", str(head.root / "gate.yml"), cwd=project.root)
    assert done.code == 0, done.err
    found = lines(project)
    assert sorted(found) == ["a", "b"]  # c's check code is not here, d's judge neither
    assert found["a"]["added"] is False and found["a"]["status"] == "pass"  # a: the base's
    assert found["b"]["added"] is True and found["b"]["file"] == "cases.jsonl"


def test_recorded_answers_are_judged_again_exactly(tmp_path: Path) -> None:
    project = Project(tmp_path / "p")
    rows = [
        {"id": f"c{i}", "input": {"say": f"word{i}"}, "expect": {"must_include": [f"word{i}"]}}
        for i in range(4)
    ]
    setup(project, rows, prices={"echo": {"input": 1000.0, "output": 1000.0}})
    record = tmp_path / "answers.jsonl"
    assert (
        run_gate("run", "-q", "--repeats", "2", "--record", str(record), cwd=project.root).code == 0
    )
    recorded = [json.loads(line) for line in record.read_text().splitlines()]
    assert len(recorded) == 8 and {r["repeat"] for r in recorded} == {0, 1}
    # The recording claims the answers came from a priced model; drop one run of c3.
    kept = [{**r, "model": "echo"} for r in recorded if (r["id"], r["repeat"]) != ("c3", 1)]
    record.write_text("".join(json.dumps(r) + "\n" for r in kept))
    listing = tmp_path / "ids.txt"
    listing.write_text("c0\nc1\nc3\n")
    stricter = [{**r, "expect": {"must_include": ["word0"]}} for r in rows]
    project.cases("cases.jsonl", stricter)  # another instrument, the same answers
    done = run_gate(
        "run", "-q", "--answers", str(record), "--cases-from", str(listing), "--repeats", "2",
        "--label", "again", cwd=project.root,
    )  # fmt: skip
    assert done.code == 0, done.err
    again = lines(project, "again")
    assert sorted(again) == ["c0", "c1", "c3"]  # only the listed cases
    assert again["c0"]["status"] == "pass" and again["c1"]["status"] == "fail"
    runs = [a["status"] for a in again["c3"]["attempts"]]
    assert runs == ["fail", "error"]  # run 1 was never recorded: an error, not run 0's answer
    assert "no recorded answer for run 1 of case 'c3'" in again["c3"]["error"]
    assert again["c0"]["cost_usd"] == 2 * (3 + 2) * 1000 / 1_000_000  # priced by this run
