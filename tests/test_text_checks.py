"""Every deterministic text check, both ways."""

from __future__ import annotations

import pytest

from gate.checks import CheckContext, plan_checks
from gate.inputs.cases import Case
from gate.inputs.expect import Expect
from gate.report.output import SystemOutput


def results(expect: dict, text: str) -> dict[str, bool | None]:
    case = Case(id="c", task="t", expect=Expect.model_validate(expect))
    checks = plan_checks(case.expect).run(SystemOutput(text=text), case, CheckContext())
    return {c.name: c.passed for c in checks}


@pytest.mark.parametrize(
    ("expect", "text", "expected"),
    [
        ({"must_include": ["CAC"]}, "You need cac registration", {"include:CAC": True}),
        ({"must_include": ["CAC"]}, "You need a certificate", {"include:CAC": False}),
        ({"must_include": "fee"}, "A FEE applies", {"include:fee": True}),
        (
            {"must_not_include": ["I am a lawyer"]},
            "I am not a lawyer",
            {"exclude:I am a lawyer": True},
        ),
        (
            {"must_not_include": ["I am a lawyer"]},
            "Trust me, i AM A LAWYER.",
            {"exclude:I am a lawyer": False},
        ),
        ({"regex": [r"\d{3}-\d{4}"]}, "call 555-1234", {r"regex:\d{3}-\d{4}": True}),
        ({"regex": [r"\d{3}-\d{4}"]}, "call me", {r"regex:\d{3}-\d{4}": False}),
        ({"not_regex": [r"(?i)guarantee"]}, "no promises", {"not_regex:(?i)guarantee": True}),
        ({"not_regex": [r"(?i)guarantee"]}, "We GUARANTEE it", {"not_regex:(?i)guarantee": False}),
        ({"equals": "42"}, " 42\n", {"equals": True}),
        ({"equals": "42"}, "42.0", {"equals": False}),
        ({"max_chars": 5}, "12345", {"max_chars:5": True}),
        ({"max_chars": 5}, "123456", {"max_chars:5": False}),
        ({"min_chars": 3}, "abc", {"min_chars:3": True}),
        ({"min_chars": 3}, "ab", {"min_chars:3": False}),
        ({"json": True}, '{"a": 1}', {"json": True}),
        ({"json": True}, "```json\n[1, 2]\n```", {"json": True}),
        ({"json": True}, "{'a': 1}", {"json": False}),
        ({"json": True}, 'Here is the JSON:\n```json\n{"a": 1}\n```\nDone.', {"json": True}),
        ({"json": True}, 'Sure! The answer is {"city": "Paris"}. Anything else?', {"json": True}),
        ({"json": True}, "The list: [1, 2, 3] as asked", {"json": True}),
        ({"json": True}, "I [think] so {not json}", {"json": False}),
        ({"json_exact": True}, ' {"a": 1}\n', {"json_exact": True}),
        ({"json_exact": True}, 'Here: {"a": 1}', {"json_exact": False}),
        ({"json_exact": True}, '```json\n{"a": 1}\n```', {"json_exact": False}),
        ({"contains": ["Paris"]}, "Paris is the capital", {"contains:Paris": True}),
        ({"contains": "Paris"}, "paris is the capital", {"contains:Paris": False}),
        ({"contains_any": ["Paris", "Lyon"]}, "Lyon, mostly", {"contains_any": True}),
        ({"contains_any": ["Paris", "Lyon"]}, "lyon or paris", {"contains_any": False}),
        ({"contains_all": ["Paris", "Lyon"]}, "Paris and Lyon", {"contains_all": True}),
        ({"contains_all": ["Paris", "Lyon"]}, "Paris and lyon", {"contains_all": False}),
        ({"starts_with": "Yes"}, "\n Yes, you can.", {"starts_with": True}),
        ({"starts_with": "Yes"}, "yes, you can.", {"starts_with": False}),
        ({"starts_with": "Yes"}, "Well, Yes.", {"starts_with": False}),
    ],
)
def test_text_check(expect: dict, text: str, expected: dict[str, bool]) -> None:
    assert results(expect, text) == expected


SCHEMA = {
    "type": "object",
    "required": ["answer", "confidence"],
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number", "maximum": 1}},
}


def test_json_schema_passes_and_fails_with_a_reason() -> None:
    ok = results({"json": SCHEMA}, '{"answer": "yes", "confidence": 0.9}')
    assert ok == {"json": True, "json_schema": True}
    case = Case(id="c", task="t", expect=Expect.model_validate({"json": SCHEMA}))
    bad = plan_checks(case.expect).run(
        SystemOutput(text='{"answer": "yes", "confidence": 3}'), case, CheckContext()
    )
    assert [(c.name, c.passed) for c in bad] == [("json", True), ("json_schema", False)]
    assert "confidence" in bad[1].detail and "3" in bad[1].detail
    not_json = results({"json": SCHEMA}, "yes")
    assert not_json == {"json": False, "json_schema": False}


def test_all_checks_of_a_case_are_named_and_reported() -> None:
    got = results(
        {"must_include": ["a", "b"], "must_not_include": ["z"], "max_chars": 10},
        "a only",
    )
    assert got == {"include:a": True, "include:b": False, "exclude:z": True, "max_chars:10": True}


def test_failed_check_details_say_why() -> None:
    case = Case(id="c", task="t", expect=Expect(must_not_include=["secret"], max_chars=3))
    checks = plan_checks(case.expect).run(SystemOutput(text="the Secret!"), case, CheckContext())
    assert "found at character 4" in checks[0].detail
    assert checks[1].detail == "11 characters"


def test_the_new_checks_say_why_they_fail() -> None:
    case = Case(
        id="c",
        task="t",
        expect=Expect.model_validate(
            {
                "contains": ["Paris"],
                "contains_any": ["Rome", "Oslo"],
                "contains_all": ["France", "Rome", "Oslo"],
                "starts_with": "Yes",
                "json": {"type": "object", "required": ["city"]},
            }
        ),
    )
    text = 'No: paris is in France. {"town": "x"}'
    found = plan_checks(case.expect).run(SystemOutput(text=text), case, CheckContext())
    details = {c.name: c.detail for c in found}
    assert details == {
        "contains:Paris": "'Paris' not found (case-sensitive)",
        "contains_any": "none of 'Rome', 'Oslo' found",
        "contains_all": "missing 'Rome', 'Oslo'",
        "starts_with": "starts with 'No: paris is in France…'",
        "json": "",
        "json_schema": "(root): 'city' is a required property",
    }
    whole = Case(id="w", task="t", expect=Expect.model_validate({"json_exact": True}))
    (check,) = plan_checks(whole.expect).run(SystemOutput(text="Here: {}"), whole, CheckContext())
    assert check.detail == "the whole answer is not JSON: Expecting value"
    prose = Case(id="p", task="t", expect=Expect.model_validate({"json": True}))
    (check,) = plan_checks(prose.expect).run(SystemOutput(text="none"), prose, CheckContext())
    assert check.detail.startswith("no JSON value in the output")
