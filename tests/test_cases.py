"""Case files: both formats, three file types, globs and lists; errors name file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gate.errors import InputError
from gate.inputs.cases import load_cases

SPEC_ROWS = """\
{"id": "faq-001", "task": "faq", "severity": "blocker",
 "input": {"question": "Do I need CAC registration before a business bank account?"},
 "expect": {"must_include": ["CAC"], "must_not_include": ["I am a lawyer"], "max_chars": 800}}
{"id": "code-012", "task": "coding",
 "input": {"prompt": "Write a Python function is_even(n) with type hints."},
 "expect": {"must_compile": true,
            "hidden_tests": [{"call": "is_even(2)", "eq": true}, {"call": "is_even(3)", "eq": false}]}}
"""


def one_per_line(text: str) -> str:
    """SPEC prints its rows wrapped for reading; in a .jsonl file each is on one line."""
    decoder, out, pos = json.JSONDecoder(), [], 0
    while pos < len(text.strip()):
        value, pos = decoder.raw_decode(text, pos)
        out.append(json.dumps(value))
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return "\n".join(out) + "\n"


def test_spec_format_a_rows_load_unchanged(tmp_path: Path) -> None:
    (tmp_path / "faq.jsonl").write_text(one_per_line(SPEC_ROWS))
    faq, code = load_cases("faq.jsonl", tmp_path)
    assert (faq.id, faq.task, faq.severity, faq.line) == ("faq-001", "faq", "blocker", 1)
    assert faq.expect.must_include == ["CAC"] and faq.expect.max_chars == 800
    assert code.expect.must_compile is True
    assert [h.call for h in code.expect.hidden_tests] == ["is_even(2)", "is_even(3)"]
    assert code.system_input() == {"prompt": code.input["prompt"], "id": "code-012"}


def test_format_b_becomes_prompt_input_and_test_code(tmp_path: Path) -> None:
    row = {
        "id": "b1",
        "prompt": "Write f()",
        "test_code": "def test_f():\n    assert f() == 1\n",
        "reference": "def f(): return 1",
    }
    (tmp_path / "domain_sdk.jsonl").write_text(json.dumps(row) + "\n")
    (case,) = load_cases("domain_sdk.jsonl", tmp_path)
    assert case.task == "domain_sdk"  # defaults to the file's stem
    assert case.input == {"prompt": "Write f()"}
    assert case.expect.test_code == row["test_code"] and case.reference == row["reference"]
    assert case.severity == "major" and case.heldout is False


def test_json_array_and_yaml_keep_line_numbers(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(
        '[\n  {"id": "j1", "input": {}},\n\n  {"id": "j2", "input": {}}\n]\n'
    )
    (tmp_path / "b.yaml").write_text("- id: y1\n  input: {q: 1}\n- id: y2\n  heldout: true\n")
    cases = load_cases(["a.json", "b.yaml"], tmp_path)
    assert [(c.id, c.line, c.task) for c in cases] == [
        ("j1", 2, "a"),
        ("j2", 4, "a"),
        ("y1", 1, "b"),
        ("y2", 3, "b"),
    ]
    assert cases[3].heldout is True


def test_globs_and_lists(tmp_path: Path) -> None:
    for name in ("x", "y"):
        (tmp_path / "suite").mkdir(exist_ok=True)
        (tmp_path / "suite" / f"{name}.jsonl").write_text(json.dumps({"id": name}) + "\n")
    (tmp_path / "suite" / "notes.txt").write_text("not cases")
    assert [c.id for c in load_cases("suite/*", tmp_path)] == ["x", "y"]
    assert [c.id for c in load_cases("**/*.jsonl", tmp_path)] == ["x", "y"]
    with pytest.raises(InputError, match="no case files match"):
        load_cases("nothing/*.jsonl", tmp_path)
    with pytest.raises(InputError, match="not found"):
        load_cases(["suite/x.jsonl", "missing.jsonl"], tmp_path)


def error_for(tmp_path: Path, name: str, text: str) -> InputError:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as info:
        load_cases(name, tmp_path)
    return info.value


def test_malformed_json_names_file_and_line(tmp_path: Path) -> None:
    err = error_for(tmp_path, "s.jsonl", '{"id": "a"}\n\n{"id": "b",}\n')
    assert (err.file, err.line) == ("s.jsonl", 3)
    assert str(err).startswith("s.jsonl:3: malformed JSON")


def test_duplicate_id_names_both_places(tmp_path: Path) -> None:
    (tmp_path / "one.jsonl").write_text('{"id": "a"}\n{"id": "dup"}\n')
    (tmp_path / "two.yaml").write_text("- id: x\n- id: dup\n")
    with pytest.raises(InputError) as info:
        load_cases(["one.jsonl", "two.yaml"], tmp_path)
    assert (
        str(info.value)
        == "two.yaml:2: key `id`: duplicate case id 'dup' (first defined at one.jsonl:2)"
    )


def test_unknown_expect_key_suggests_the_closest(tmp_path: Path) -> None:
    err = error_for(
        tmp_path, "s.jsonl", '{"id": "a"}\n{"id": "b", "expect": {"must_inclde": ["x"]}}\n'
    )
    assert (err.line, err.key) == (2, "expect.must_inclde")
    assert "did you mean `must_include`" in str(err)


def test_unknown_top_level_key_in_yaml_points_at_the_key(tmp_path: Path) -> None:
    err = error_for(tmp_path, "s.yaml", "- id: a\n- id: b\n  input: {}\n  severty: blocker\n")
    assert (err.line, err.key) == (4, "severty") and "did you mean `severity`" in str(err)


@pytest.mark.parametrize(
    ("row", "key", "fragment"),
    [
        ({"id": 7}, "id", "string"),
        ({"id": "a", "severity": "critical"}, "severity", "blocker"),
        ({"id": "a", "expect": {"max_chars": "800"}}, "expect.max_chars", "integer"),
        ({"id": "a", "expect": {"must_include": [1]}}, "expect.must_include[0]", "string"),
        ({"id": "a", "input": "question?"}, "input", "dictionary"),
        ({"id": "a", "heldout": "yes"}, "heldout", "boolean"),
        ({"id": "a", "expect": {"regex": ["(unclosed"]}}, "expect.regex", "invalid regex"),
        (
            {"id": "a", "expect": {"hidden_tests": [{"call": "f(", "eq": 1}]}},
            "expect.hidden_tests[0].call",
            "not a Python expression",
        ),
        ({"id": "a", "expect": {"rubric": {"tone": 3}}}, "expect.rubric", "0, 1 or 2"),
        (
            {"id": "a", "expect": {"json": {"type": "nonsense"}}},
            "expect.json",
            "invalid JSON Schema",
        ),
        ({"id": "a", "prompt": "p", "input": {}}, None, "either `input`"),
    ],
)
def test_wrong_types_are_reported(
    tmp_path: Path, row: dict, key: str | None, fragment: str
) -> None:
    err = error_for(tmp_path, "s.jsonl", json.dumps(row) + "\n")
    assert err.line == 1 and err.key == key, str(err)
    assert fragment in str(err)


def test_non_object_rows_and_unsupported_files(tmp_path: Path) -> None:
    assert "must be a JSON object" in str(error_for(tmp_path, "s.jsonl", "[1, 2]\n"))
    assert "array of cases" in str(error_for(tmp_path, "s.json", '{"id": "a"}'))
    assert "unsupported case file" in str(error_for(tmp_path, "s.tsv", "id\ta\n"))


@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("icontains", "here it is `must_include` (case-insensitive)"),
        ("not-icontains", "here it is `must_not_include`"),
        ("contains-any", "here it is `contains_any`"),
        ("is-json", "here it is `json_exact: true`"),
        ("javascript", "unsupported: write the check in Python and name it in `python`"),
        ("llm-rubric", "here it is `rubric`"),
    ],
)
def test_other_tools_names_say_what_the_key_is_here(tmp_path: Path, key: str, hint: str) -> None:
    err = error_for(tmp_path, "s.jsonl", json.dumps({"id": "a", "expect": {key: "x"}}) + "\n")
    assert (err.line, err.key) == (1, f"expect.{key}")
    assert "unknown key (another tool's name; " in str(err) and hint in str(err)


def test_a_misspelt_new_check_suggests_it(tmp_path: Path) -> None:
    err = error_for(tmp_path, "s.jsonl", '{"id": "a", "expect": {"containz": ["x"]}}\n')
    assert "did you mean `contains`" in str(err)
    err = error_for(tmp_path, "s.jsonl", '{"id": "a", "expect": {"tool_call": [{"name": "f"}]}}\n')
    assert "here it is `tool_calls`" in str(err)
    bad = {"id": "a", "expect": {"no_tool_calls": True, "tool_calls": [{"name": "f"}]}}
    err = error_for(tmp_path, "s.jsonl", json.dumps(bad) + "\n")
    assert "`no_tool_calls: true` contradicts `tool_calls`" in str(err)
    bad = {"id": "a", "expect": {"tool_calls": [{"name": "f", "args": {}}]}}
    err = error_for(tmp_path, "s.jsonl", json.dumps(bad) + "\n")
    assert err.key == "expect.tool_calls[0].args" and "did you mean `arguments`" in str(err)
