"""`expect.python`: the team's own check, run by `gate run` in the real sandbox. Each return
shape decides as documented; a raising, hanging, exiting or badly answering check is an
`error` that names it; it sees no secret and no network; a failed deterministic check is
never overridden."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.cli import ECHO_APP, Project, run_gate

CHECKS = """
import json
import os
import socket
import time

def true(output, case):
    return True

def false(output, case):
    return False

def mentions_city(output, case):
    return case["input"]["city"] in output["text"]

def score(output, case):
    return len(output["text"]) / 100

def graded(output, case):
    polite = "please" in output["text"]
    return {"pass": polite, "score": 0.9 if polite else 0.1, "reason": "polite" if polite else "rude"}

def only_score(output, case):
    return {"score": 0.3}

def boom(output, case):
    raise ValueError("the answer names no city")

def hang(output, case):
    while True:
        time.sleep(0.01)

def exits(output, case):
    os._exit(0)

def returns_none(output, case):
    print("looks fine")

def returns_list(output, case):
    return ["pass"]

def out_of_range(output, case):
    return 1.5

def bad_pass(output, case):
    return {"pass": "yes"}

def sees_secret(output, case):
    return "GATE_TEST_SECRET" in os.environ or "hunter2" in json.dumps(dict(os.environ))

def reaches_network(output, case):
    try:
        socket.create_connection(("127.0.0.1", int(case["input"]["port"])), timeout=1).close()
    except OSError:
        return False
    return True

def sees_case(output, case):
    return {
        "pass": case["id"] == "case-view" and case["task"] == "checks"
        and case["severity"] == "minor" and case["expect"]["python"] == ["evals.checks:sees_case"]
        and output["finish_reason"] is None and output["tool_calls"] == []
    }
"""


def setup(tmp_path: Path, cases: list[dict[str, Any]], timeout_s: float = 2) -> Project:
    p = Project(tmp_path)
    p.write("app.py", ECHO_APP)
    p.write("evals/__init__.py", "")
    p.write("evals/checks.py", CHECKS)
    p.cases("cases/checks.jsonl", cases)
    p.config(
        {
            "cases": "cases/checks.jsonl",
            "system": {"kind": "python", "target": "app:answer"},
            "sandbox": {"timeout_s": timeout_s},
        }
    )
    return p


def case(id: str, say: str, function: str, **expect: Any) -> dict[str, Any]:
    target = f"evals.checks:{function}"
    return {
        "id": id,
        "input": {"say": say, "city": "Paris"},
        "expect": {"python": target, **expect},
    }


def run(p: Project, **env: str) -> dict[str, dict[str, Any]]:
    done = run_gate("run", "--out", "reports", cwd=p.root, env=env)
    assert done.code in (0, 1, 3), done.err
    assert "Traceback" not in done.err
    return {line["id"]: line for line in p.read_report()[1]}


def test_each_return_shape_decides(tmp_path: Path) -> None:
    p = setup(
        tmp_path,
        [
            case("bool-true", "x", "true"),
            case("bool-false", "x", "false"),
            case("uses-case", "It is Paris.", "mentions_city"),
            case("uses-case-fails", "It is Lyon.", "mentions_city"),
            case("score-passes", "x" * 70, "score"),
            case("score-fails", "x" * 30, "score"),
            case("score-threshold", "x" * 70, "score", threshold=0.8),
            case("dict-pass", "please wait", "graded"),
            case("dict-fail", "go away", "graded"),
            case("dict-score-only", "x", "only_score", threshold=0.25),
        ],
    )
    lines = run(p)
    status = {i: line["status"] for i, line in lines.items()}
    assert status == {
        "bool-true": "pass",
        "bool-false": "fail",
        "uses-case": "pass",
        "uses-case-fails": "fail",
        "score-passes": "pass",
        "score-fails": "fail",
        "score-threshold": "fail",
        "dict-pass": "pass",
        "dict-fail": "fail",
        "dict-score-only": "pass",
    }
    check = lines["score-fails"]["checks"][0]
    assert check["name"] == "python:evals.checks:score"
    assert check["fraction"] == 0.3 and check["detail"] == "score 0.3 (passes at 0.5)"
    assert lines["score-threshold"]["checks"][0]["detail"] == "score 0.7 (passes at 0.8)"
    graded = lines["dict-fail"]["checks"][0]
    assert (graded["passed"], graded["fraction"], graded["detail"]) == (False, 0.1, "rude")
    assert lines["bool-true"]["checks"][0]["fraction"] is None


def test_a_check_that_fails_to_answer_is_an_error_naming_it(tmp_path: Path) -> None:
    p = setup(
        tmp_path,
        [
            case("raises", "x", "boom"),
            case("hangs", "x", "hang"),
            case("exits", "x", "exits"),
            case("none", "x", "returns_none"),
            case("list", "x", "returns_list"),
            case("range", "x", "out_of_range"),
            case("bad-pass", "x", "bad_pass"),
            case("no-function", "x", "not_there"),
        ],
        timeout_s=1,
    )
    lines = run(p)
    assert {line["status"] for line in lines.values()} == {"error"}
    errors = {i: line["error"] for i, line in lines.items()}
    assert errors["raises"].startswith(
        "check error: python check evals.checks:boom: raised ValueError: the answer names no city"
    )
    assert "evals/checks.py line" in errors["raises"]
    assert (
        errors["hangs"]
        == "check error: python check evals.checks:hang: no answer: timed out after 1 s"
    )
    assert "no answer: the process exited before the harness finished" in errors["exits"]
    assert errors["none"] == (
        "check error: python check evals.checks:returns_none returned None; expected a bool, "
        "a score in [0, 1] or a dict {pass, score, reason}"
    )
    assert "returned a list (['pass']); expected" in errors["list"]
    assert "returned 1.5: a score must be a number in [0, 1]" in errors["range"]
    assert "returned `pass` = 'yes', which is not a bool" in errors["bad-pass"]
    assert "cannot import it: evals.checks has no function 'not_there'" in errors["no-function"]
    assert all(not line["passed"] for line in lines.values())


def test_it_sees_no_secret_and_no_network(tmp_path: Path) -> None:
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        p = setup(
            tmp_path,
            [
                case("secret", "x", "sees_secret"),
                {**case("network", "x", "reaches_network"), "input": {"port": str(port)}},
            ],
        )
        lines = run(p, GATE_TEST_SECRET="hunter2")
    finally:
        listener.close()
    assert lines["secret"]["status"] == "fail"
    assert lines["network"]["status"] == "fail"


def test_it_gets_the_output_and_the_case(tmp_path: Path) -> None:
    row = {**case("case-view", "x", "sees_case"), "task": "checks", "severity": "minor"}
    assert run(setup(tmp_path, [row]))["case-view"]["status"] == "pass"


def test_a_failed_deterministic_check_is_never_overridden(tmp_path: Path) -> None:
    p = setup(
        tmp_path,
        [
            case("det-fails-check-passes", "hello", "true", must_include=["Paris"]),
            case("det-fails-check-raises", "hello", "boom", must_include=["Paris"]),
            case("det-passes-check-fails", "Paris", "false", must_include=["Paris"]),
        ],
    )
    lines = run(p)
    assert lines["det-fails-check-passes"]["status"] == "fail"
    assert [c["name"] for c in lines["det-fails-check-passes"]["checks"]] == ["include:Paris"]
    assert lines["det-fails-check-raises"]["status"] == "fail"  # not an error: it never ran
    assert lines["det-passes-check-fails"]["status"] == "fail"


def test_a_missing_module_or_bad_target_is_bad_input(tmp_path: Path) -> None:
    p = setup(tmp_path, [case("a", "x", "true")])
    p.cases(
        "cases/checks.jsonl", [{**case("a", "x", "true"), "expect": {"python": "evals.nope:f"}}]
    )
    for command in ("run", "validate"):
        done = run_gate(command, cwd=p.root)
        assert done.code == 2, done.err
        assert "cases/checks.jsonl:1: key `expect.python`" in done.err
        assert "'evals.nope:f' is in neither sandbox.pythonpath nor the checkout" in done.err
    p.cases(
        "cases/checks.jsonl", [{**case("a", "x", "true"), "expect": {"python": "evals/checks.py"}}]
    )
    done = run_gate("validate", cwd=p.root)
    assert done.code == 2 and "is not `module:function`" in done.err
    p.cases("cases/checks.jsonl", [{**case("a", "x", "true"), "expect": {"threshold": 0.5}}])
    done = run_gate("validate", cwd=p.root)
    assert done.code == 2 and "`threshold` applies to `python` checks only" in done.err


@pytest.mark.parametrize("where", ["sdk", "root"])
def test_the_module_comes_from_the_pythonpath_or_the_checkout(tmp_path: Path, where: str) -> None:
    p = setup(tmp_path, [])
    module = "sdk/rules.py" if where == "sdk" else "rules.py"
    p.write(
        module,
        "from helper import WORD\n\ndef has_word(output, case):\n    return WORD in output['text']\n",
    )
    p.write("sdk/helper.py" if where == "sdk" else "helper.py", "WORD = 'refund'\n")
    p.cases(
        "cases/checks.jsonl",
        [
            {"id": "yes", "input": {"say": "a refund"}, "expect": {"python": "rules:has_word"}},
            {"id": "no", "input": {"say": "no money"}, "expect": {"python": "rules:has_word"}},
        ],
    )
    config = {
        "cases": "cases/checks.jsonl",
        "system": {"kind": "python", "target": "app:answer"},
        "sandbox": {"pythonpath": ["sdk"]} if where == "sdk" else {},
    }
    p.config(config)
    lines = run(p)
    assert (lines["yes"]["status"], lines["no"]["status"]) == ("pass", "fail")
