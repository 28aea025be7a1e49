"""inspect_ai and pytest suites through the real `gate check` flow on real repositories.

The project (`helpers.framework_projects`) keeps its evals as a pytest suite and an inspect_ai
task; its system is `app/`. Each PR here is a real working tree against `main`: a regression
of the prompt fails both suites and names the failing test and sample with base and head
outputs, a PR that changes nothing that measures passes, a PR that loosens a test or a scorer
is measured by the base's version and the comment names the edit, and epochs and repeats feed
the same statistics as native cases. inspect runs for real, against the model server stand-in
(an OpenAI-compatible endpoint on 127.0.0.1), so those tests need the `inspect` extra.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.flows import Shown, rendered
from helpers.framework_projects import (
    LOOSE_SCORER,
    TESTS,
    WORDS,
    drop,
    files,
    needs_inspect,
    samples,
)
from helpers.pr_scenarios import make_project, visible
from helpers.servers.git_http import Author
from helpers.servers.model_server import ModelServer

from gate.compare import findings as f
from gate.flow.pr import FlowOutcome, run_check
from gate.render.reasons import sentence

FEES_TEST = "tests/evals/test_support.py::test_mentions[fees]"


@pytest.fixture
def model(server: ModelServer) -> ModelServer:
    return server


def environ(root: Path, model: ModelServer | None = None) -> dict[str, str]:
    env = {**os.environ, "GATE_CACHE_DIR": str(root.parent / "cache")}
    if model is not None:
        env |= {"OPENAI_BASE_URL": model.openai_base_url, "OPENAI_API_KEY": "sk-test"}
    return env


def check(project: Author, model: ModelServer | None = None) -> FlowOutcome:
    root = project.path
    return run_check(
        root, root / "gate.yml", "main", root / "reports", stream=io.StringIO(),
        environ=environ(root, model),
    )  # fmt: skip


def exit_code(flow: FlowOutcome) -> int:
    return flow.exit_code


def suite(flow: FlowOutcome, name: str) -> Shown:
    """The suite's outcome with its comment, as `gate check` renders it."""
    return next(shown for shown in rendered(flow) if shown.suite == name)


def changed_instrument(outcome: Shown) -> f.InstrumentFilesChanged:
    found = [x for x in outcome.comparison.findings if isinstance(x, f.InstrumentFilesChanged)]
    assert found, [x.kind for x in outcome.comparison.findings]
    return found[0]


# --- pytest ---------------------------------------------------------------------------------


@pytest.fixture
def tests_project(tmp_path: Path) -> Author:
    return make_project(tmp_path / "repo", files(inspect=False))


def test_a_prompt_regression_fails_the_pytest_suite_by_test_id(tests_project: Author) -> None:
    tests_project.write(drop("fees"))
    outcomes = check(tests_project)
    assert exit_code(outcomes) == 1
    unit = suite(outcomes, "unit-evals")
    c = unit.comparison
    assert c.verdict == "fail" and c.regressions == [FEES_TEST]
    assert c.base_pass_rate == 100.0 and c.head_pass_rate == pytest.approx(87.5)
    shown = visible(unit.markdown)
    assert "Regressions: passed on base, fail on head (1)" in shown
    assert "test\\_mentions\\[fees\\]" in shown
    assert "assert &#x27;fees&#x27; in" in shown or "assert 'fees' in" in shown  # the assertion
    # base and head outputs (the test's captured output) side by side
    assert "- We can help with fees." in shown and "+ We can help with nothing." in shown


def test_a_pr_that_changes_nothing_that_measures_passes(tests_project: Author) -> None:
    tests_project.write(
        {"prompts/support.md": "# reworded\n" + drop("nothing")["prompts/support.md"]}
    )
    outcomes = check(tests_project)
    unit = suite(outcomes, "unit-evals")
    assert unit.comparison.verdict == "pass" and exit_code(outcomes) == 0
    assert unit.comparison.delta_points == 0 and not unit.comparison.regressions
    assert unit.comparison.head_meta is not None and unit.comparison.head_meta.n_cases == len(WORDS)


def test_a_loosened_test_is_judged_by_the_bases_and_named(tests_project: Author) -> None:
    loose = TESTS.format(words=WORDS).replace("assert word in said", "assert said")
    tests_project.write({**drop("fees"), "tests/evals/test_support.py": loose})
    unit = suite(check(tests_project), "unit-evals")
    assert unit.comparison.verdict == "fail" and unit.comparison.regressions == [FEES_TEST]
    change = changed_instrument(unit)
    assert change.files == ["tests/evals/test_support.py"]
    said = sentence(change)
    assert "`tests/evals/test_support.py`" in said and "base's version" in said
    assert "tests/evals/test\\_support.py" in visible(unit.markdown)
    metas = [
        json.loads(
            (tests_project.path / "reports/unit-evals" / f"{side}.jsonl")
            .read_text()
            .splitlines()[0]
        )
        for side in ("base", "head")
    ]  # the head ran the base's test file, and its report says so
    assert (
        metas[0]["files"]["tests/evals/test_support.py"]
        == metas[1]["files"]["tests/evals/test_support.py"]
    )


def test_a_conftest_the_pr_adds_is_not_run(tests_project: Author) -> None:
    """A conftest.py the PR adds to the tests' folder would pass every test; the base has none
    there, so neither side loads it."""
    planted = "import pytest\n\n@pytest.fixture\ndef bot():\n    return lambda q: 'fees CAC licensed card branch loan minutes statement'\n"
    tests_project.write({**drop("fees"), "tests/conftest.py": planted})
    unit = suite(check(tests_project), "unit-evals")
    assert unit.comparison.verdict == "fail" and unit.comparison.regressions == [FEES_TEST]
    assert changed_instrument(unit).files == ["tests/conftest.py"]


def test_a_system_that_skips_its_failing_test_is_an_error_not_a_pass(tests_project: Author) -> None:
    dodge = (
        "import pytest\n" + (tests_project.path / "app/bot.py").read_text()
        + "\n_answer = answer\n\ndef answer(question):\n    if 'fees' in question:\n"
        "        pytest.skip('not today')\n    return _answer(question)\n"
    )  # fmt: skip
    tests_project.write({**drop("fees"), "app/bot.py": dodge})
    unit = suite(check(tests_project), "unit-evals")
    c = unit.comparison
    assert c.verdict != "pass" and c.head_pass_rate == pytest.approx(87.5)
    fees = c.cases[FEES_TEST]
    assert fees.head is not None and fees.head.status == "error"
    assert "skipped: not today" in (fees.head.error or "")


def test_repeats_run_each_test_again_into_the_same_statistics(tmp_path: Path) -> None:
    flaky_bot = (
        "import os, itertools\n" + files(inspect=False)["app/bot.py"]
        + "\n_answer, _count = answer, itertools.count()\n\ndef answer(question):\n"
        "    n = next(_count)\n    return _answer(question) if n % 2 or 'fees' not in question else 'no'\n"
    )  # fmt: skip
    project = make_project(tmp_path / "repo", {**files(inspect=False, repeats=4)})
    project.write(
        {
            "app/bot.py": flaky_bot,
            "prompts/support.md": "# again\n" + drop("x")["prompts/support.md"],
        }
    )
    unit = suite(check(project), "unit-evals")
    fees = unit.comparison.cases[FEES_TEST]
    assert fees.base is not None and fees.head is not None
    assert (fees.base.repeats, fees.base.passes, fees.base.fraction) == (4, 4, 1.0)
    assert (fees.head.repeats, fees.head.passes, fees.head.fraction) == (4, 2, 0.5)
    assert fees.head.flaky
    head = project.path / "reports" / "unit-evals" / "head.jsonl"
    line = next(x for x in head.read_text().splitlines() if FEES_TEST in x)
    assert '"pass_fraction":0.5' in line and line.count('"repeat":') == 4


def test_repeats_auto_asks_for_more_runs_of_the_undecided_tests(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo", files(inspect=False, repeats="auto"))
    project.write(drop("fees"))
    unit = suite(check(project), "unit-evals")
    c = unit.comparison
    assert c.verdict == "fail" and FEES_TEST in c.regressions
    head = (project.path / "reports" / "unit-evals" / "head.jsonl").read_text().splitlines()
    auto = json.loads(head[0])["auto"]
    assert auto["rounds"] >= 1 and auto["plan"]["first"] == 2  # later rounds were asked
    fees = next(json.loads(line) for line in head[1:] if FEES_TEST in line)
    runs = [a["repeat"] for a in fees["attempts"]]
    assert runs == list(range(fees["repeats"])) and fees["repeats"] > 2  # numbered on


def test_gate_run_refuses_a_pytest_option_that_is_the_gates(tmp_path: Path) -> None:
    (tmp_path / "gate.yml").write_text(
        "suites:\n  - name: t\n    pytest: {args: [tests, -p, xdist]}\n"
    )
    done = run_gate("run", "-c", str(tmp_path / "gate.yml"), cwd=tmp_path)
    assert (
        done.code == 2 and "'-p' is the gate's to set" in done.err and "Traceback" not in done.err
    )


# --- inspect_ai -----------------------------------------------------------------------------


@pytest.fixture
def task_project(tmp_path: Path) -> Author:
    """The inspect suite alone (the pytest suite's tests are above)."""
    return make_project(tmp_path / "repo", files(unit=False))


@needs_inspect
def test_a_prompt_regression_fails_the_inspect_suite_by_sample_id(
    tmp_path: Path, model: ModelServer
) -> None:
    project = make_project(tmp_path / "repo", files())  # both suites, in one PR
    project.write(drop("fees"))
    outcomes = check(project, model)
    assert suite(outcomes, "unit-evals").comparison.regressions == [FEES_TEST]
    task = suite(outcomes, "support-inspect")
    c = task.comparison
    assert c.verdict == "fail" and c.regressions == ["faq-fees"] and exit_code(outcomes) == 1
    shown = visible(task.markdown)
    assert "<code>faq\\-fees</code>" in shown and "score:says\\_target" in shown
    assert (
        "- [echo] We can help with fees." in shown and "+ [echo] We can help with nothing." in shown
    )  # the model's answers


@needs_inspect
def test_a_loosened_scorer_is_judged_by_the_bases_and_named(
    task_project: Author, model: ModelServer
) -> None:
    task_project.write({**drop("fees"), "evals/scorers.py": LOOSE_SCORER})
    task = suite(check(task_project, model), "support-inspect")
    assert task.comparison.verdict == "fail" and task.comparison.regressions == ["faq-fees"]
    assert changed_instrument(task).files == ["evals/scorers.py"]
    assert "evals/scorers.py" in visible(task.markdown)


@needs_inspect
def test_epochs_are_runs_and_a_no_op_passes(tmp_path: Path, model: ModelServer) -> None:
    project = make_project(tmp_path / "repo", files(repeats=3, unit=False))
    project.write({"prompts/support.md": "# reworded\n" + drop("x")["prompts/support.md"]})
    outcomes = check(project, model)
    task = suite(outcomes, "support-inspect")
    assert task.comparison.verdict == "pass" and exit_code(outcomes) == 0
    report = (project.path / "reports" / "support-inspect" / "head.jsonl").read_text()
    lines = [json.loads(line) for line in report.splitlines()[1:]]
    assert {r["id"] for r in lines} == {f"faq-{w}" for w in WORDS}
    for line in lines:  # three epochs, each a run, as a native case's repeats
        assert (line["repeats"], line["pass_fraction"]) == (3, 1.0)
        assert [a["repeat"] for a in line["attempts"]] == [0, 1, 2]
        assert line["tokens"]["prompt"] > 0 and line["latency_ms"] > 0


@needs_inspect
def test_samples_without_ids_are_refused_naming_the_task_and_dataset(
    tmp_path: Path, model: ModelServer
) -> None:
    project = make_project(tmp_path / "repo", files())
    project.write({"evals/samples.jsonl": samples(WORDS, with_ids=False)})
    env = environ(project.path, model)
    done = run_gate(
        "run", "-c", "gate.yml", "--suite", "support-inspect", cwd=project.path, env=env
    )
    assert done.code == 2, done.err
    assert "gate.yml:" in done.err and "key `inspect.task`" in done.err
    assert "task 'support', dataset 'samples'" in done.err and "samples.jsonl" in done.err
    assert "8 of 8 samples have no id" in done.err and "Traceback" not in done.err
