"""The sandbox's pure logic: evidence frames, verdicts, plain data, and the strict test rewrite."""

from __future__ import annotations

import builtins
import marshal
import math
import signal
from types import ModuleType
from typing import Any

import pytest

from gate.inputs.expect import HiddenTest
from gate.inputs.testcode import declared_tests
from gate.sandbox.host.verdict import checks
from gate.sandbox.protocol import plain
from gate.sandbox.protocol.messages import Job, Outcome
from gate.sandbox.zygote import private, safe_compare, tamper
from gate.sandbox.zygote.job import parse_frames
from gate.sandbox.zygote.rewrite import imported_modules, strict_tree

NONCE = bytes(range(16))


def frame(record: tuple[Any, ...], nonce: bytes = NONCE) -> bytes:
    payload = marshal.dumps(record)
    return nonce + len(payload).to_bytes(4, "big") + payload


def test_frames_are_read_until_the_first_byte_the_harness_did_not_write() -> None:
    good = frame(("ready",)) + frame(("compile", True, ""))
    records, problem = parse_frames(good, NONCE)
    assert records == [("ready",), ("compile", True, "")] and problem is None

    forged = good + frame(("import", True, ""), nonce=b"\0" * 16) + frame(("done", 1))
    records, problem = parse_frames(forged, NONCE)
    assert len(records) == 2 and "did not write" in (problem or "")

    records, problem = parse_frames(good + frame(("done", 1))[:-3], NONCE)
    assert len(records) == 2 and "middle of a frame" in (problem or "")


JOB = Job(id=1, code="", must_compile=True, calls=["f(1)", "f(2)"], test_code="x", tests=["test_a"])
HIDDEN = [HiddenTest(call="f(1)", eq=[1, 2]), HiddenTest(call="f(2)", eq={"a": 1})]
FULL = [
    ["ready"],
    ["compile", True, ""],
    ["import", True, ""],
    ["call", 0, True, True, plain.encode((1, 2)), "", "", ""],
    ["call", 1, True, True, plain.encode({"a": 2}), "", "", ""],
    ["tests", True, ""],
    ["test", "test_a", True, ""],
    ["clean", ""],
    ["done", 1],
]


def verdict(records: list[list[Any]], **fate: Any) -> dict[str, tuple[bool | None, str]]:
    outcome = Outcome(id=1, status="ok", records=records, **fate)
    results = checks(JOB, HIDDEN, outcome, timeout_s=5, cpu_s=6, output_kb=64)
    return {r.name: (r.passed, r.detail) for r in results}


def test_values_are_compared_with_eq_outside_the_sandbox() -> None:
    found = verdict(FULL, exit_code=0)
    assert found["compile"] == (True, "")
    assert found["hidden:f(1)"] == (True, "")  # a tuple equals a JSON list
    assert found["hidden:f(2)"] == (False, "expected {'a': 1}, got {'a': 2}")
    assert found["test:test_a"] == (True, "")


def test_a_pass_needs_the_clean_frame_after_it() -> None:
    cut = FULL[:7]
    found = verdict(cut, timed_out=True)
    assert found["test:test_a"][0] is False
    assert "before the harness confirmed it (timed out after 5 s)" in found["test:test_a"][1]
    tampered = [*FULL[:7], ["clean", "the code modified finlib.FinanceLib.vat"], ["done", 1]]
    found = verdict(tampered, exit_code=0)
    assert found["test:test_a"] == (False, "passed, but the code modified finlib.FinanceLib.vat")


@pytest.mark.parametrize(
    ("fate", "reason"),
    [
        ({"timed_out": True}, "timed out after 5 s"),
        ({"signal": signal.SIGXCPU}, "CPU time limit of 6 s exceeded"),
        ({"signal": signal.SIGSEGV}, "crashed with SIGSEGV"),
        ({"signal": signal.SIGKILL}, "killed by SIGKILL"),
        ({"signal": signal.SIGKILL, "cpu_s": 6.01}, "CPU time limit of 6 s exceeded"),
        ({"exit_code": 0}, "exited before the harness finished"),
        ({"exit_code": 3}, "exited with code 3"),
        ({"exit_code": 1, "stderr": "MemoryError\n"}, "ran out of memory"),
        ({"evidence_error": "forged"}, "forged"),
    ],
)
def test_missing_evidence_says_why(fate: dict[str, Any], reason: str) -> None:
    found = verdict(FULL[:3], **fate)
    assert found["compile"] == (True, "")
    assert all(passed is False for name, (passed, _) in found.items() if name != "compile")
    assert reason in found["test:test_a"][1] and found["test:test_a"][1].startswith("no evidence")


def test_frames_out_of_order_or_repeated_are_rejected() -> None:
    duplicated = [*FULL[:4], FULL[3], *FULL[4:]]
    found = verdict(duplicated, exit_code=0)
    # f(1) passed before the duplicate, but no tamper check confirmed it afterwards
    assert found["hidden:f(1)"][0] is False and "out of order" in found["hidden:f(1)"][1]
    assert found["test:test_a"][0] is False and "out of order" in found["test:test_a"][1]


def test_output_over_the_cap_is_mentioned() -> None:
    found = verdict(FULL[:3], exit_code=0, stdout_bytes=200_000, stderr="Traceback: boom")
    detail = found["test:test_a"][1]
    assert "stdout exceeded the 64 KB output limit (200000 bytes)" in detail
    assert "stderr: Traceback: boom" in detail


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2**20000,
        -1.5,
        "é",
        b"\0\1",
        1 + 2j,
        [1, [2]],
        (1, (2,)),
        {1: "int key", "1": "str key", (2, 3): frozenset({4})},
        {5, 6},
    ],
    ids=lambda value: type(value).__name__,
)
def test_plain_data_survives_json(value: Any) -> None:
    assert plain.decode(plain.encode(value)) == value


def test_nan_and_infinity_survive_and_nan_never_matches() -> None:
    decoded = plain.decode(plain.encode([math.inf, math.nan]))
    assert decoded[0] == math.inf and math.isnan(decoded[1])
    assert not plain.matches(math.nan, math.nan)


def test_matching_follows_python_equality_except_for_tuples() -> None:
    assert plain.matches((1, [2, (3,)]), [1, [2, [3]]])
    assert plain.matches(1, 1.0) and plain.matches(True, 1)
    assert not plain.matches({1: "a"}, {"1": "a"}) and not plain.matches({1, 2}, [1, 2])


def test_test_functions_are_found_and_bad_tests_rejected() -> None:
    source = "def helper(): pass\ndef test_b(): pass\ndef test_a(x=1): pass\ndef test_b(): pass\n"
    assert declared_tests(source) == ["test_b", "test_a"]
    for bad, message in [
        ("def test_a(:\n", "does not parse"),
        ("x = 1\n", "defines no `test_"),
        ("async def test_a(): pass\n", "async"),
        ("def test_a(fixture): pass\n", "take no arguments"),
        ("def test_a():\n    yield 1\n", "must not yield"),
    ]:
        with pytest.raises(ValueError, match=message):
            declared_tests(bad)


def test_imports_of_the_test_code_are_listed() -> None:
    source = "import math, os.path\nfrom collections import abc\nfrom . import x\n"
    assert imported_modules(source) == ["math", "os.path", "collections", "collections.abc"]


@pytest.fixture(scope="module")
def strict_run() -> Any:
    """Run rewritten test code in this process, with the real helpers."""
    safe_compare.set_trusted(tamper.comparison_methods(tamper.all_classes()))

    def run(source: str, **names: Any) -> dict[str, Any]:
        namespace = {**names, **safe_compare.helpers()}
        exec(compile(strict_tree(source), "<test>", "exec"), namespace)
        return namespace

    return run


def test_rewritten_code_keeps_python_semantics(strict_run: Any) -> None:
    source = """
values = [1, 2, 3]
chain = 1 < 2 < 3 and not (3 < 2 < 1)
lazy = []
short = 5 < 1 < lazy.append(1)
picked = [v for v in values if v != 2]
either = 0 or "x"
both = 2 and 3
membership = 2 in values and 9 not in values and "a" in {"a": 1}
lookup = {"a": 1}["a"]
typed = isinstance(1, (str, int)) and not isinstance("s", int)
everything = all(v > 0 for v in values) and any(v == 3 for v in values)
empty = bool([]) is False
"""
    names = strict_run(source)
    assert names["chain"] is True and names["short"] is False and names["lazy"] == []
    assert names["picked"] == [1, 3] and names["either"] == "x" and names["both"] == 3
    assert names["membership"] and names["lookup"] == 1 and names["typed"]
    assert names["everything"] and names["empty"]


def test_failed_asserts_show_the_source_and_values(strict_run: Any) -> None:
    names = strict_run("def test():\n    assert [1, 2] == [1, 3], 'lists'\n")
    with pytest.raises(AssertionError) as info:
        names["test"]()
    assert str(info.value) == "assert [1, 2] == [1, 3]: lists (left: [1, 2], right: [1, 3])"


def test_comparisons_refuse_methods_defined_after_the_snapshot(strict_run: Any) -> None:
    class AlwaysEqual:  # created after the snapshot, like a candidate's class
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = object.__hash__

    class Truthy:
        def __bool__(self) -> bool:
            return True

    names = strict_run(
        "def eq():\n    assert value == 5\n"
        "def nested():\n    assert [value] == [5]\n"
        "def truth():\n    assert flag\n",
        value=AlwaysEqual(),
        flag=Truthy(),
    )
    for test in ("eq", "nested", "truth"):
        with pytest.raises(TypeError, match="is defined by the candidate's code"):
            names[test]()


def make_module(name: str, source: str) -> ModuleType:
    module = ModuleType(name)
    exec(source, vars(module))
    return module


def test_private_copies_ignore_patches_of_the_real_modules() -> None:
    helper = make_module("helper_mod", "def double(x):\n    return x * 2\n")
    user = make_module("user_mod", "def quadruple(x):\n    return double(double(x))\n")
    user.double = helper.double  # as `from helper_mod import double` would
    worlds = private.privatize([helper, user])
    quadruple = worlds["user_mod"]["quadruple"]
    helper.double = user.double = lambda x: 0  # what candidate code could do
    builtins_len = builtins.len
    try:
        builtins.len = lambda x: 0
        assert quadruple(3) == 12 and user.quadruple(3) == 0
        assert worlds["user_mod"]["__builtins__"]["len"] is builtins_len
    finally:
        builtins.len = builtins_len


def test_private_copies_refuse_shared_mutable_state() -> None:
    with pytest.raises(TypeError, match="cache is mutable"):
        private.privatize([make_module("stateful", "cache = {}\n")])
    module = make_module("declared", "PRIVATE_STATE = ('cache',)\ncache = {'x': 1}\n")
    assert private.privatize([module])["declared"]["cache"] == {}
