"""promptfoo's semantics, piece by piece (pure functions): the deterministic assertion types,
`not-`, weights, thresholds and assert-sets; what a python assertion returned; a grader's
answer; JSON found in prose; JavaScript's printing of values; nunjucks rendering; how each
provider reads a rendered prompt."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gate.checks.base import CheckContext
from gate.inputs.cases import Case
from gate.promptfoo.checks.assertion_types import extract_json_objects, output_string, output_value
from gate.promptfoo.checks.assertions import run_assertions
from gate.promptfoo.checks.grading import read_grade, rendered_prompt
from gate.promptfoo.checks.script_results import script_verdict
from gate.promptfoo.inputs.assertion_values import parse_assertions
from gate.promptfoo.inputs.assertions import (
    AssertionContext,
    AssertionSet,
    from_string,
    split_values,
)
from gate.promptfoo.inputs.chat import ChatPromptError, anthropic_messages, openai_messages
from gate.promptfoo.inputs.js import js_number, js_regex, js_string, js_stringify
from gate.promptfoo.inputs.nunjucks import promptfoo_environment
from gate.promptfoo.systems.prompts import PromptfooPrompt
from gate.report.output import SystemOutput, ToolCall
from gate.run.runner import status_of


def run(text: str, asserts: list[dict], threshold: float | None = None, **output: object):
    ctx = AssertionContext(where="t.yaml:1", test="test 1", vars={"city": "Paris"})
    assertions = AssertionSet(assertions=parse_assertions(asserts, ctx), threshold=threshold)
    case = Case(
        id="c", task="t", input={"city": "Paris"}, assertions=assertions, input_is_vars=True
    )
    results, _ = run_assertions(assertions, SystemOutput(text=text, **output), case, CheckContext())
    return status_of(results), results


@pytest.mark.parametrize(
    ("text", "assertion", "status"),
    [
        ("Paris", {"type": "equals", "value": "Paris"}, "pass"),
        (" Paris", {"type": "equals", "value": "Paris"}, "fail"),
        ('{"a": 1.0}', {"type": "equals", "value": {"a": 1}}, "pass"),
        ("1", {"type": "equals", "value": True}, "fail"),
        ("Paris", {"type": "contains", "value": "{{ city }}"}, "pass"),
        ("PARIS", {"type": "not-icontains", "value": "paris"}, "fail"),
        ("x", {"type": "not-contains-all", "value": "x, y"}, "pass"),
        (" Yes", {"type": "starts-with", "value": "Yes"}, "fail"),
        ("abc\n", {"type": "regex", "value": "abc$"}, "fail"),
        ("2024-01-05", {"type": "regex", "value": "(?<y>\\d{4})-\\d\\d"}, "pass"),
        ("  [1, 2]\n", {"type": "is-json"}, "pass"),
        ("NaN", {"type": "is-json"}, "fail"),
        ("[1, 2]", {"type": "contains-json"}, "fail"),
        ("{a: 1 // note\n}", {"type": "contains-json"}, "pass"),
        ('see {"n": "x"', {"type": "contains-json", "value": {"required": ["n"]}}, "pass"),
        ("anything", {"type": "latency", "threshold": 10**9}, "pass"),
    ],
)
def test_types_decide_as_promptfoo_does(text: str, assertion: dict, status: str) -> None:
    assert run(text, [assertion], latency_ms=5.0)[0] == status


def test_thresholds_weights_and_sets_score_as_promptfoo_does() -> None:
    half = [{"type": "contains", "value": "a"}, {"type": "contains", "value": "b"}]
    assert run("a", half, threshold=0.5)[0] == "pass"
    assert run("a", half, threshold=0.51)[0] == "fail"
    assert run("a", half)[0] == "fail"  # no threshold: every assertion must pass
    weighted = [{"type": "contains", "value": "a", "weight": 3}, {"type": "contains", "value": "b"}]
    status, results = run("a", weighted, threshold=0.75)
    assert status == "pass" and results[-1].fraction == 0.75
    zero = [{"type": "contains", "value": "a"}, {"type": "contains", "value": "b", "weight": 0}]
    assert run("a", zero)[0] == "pass"
    nested = [{"type": "assert-set", "threshold": 0.5, "metric": "m", "assert": half}]
    status, results = run("a", nested)
    assert status == "pass"
    assert [(r.name, r.scored, r.metric) for r in results] == [
        ("assert-set/contains:a", True, None),
        ("assert-set/contains:b", True, None),
        ("assert-set", False, "m"),
    ]


def test_an_openai_tool_call_is_the_output_promptfoo_sees() -> None:
    call = ToolCall(name="f", arguments={"x": 1})
    value = output_value(SystemOutput(text="", tool_calls=[call]))
    assert value == [{"type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}]
    assert (
        output_string(value)
        == '[{"type":"function","function":{"name":"f","arguments":"{\\"x\\": 1}"}}]'
    )
    raw = {"role": "assistant", "content": "hi", "tool_calls": []}
    assert output_value(SystemOutput(text="hi", data={"output": raw})) == raw


@pytest.mark.parametrize(
    ("value", "threshold", "negated", "verdict"),
    [
        (True, None, False, (True, 1.0)),
        ("false", None, False, (False, 0.0)),
        (0.2, None, False, (True, 0.2)),
        (0.0, None, False, (False, 0.0)),
        (0.2, 0.5, False, (False, 0.2)),
        ({"pass": True, "score": 0.4, "reason": "r"}, 0.5, False, (False, 0.4)),
        ({"pass_": True, "score": 1, "reason": "r"}, None, True, (False, 1.0)),
        ('{"pass": true, "score": 1, "reason": "ok"}', None, False, (True, 1.0)),
        ("0.7 points", None, False, (True, 0.7)),
        (False, None, True, (True, 1.0)),
    ],
)
def test_python_results_are_read_as_promptfoo_reads_them(
    value, threshold, negated, verdict
) -> None:
    passed, score, _ = script_verdict(value, threshold, negated)
    assert (passed, score) == verdict


@pytest.mark.parametrize("value", [None, [1], {"pass": True}, "maybe", "{broken"])
def test_other_python_results_are_errors(value: object) -> None:
    with pytest.raises(ValueError):
        script_verdict(value, None, False)


def test_a_graders_answer() -> None:
    assert read_grade('Sure: {"pass": false, "score": 0.3, "reason": "no"}', None) == (
        False,
        0.3,
        "no",
    )
    assert read_grade('{"score": 0.9}', 0.95)[:2] == (False, 0.9)  # the threshold must be met too
    assert read_grade('{"pass": "yes"}', None)[:2] == (True, 1.0)
    assert read_grade("I think it passes", None)[0] is None  # unusable: needs a person
    prompt = rendered_prompt('[{"role": "user", "content": "{{ output }} / {{ rubric }}"}]',
                             {"output": {"a": 1}, "rubric": "is {{ x }}"})  # fmt: skip
    assert prompt == '[{"role":"user","content":"{\\"a\\":1} / is {{ x }}"}]'  # data, not template


def test_json_objects_in_prose() -> None:
    text = 'a {"x": 1} b {bad c {y: [1, 2]} d {"z": {"w": 2}'
    assert extract_json_objects(text) == [{"x": 1}, {"y": [1, 2]}, {"z": {"w": 2}}]
    assert extract_json_objects('see http://x.io {"u": "http://y"}') == [{"u": "http://y"}]


@given(st.text(max_size=200))
def test_finding_json_never_raises(text: str) -> None:
    assert isinstance(extract_json_objects(text), list)


def test_javascript_values() -> None:
    assert [js_number(x) for x in (1.0, 0.1 + 0.2, 1e21, 1e-7, 123456789012345678)] == [
        "1", "0.30000000000000004", "1e+21", "1e-7", "123456789012345680"
    ]  # fmt: skip
    assert js_string([1, None, [2, "a"]]) == "1,,2,a" and js_string({"a": 1}) == "[object Object]"
    assert js_stringify({"a": [1.0, "é"]}) == '{"a":[1,"é"]}'
    assert js_regex("a$").search("a\n") is None and js_regex("\\d").search("٣") is None


def test_nunjucks_rendering_prints_as_nunjucks_does() -> None:
    env = promptfoo_environment({"TONE": "kind"})
    template = env.from_string(
        "{{ a }}|{{ missing }}|{{ missing.x }}|{{ n }}|{{ l }}|{{ o | dump }}|{{ env.TONE }}"
    )
    out = template.render({"a": None, "n": 2.0, "l": ["x", "y"], "o": {"k": True}})
    assert out == '|||2|x,y|{"k":true}|kind'
    escape = "{{ ''.__class__.__mro__ }}{{ cycler.__init__.__globals__ }}{{ env.__class__ }}"
    assert env.from_string(escape).render() == ""  # the sandbox: nothing of Python's reaches it


def test_a_rendered_prompt_as_each_provider_reads_it() -> None:
    chat = (
        '[{"role": "system", "content": "Be {{ tone }}"}, {"role": "user", "content": "{{ q }}"}]'
    )
    rendered = PromptfooPrompt(chat, "p.json", {}).render({"tone": "brief", "q": 'say "hi"'})
    assert rendered.startswith('[\n  {\n    "role": "system"')  # promptfoo re-indents it
    assert openai_messages(rendered) == [("system", "Be brief"), ("user", 'say "hi"')]
    assert anthropic_messages("system: Be kind\n\nuser: hi\nthere\nassistant: ok") == [
        ("system", "Be kind"), ("user", "hi\nthere"), ("assistant", "ok")
    ]  # fmt: skip
    assert openai_messages("plain {text}") == [("user", "plain {text}")]
    with pytest.raises(ChatPromptError):
        openai_messages('[{"role": "user", "content": "x"},]')  # looks like JSON, does not parse
    partial = PromptfooPrompt("Use {{ x }} and a stray {{ brace", "p.txt", {})
    assert partial.render({"x": 1}) == "Use {{ x }} and a stray {{ brace"  # wrapped in raw
    nested = PromptfooPrompt("{{ greeting }}", "p.txt", {})
    assert nested.render({"greeting": "hi {{ name }}", "name": "Ann"}) == "hi Ann"


def test_csv_strings_become_assertions_as_promptfoo_reads_them() -> None:
    assert from_string('contains-any: a, "b, c"') == {
        "type": "contains-any",
        "value": ["a", "b, c"],
    }
    assert from_string("latency(200)") == {"type": "latency", "value": None, "threshold": 200.0}
    assert from_string("grade: is polite") == {"type": "llm-rubric", "value": " is polite"}
    assert from_string("just text") == {"type": "equals", "value": "just text"}
    assert split_values(' a ,, "x""y" , b') == ["a", 'x"y', "b"]
    with pytest.raises(ValueError):
        split_values('"open')


def test_the_gates_prompts_have_nunjucks_filters_and_name_unknown_ones(tmp_path) -> None:
    from gate.errors import InputError
    from gate.providers.prompts import PromptTemplate

    good = tmp_path / "good.j2"
    good.write_text("{{ data | dump }} {{ (raw | load).k }} {{ text | nl2br }}")
    (message,) = PromptTemplate(good, "prompts/good.j2", root=tmp_path).render(
        {"data": {"a": [1, 2.0]}, "raw": '{"k": "v"}', "text": "a\nb"}
    )
    assert message.content == '{"a":[1,2]} v a<br />\nb'
    bad = tmp_path / "bad.j2"
    bad.write_text("Hello\n{% if loud %}{{ name | shout }}{% endif %}\n")
    with pytest.raises(InputError) as info:
        PromptTemplate(bad, "prompts/bad.j2", root=tmp_path)
    assert str(info.value).startswith("prompts/bad.j2:2: unknown filter `shout`")
    (tmp_path / "part.j2").write_text("one\n{{ x | whisper }}\n")
    (tmp_path / "main.j2").write_text("{% include 'part.j2' %}\n")
    with pytest.raises(InputError) as info:  # in an included file: named at its own line
        PromptTemplate(tmp_path / "main.j2", "main.j2", root=tmp_path)
    assert str(info.value).startswith("part.j2:2: unknown filter `whisper`")
