"""The parts of inspect and pytest suites below the flow: gate.yml's keys, scores as pass and
fail, the run folder (the side's checkout with the base's instrument), what a PR changes in
the instrument, and the confinement of the tests' process (real pytest, through `gate run`)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from helpers.cli import run_gate
from hypothesis import given
from hypothesis import strategies as st

from gate.errors import InputError
from gate.frameworks import FrameworkSide, FrameworkSuite, instrument_changes
from gate.frameworks.instrument import default_globs, pytest_config
from gate.frameworks.overlay import build_overlay
from gate.frameworks.scores import Unscorable, passes, score_checks
from gate.inputs.config import load_config, read_config
from gate.inputs.framework_suites import InspectSuite, PytestSuite
from gate.report.models import CaseResult
from gate.run.side import SideRunner, spec_of_config


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


# --- gate.yml -------------------------------------------------------------------------------


def test_a_framework_suite_stands_for_its_system(tmp_path: Path) -> None:
    text = """
suites:
  - name: evals
    inspect: {task: evals/support.py@support, model: openai/gpt-4o-mini, pass: 0.7}
    instrument: ["evals/**"]
  - name: unit
    pytest: {args: [tests/evals, -k, "not slow"]}
"""
    loaded = read_config(text, tmp_path / "gate.yml")
    evals, unit = loaded.config.suites
    assert evals.system.kind == "inspect" and evals.system.model == "openai/gpt-4o-mini"
    assert evals.inspect is not None and evals.inspect.pass_ == 0.7
    assert unit.framework == "pytest" and unit.pytest is not None
    assert unit.pytest.paths == ["tests/evals"]


@pytest.mark.parametrize(
    ("suite", "message"),
    [
        (
            "{name: e, inspect: {task: t.py}, system: {kind: python, target: a:b}}",
            "takes no `system`",
        ),
        ("{name: e, pytest: {args: [t]}, cases: c.jsonl}", "takes no `cases`"),
        ("{name: e, inspect: {task: t.yaml}}", "task must name a Python file"),
        ("{name: e, pytest: {args: [t, --lf]}}", "'--lf' is the gate's to set"),
        (
            "{name: e, cases: c.jsonl, system: {kind: python, target: a:b}, instrument: [x]}",
            "`instrument` is for",
        ),
    ],
)
def test_bad_framework_suites_name_the_file_and_line(
    tmp_path: Path, suite: str, message: str
) -> None:
    with pytest.raises(InputError) as caught:
        read_config(f"threshold: 3\nsuites:\n  - {suite}\n", tmp_path / "gate.yml")
    assert message in str(caught.value) and "gate.yml:3" in str(caught.value)


# --- scores ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "wanted", "passed"),
    [
        ("C", "C", True), ("I", "C", False), ("P", "C", False), ("P", "P", True),
        ("N", "P", False), (True, "C", True), (False, True, False), (0.8, 0.7, True),
        (0.6, 0.7, False), (1, "C", True), ("0.9", 0.9, True), ("yes", "yes", True),
        ("no", "yes", False), (0.5, "P", True),
    ],
)  # fmt: skip
def test_scores_map_to_pass_and_fail(
    value: object, wanted: str | float | bool, passed: bool
) -> None:
    assert passes(value, wanted) is passed


@pytest.mark.parametrize(
    ("value", "wanted"), [([1, 2], "C"), ({"a": 1}, 0.5), ("maybe", "C"), (1, "yes")]
)
def test_a_score_the_gate_cannot_read_is_an_error_never_a_fail(value: object, wanted: str) -> None:
    with pytest.raises(Unscorable):
        passes(value, wanted)


@given(st.floats(0, 1), st.floats(0, 1))
def test_a_number_passes_exactly_at_its_threshold(value: float, bar: float) -> None:
    assert passes(value, bar) is (value >= bar)


class _Score:
    def __init__(self, value: object, explanation: str = "") -> None:
        self.value, self.explanation = value, explanation


def test_every_scorer_decides_unless_one_is_named() -> None:
    scores = {"match": _Score("C"), "model_graded": _Score("I", "off topic")}
    checks = score_checks(scores, "C", None)
    assert [(c.name, c.passed) for c in checks] == [
        ("score:match", True),
        ("score:model_graded", False),
    ]
    assert "off topic" in checks[1].detail and checks[1].fraction == 0.0
    assert [c.passed for c in score_checks(scores, "C", "match")] == [True]
    with pytest.raises(Unscorable, match="no score from scorer 'other'"):
        score_checks(scores, "C", "other")
    with pytest.raises(Unscorable, match="unscored"):
        score_checks({}, "C", None)
    with pytest.raises(Unscorable, match="gave no value"):
        score_checks({"match": _Score(None)}, "C", None)


# --- the instrument and the run folder -------------------------------------------------------


def test_default_instruments() -> None:
    assert default_globs(InspectSuite(task="evals/support.py@support")) == ["evals/**"]
    assert default_globs(InspectSuite(task="task.py")) == ["task.py"]
    globs = default_globs(PytestSuite(args=["tests/evals", "tests/test_x.py::test_a", "-k", "x"]))
    assert globs == [
        "tests/evals/**", "tests/evals/conftest.py", "tests/conftest.py", "conftest.py",
        "tests/test_x.py",
    ]  # fmt: skip


def test_the_run_folder_is_the_sides_code_with_the_bases_instrument(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    write(base, {"tests/evals/test_a.py": "base test", "app/bot.py": "base bot"})
    write(head, {
        "tests/evals/test_a.py": "loosened test", "tests/evals/conftest.py": "planted",
        "app/bot.py": "head bot", "app/data.txt": "head data",
    })  # fmt: skip
    (head / "elsewhere").mkdir()
    (head / "tests" / "other").symlink_to(head / "elsewhere")  # a symlinked folder on the way
    write(base, {"tests/other/conftest.py": "base's other conftest"})
    globs = ["tests/**"]
    run = build_overlay(head, base, globs, tmp_path / "run")
    assert (run / "tests/evals/test_a.py").read_text() == "base test"
    assert not (run / "tests/evals/conftest.py").exists()  # the PR's addition is gone
    assert (run / "app/bot.py").read_text() == "head bot" and (run / "app/data.txt").is_file()
    assert not (run / "tests/other").is_symlink()
    assert (run / "tests/other/conftest.py").read_text() == "base's other conftest"
    assert not (head / "elsewhere" / "conftest.py").exists()  # nothing written through the link
    assert (head / "tests/evals/conftest.py").read_text() == "planted"  # the checkout untouched


def test_what_a_pr_changes_in_the_instrument(tmp_path: Path) -> None:
    base, head = tmp_path / "base", tmp_path / "head"
    pyproject = '[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q"\n'
    write(base, {"tests/test_a.py": "a", "app/x.py": "1", "pyproject.toml": pyproject})
    write(
        head,
        {
            "tests/test_a.py": "a",
            "app/x.py": "2",
            "pyproject.toml": pyproject.replace('"x"', '"y"'),
        },
    )
    text = "suites:\n  - {name: u, pytest: {args: [tests]}}\n"
    suite = read_config(text, tmp_path / "gate.yml").config.suites[0]
    assert not instrument_changes(base, head, suite, suite)  # system code and metadata only
    write(
        head,
        {
            "pyproject.toml": pyproject.replace("-q", "--deselect tests/test_a.py"),
            "tests/conftest.py": "x",
        },
    )
    other = read_config(text.replace("[tests]", "[tests, -k, easy]"), tmp_path / "gate.yml")
    changes = instrument_changes(base, head, suite, other.config.suites[0])
    assert changes.files == ["tests/conftest.py", "pyproject.toml (pytest's options)"]
    assert changes.settings == [("pytest.args", ["tests"], ["tests", "-k", "easy"])]
    assert pytest_config(base, ["tests"]) == (
        "pyproject.toml",
        repr({"ini_options": {"addopts": "-q"}}),
    )


# --- the tests' process ------------------------------------------------------------------------

PROBE = """
import json, os, pathlib


def test_probe():
    found = {"uid": os.getuid(), "cwd": os.getcwd(), "token": os.environ.get("GITHUB_TOKEN")}
    try:
        pathlib.Path("tests/test_probe.py").write_text("def test_probe(): pass")
        found["rewrote_test"] = True
    except OSError:
        found["rewrote_test"] = False
    print("PROBE " + json.dumps(found))
    # a forged answer on stdout: the gate reads its answer elsewhere
    print(json.dumps({"collected": [], "results": {}, "errors": []}))
    assert False, "the measurement says no"
"""


FORGED = 'def answer(request):\n    return {"collected": [], "results": {}, "errors": []}\n'


def test_the_tests_run_confined_and_cannot_forge_their_result(tmp_path: Path) -> None:
    """The checkout's modules named as the gate's runner, or as what it imports, stand in for
    neither: the run folder holds no module of the runner's name, and the runner imports
    pytest before the checkout is on its import path."""
    write(
        tmp_path,
        {
            "tests/test_probe.py": PROBE,
            "gate.yml": "suites:\n  - {name: u, pytest: {args: [tests]}}\n",
            "_eval_gate_pytest_runner.py": FORGED,
            "_pytest/__init__.py": "raise SystemExit('the PR pytest')\n",
        },
    )
    env = {"GITHUB_TOKEN": "ghs_theGatesOwnToken", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    done = run_gate(
        "run", "-c", "gate.yml", "--out", "reports", "--label", "side", cwd=tmp_path, env=env
    )
    assert done.code == 0, done.err
    (line,) = (tmp_path / "reports/side.jsonl").read_text().splitlines()[1:]
    result = json.loads(line)
    assert result["status"] == "fail" and "the measurement says no" in result["checks"][0]["detail"]
    probe = json.loads(result["output"].split("PROBE ", 1)[1].splitlines()[0])
    assert probe["token"] is None  # the gate's credentials never reach the tests
    assert probe["cwd"] != str(tmp_path)  # a private copy, not the checkout
    assert (tmp_path / "tests/test_probe.py").read_text() == PROBE
    assert (tmp_path / "_eval_gate_pytest_runner.py").read_text() == FORGED  # left where it was
    if os.geteuid() == 0:  # as root: the system's own uid, which cannot rewrite the tests
        assert probe["uid"] != 0 and probe["rewrote_test"] is False


SUITE = """
import pytest


@pytest.mark.parametrize("n", range(12))
def test_number(n):
    assert n % 5
"""


def test_shards_split_the_tests_and_a_side_lists_them_all(tmp_path: Path) -> None:
    write(
        tmp_path,
        {"tests/test_n.py": SUITE, "gate.yml": "suites:\n  - {name: u, pytest: {args: [tests]}}\n"},
    )
    env = {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    ids: list[set[str]] = []
    for shard in ("1/2", "2/2"):
        label = f"shard{shard[0]}"
        done = run_gate(
            "run",
            "-c",
            "gate.yml",
            "--shard",
            shard,
            "--label",
            label,
            "--out",
            "r",
            cwd=tmp_path,
            env=env,
        )
        assert done.code == 0, done.err
        lines = (tmp_path / "r" / f"{label}.jsonl").read_text().splitlines()[1:]
        ids.append({json.loads(line)["id"] for line in lines})
    every = {f"tests/test_n.py::test_number[{n}]" for n in range(12)}
    assert ids[0] | ids[1] == every and not ids[0] & ids[1] and ids[0] and ids[1]
    config = read_config((tmp_path / "gate.yml").read_text(), tmp_path / "gate.yml")
    suite = config.config.suites[0]
    with FrameworkSide(FrameworkSuite.of(suite), suite.system, tmp_path, tmp_path, env) as side:
        listed = side.cases
    assert [c.id for c in listed] == [f"tests/test_n.py::test_number[{n}]" for n in range(12)]
    assert listed[0].file == "tests/test_n.py" and listed[0].task == "test_n"


COUNTED = """
import os

RUNS = []


def test_counted():
    RUNS.append(1)
    print(f"pid {os.getpid()} run {len(RUNS)}")
    assert len(RUNS) % 2, "every second run fails"
"""


def test_a_side_runs_more_of_some_cases_in_the_same_process(tmp_path: Path) -> None:
    """The side's runner opens the framework once (its run folder and process) and answers
    every request there: round 0 and the rounds of `repeats: auto` ask the same way, and a
    case's runs are numbered after the runs it had."""
    write(
        tmp_path,
        {
            "tests/test_counted.py": COUNTED,
            "tests/test_other.py": "def test_other():\n    pass\n",
            "gate.yml": "suites:\n  - {name: u, pytest: {args: [tests]}}\n",
        },
    )
    loaded = load_config(tmp_path / "gate.yml")
    spec = spec_of_config(
        loaded, loaded.config.suites[0], tmp_path, label="side", cache_dir=None, show_progress=False
    )
    assert spec.measure.framework is not None and not spec.measure.cases
    counted = "tests/test_counted.py::test_counted"
    results: list[CaseResult] = []
    with SideRunner(spec, dict(os.environ)) as runner:
        assert runner.meta is not None and runner.meta.suite_size == 2
        runner.run(None, 1, results.append)
        runner.run([counted], 2, results.append)
    first, again = results[0], results[-1]
    assert [r.id for r in results] == [counted, "tests/test_other.py::test_other", counted]
    assert (first.repeats, again.repeats) == (1, 3)
    assert [a.repeat for a in again.attempts] == [0, 1, 2]
    assert [a.status for a in again.attempts] == ["pass", "fail", "pass"]
    pids = {(a.output or "").split()[1] for a in again.attempts}
    assert len(pids) == 1  # one framework process for the side
    with (
        pytest.raises(InputError, match="not in the suite"),
        SideRunner(spec, dict(os.environ)) as runner,
    ):
        runner.run(["tests/test_counted.py::nothing"], 1, results.append)
