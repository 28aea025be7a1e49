"""Code checks as users write them: extraction, `must_compile`, `hidden_tests`, `test_code`,
run in the real sandbox; and the example suites end to end through the `gate` CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO, run_gate

from gate.checks import CheckContext, plan_checks
from gate.checks.code import extract_code
from gate.errors import CheckInfraError, InputError
from gate.inputs.cases import Case, load_case_file
from gate.inputs.config import SandboxConfig
from gate.inputs.expect import Expect
from gate.report.output import SystemOutput
from gate.sandbox import Sandbox, open_sandbox


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("def f(): pass", "def f(): pass"),
        ("Here:\n```python\nx = 1\n```\nand\n```python\ny = 2\n```", "x = 1\n"),
        ("```\nshell\n```\n```Python3\nx = 1\n```", "x = 1\n"),
        ("```bash\nls\n```\n```\nx = 1\n```", "x = 1\n"),
        ("1. do this\n   ```py\n   x = 1\n   ```\n", "x = 1\n"),
        ("```python\r\nx = 1\r\n```", "x = 1\n"),
        (
            "cut off by the token limit:\n```python\ndef f():\n    return 1",
            "def f():\n    return 1",
        ),
        ("```json\n{}\n```", "```json\n{}\n```"),
    ],
)
def test_code_is_extracted_from_the_answer(text: str, code: str) -> None:
    assert extract_code(text) == code


def test_code_checks_without_a_sandbox_are_an_error_not_a_failure() -> None:
    case = Case(id="c", task="t", expect=Expect(must_compile=True))
    with pytest.raises(CheckInfraError, match="need the sandbox"):
        plan_checks(case.expect).run(SystemOutput(text="x = 1"), case, CheckContext())


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    root = tmp_path_factory.mktemp("checkout")
    (root / "lib").mkdir()
    (root / "lib" / "shapes.py").write_text("def area(w, h):\n    return w * h\n")
    config = SandboxConfig(timeout_s=3, pythonpath=["lib"], prelude="import shapes")
    with open_sandbox(config, root) as opened:
        yield opened


def run(sandbox: Sandbox, answer: str, **expect: Any) -> dict[str, tuple[bool | None, str]]:
    case = Case(id="c", task="t", expect=Expect.model_validate(expect))
    results = plan_checks(case.expect).run(SystemOutput(text=answer), case, CheckContext(sandbox))
    return {r.name: (r.passed, r.detail) for r in results}


def test_hidden_tests_compare_returned_values_with_eq(sandbox: Sandbox) -> None:
    answer = (
        "```python\n"
        "def pair(): return (1, [2, 3])\n"
        "def counts(): return {1: 'a'}\n"
        "def ratio(): return 0.1 + 0.2\n"
        "def flag(): return 1\n"
        "def nothing(): return None\n"
        "def uses_prelude(): return shapes.area(2, 3)\n"
        "```"
    )
    found = run(
        sandbox,
        answer,
        hidden_tests=[
            {"call": "pair()", "eq": [1, [2, 3]]},
            {"call": "counts()", "eq": {"1": "a"}},
            {"call": "ratio()", "eq": 0.3},
            {"call": "flag()", "eq": True},
            {"call": "nothing()", "eq": None},
            {"call": "uses_prelude()", "eq": 6},
        ],
    )
    assert found["hidden:pair()"] == (True, "")
    assert found["hidden:counts()"] == (False, "expected {'1': 'a'}, got {1: 'a'}")
    assert found["hidden:ratio()"] == (False, "expected 0.3, got 0.30000000000000004")
    assert found["hidden:flag()"] == (True, "")  # Python equality: 1 == True
    assert found["hidden:nothing()"] == (True, "") and found["hidden:uses_prelude()"] == (True, "")


def test_values_that_are_not_plain_data_fail_with_what_they_were(sandbox: Sandbox) -> None:
    answer = "class Point:\n    def __repr__(self): return 'Point()'\ndef f(): return Point()\n"
    found = run(
        sandbox,
        answer,
        hidden_tests=[
            {"call": "f()", "eq": {}},
            {"call": "{1, 2}", "eq": [1, 2]},
            {"call": "iter([1])", "eq": [1]},
            {"call": "1 / 0", "eq": 0},
        ],
    )
    assert found["hidden:f()"] == (
        False,
        "returned a Point, not plain data (comparable with JSON): Point is not plain data: Point()",
    )
    assert found["hidden:{1, 2}"] == (False, "expected [1, 2], got {1, 2}")
    assert "list_iterator" in found["hidden:iter([1])"][1]
    assert found["hidden:1 / 0"] == (False, "ZeroDivisionError: division by zero")


def test_each_test_function_is_a_check_with_the_reason_it_failed(sandbox: Sandbox) -> None:
    tests = (
        "import math\n"
        "def test_ok():\n    assert area(2, 3) == 6\n"
        "def test_value():\n    assert area(2, 2) == 5, 'squares'\n"
        "def test_raises():\n    area(None, 1)\n"
        "def test_close():\n    assert math.isclose(area(0.1, 3), 0.3)\n"
        "def test_gone():\n    pass\n"
        "del test_gone\n"
    )
    found = run(sandbox, "def area(w, h):\n    return w * h\n", test_code=tests, must_compile=True)
    assert found["compile"] == (True, "") and found["test:test_ok"] == (True, "")
    assert found["test:test_value"] == (
        False,
        "AssertionError: assert area(2, 2) == 5: squares (left: 4, right: 5) (test line 5)",
    )
    assert found["test:test_raises"] == (
        False,
        "TypeError: unsupported operand type(s) for *: 'NoneType' and 'int' "
        "(candidate line 2, test line 7)",
    )
    assert found["test:test_close"] == (True, "")
    assert found["test:test_gone"] == (False, "the test code does not define test_gone")


def test_code_that_does_not_compile_fails_every_check_with_the_syntax_error(
    sandbox: Sandbox,
) -> None:
    found = run(
        sandbox,
        "def f(:\n    pass",
        must_compile=True,
        hidden_tests=[{"call": "f()", "eq": 1}],
        test_code="def test_f():\n    assert f() == 1\n",
    )
    error = "SyntaxError: invalid syntax (line 1)"
    assert found["compile"] == (False, error)
    assert found["hidden:f()"] == (False, f"the code does not compile: {error}")
    assert found["test:test_f"] == (False, f"the code does not compile: {error}")


def test_an_error_at_import_fails_the_tests_and_says_where(sandbox: Sandbox) -> None:
    found = run(
        sandbox,
        "def f():\n    return 1\nprint(undefined_name)\n",
        must_compile=True,
        test_code="def test_f():\n    assert f() == 1\n",
    )
    assert found["compile"] == (True, "")
    assert found["test:test_f"] == (
        False,
        "the code failed at import: NameError: name 'undefined_name' is not defined "
        "(candidate line 3)",
    )


def test_a_broken_test_module_fails_its_tests(sandbox: Sandbox) -> None:
    found = run(sandbox, "x = 1", test_code="import not_a_module\ndef test_a():\n    pass\n")
    assert found["test:test_a"][0] is False
    assert "ModuleNotFoundError: No module named 'not_a_module'" in found["test:test_a"][1]


def test_humaneval_style_check_function(sandbox: Sandbox) -> None:
    tests = (
        "def check(candidate):\n"
        "    assert candidate([1, 2, 3]) == 6\n"
        "    assert abs(candidate([0.5, 0.25]) - 0.75) < 1e-9\n"
        "def test_check():\n    check(total)\n"
    )
    assert run(sandbox, "def total(xs): return sum(xs)", test_code=tests) == {
        "test:test_check": (True, "")
    }
    assert run(sandbox, "def total(xs): return max(xs)", test_code=tests)["test:test_check"] == (
        False,
        "AssertionError: assert candidate([1, 2, 3]) == 6 (left: 3, right: 6) (test line 2)",
    )


def test_bad_test_code_is_an_input_error_naming_file_line_and_key(tmp_path: Path) -> None:
    cases = tmp_path / "suite.jsonl"
    cases.write_text(
        json.dumps({"id": "ok", "prompt": "p", "test_code": "def test_a():\n    pass\n"})
        + "\n"
        + json.dumps({"id": "bad", "prompt": "p", "test_code": "def test_a(:\n"})
        + "\n"
    )
    with pytest.raises(InputError) as info:
        load_case_file(cases, "suite.jsonl")
    message = str(info.value)
    assert message.startswith("suite.jsonl:2: key `test_code`: test_code does not parse")
    cases.write_text(json.dumps({"id": "x", "expect": {"test_code": "y = 1"}}) + "\n")
    with pytest.raises(InputError, match=r"suite\.jsonl:1: key `expect\.test_code`: .*no `test_"):
        load_case_file(cases, "suite.jsonl")


def test_the_sdk_suite_reports_a_hallucinated_method(tmp_path: Path) -> None:
    done = run_gate("run", "--suite", "sdk", "--out", str(tmp_path), "--label", "sdk", cwd=REPO)
    assert done.code == 0, done.err
    lines = (tmp_path / "sdk.jsonl").read_text().splitlines()
    meta, results = json.loads(lines[0]), {r["id"]: r for r in map(json.loads, lines[1:])}
    assert meta["sandbox"]["environment"].startswith("scrubbed")
    assert {i for i, r in results.items() if r["status"] == "pass"} == {
        "sdk-growth",
        "sdk-loan",
        "sdk-vat",
    }
    (failed,) = [c for c in results["sdk-average-return"]["checks"] if not c["passed"]]
    assert failed["name"] == "test:test_mean"
    assert (
        "AttributeError: type object 'FinanceLib' has no attribute 'average_return'"
        in failed["detail"]
    )


def test_validate_runs_every_reference_of_the_example_suites() -> None:
    done = run_gate("validate", cwd=REPO)
    assert done.code == 0, done.out + done.err
    assert "sdk: 4 cases, 4 with a reference, 0 broken" in done.out
    assert done.out.strip().endswith("ok")
