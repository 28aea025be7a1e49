"""CSV case files: promptfoo's columns and `type: value` checks, the gate's own columns, errors
naming file, line, row and column, a property test of the parser, and a CSV suite through
`gate run` and `gate validate`."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from helpers.cli import ECHO_APP, Project, gate_here
from hypothesis import given
from hypothesis import strategies as st

from gate.errors import InputError
from gate.inputs.cases import load_cases
from gate.promptfoo.inputs.csv_tests import read_rows


def load(tmp_path: Path, text: str, name: str = "faq.csv") -> list:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return load_cases(name, tmp_path)


def assertion_of(tmp_path: Path, cell: str) -> tuple:
    (case,) = load(tmp_path, f'question,__expected\nq,"{cell}"\n')
    (a,) = case.assertions.assertions
    shown = a.python_target if a.type == "python" and a.python_source is None else a.value
    return ("not-" if a.negated else "") + a.type, shown, a.threshold


@pytest.mark.parametrize(
    ("cell", "assertion"),
    [
        ("Paris", ("equals", "Paris", None)),
        ("Paris: the capital", ("equals", "Paris: the capital", None)),
        ("equals: 42", ("equals", "42", None)),
        ("contains: Paris", ("contains", "Paris", None)),
        ("contains:Paris", ("contains", "Paris", None)),
        ("icontains: paris", ("icontains", "paris", None)),
        ("not-icontains: sorry", ("not-icontains", "sorry", None)),
        ("not-contains: Sorry", ("not-contains", "Sorry", None)),
        ("contains-any: Paris, Lyon", ("contains-any", ["Paris", "Lyon"], None)),
        ('contains-any: ""a, b"", c', ("contains-any", ["a, b", "c"], None)),
        ("contains-all: Paris,Lyon", ("contains-all", ["Paris", "Lyon"], None)),
        ("not-contains-all: Paris,Lyon", ("not-contains-all", ["Paris", "Lyon"], None)),
        ("icontains-all: paris, lyon", ("icontains-all", ["paris", "lyon"], None)),
        ("icontains-any: a.b, c", ("icontains-any", ["a.b", "c"], None)),
        ("regex: \\d{3}", ("regex", "\\d{3}", None)),
        ("starts-with: Yes", ("starts-with", "Yes", 0.75)),
        ("is-json", ("is-json", None, None)),
        ("contains-json", ("contains-json", None, None)),
        ('contains-json: {""type"": ""object""}', ("contains-json", {"type": "object"}, None)),
        ("latency(500)", ("latency", None, 500.0)),
        ("llm-rubric: is polite", ("llm-rubric", " is polite", None)),
        ("python: checks/tone.py", ("python", "checks.tone:get_assert", None)),
        ("python: checks/tone.py:polite", ("python", "checks.tone:polite", None)),
        ("file://checks/tone.py:polite", ("python", "checks.tone:polite", None)),
        ("python: evals.checks:polite", ("python", "evals.checks:polite", None)),
        ("python(0.8): checks.py", ("python", "checks:get_assert", None)),
    ],
)
def test_promptfoo_cells_become_assertions(tmp_path: Path, cell: str, assertion: tuple) -> None:
    assert assertion_of(tmp_path, cell) == assertion


def test_inline_python_in_a_cell_is_a_module_of_its_own(tmp_path: Path) -> None:
    (case,) = load(tmp_path, "question,__expected\nq,python: output == 'q'\n")
    (a,) = case.assertions.assertions
    module, _, function = a.python_target.partition(":")
    assert function == "main" and module.startswith("_promptfoo_inline_")
    assert "    return output == 'q'" in a.python_source


def test_columns_of_a_row(tmp_path: Path) -> None:
    text = (
        "id,task,severity,heldout,question,context,__expected1,__expected2,__description,"
        "__metric,__metadata:owner,__metadata:tags[],__threshold,__expected3\n"
        'cap-fr,geo,blocker,yes,"Capital of France?","{""a"": 1}",contains: Paris,icontains: '
        'capital,The capital,accuracy,ana,"geo,eu\\,west",0.7,python: checks.py\n'
        "\n"
        ',,,,"Two\nlines",,,,,,,,,\n'
    )
    first, second = load(tmp_path, text)
    assert (first.id, first.task, first.severity, first.heldout, first.line) == (
        "cap-fr", "geo", "blocker", True, 2
    )  # fmt: skip
    assert first.input == {"question": "Capital of France?", "context": '{"a": 1}'}
    labels = [a.label for a in first.assertions.assertions]
    assert labels == ["contains:Paris", "icontains:capital", "python:checks:get_assert"]
    assert {a.metric for a in first.assertions.assertions} == {"accuracy"}
    assert first.assertions.threshold == 0.7  # the row's: its weighted score must reach it
    assert first.metadata == {
        "description": "The capital",
        "owner": "ana",
        "tags": ["geo", "eu,west"],
    }
    # no id: the file's name and a hash of the input; defaults as in JSONL; its own line
    assert second.id.startswith("faq-") and len(second.id) == len("faq-") + 8
    assert (second.task, second.severity, second.heldout, second.line) == ("faq", "major", False, 4)
    assert second.input == {"question": "Two\nlines", "context": ""}
    assert load(tmp_path, text)[1].id == second.id  # stable


def error(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as info:
        load(tmp_path, text)
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("q,__expected\nx,similar: Paris\n", 2, "row 2: assertion type `similar` is not supported (the gate cannot run it)"),
        ("q,__expected\nx,javascript: output.length < 9\n", 2, "JavaScript does not run here"),
        ("q,__expected\nx,moderation: a\n", 2, "`moderation` is not supported (the gate cannot run it)"),
        ("q,__expected2\nx,y\nz,regex: [\n", 3, "row 3: `regex` '[' does not compile"),
        ("q,__expected\nx,contains:\n", 2, "`contains` needs a string or number value"),
        ("q,__expected\nx,latency: 5\n", 2, None),
        ("q,__prefix\nx,Context:\n", 2, "column `__prefix` (row 2): no equivalent here"),
        ("q,__expectd\nx,y\n", 1, "column `__expectd`: unknown special column (did you mean `__expected`?)"),
        ("q,_expected\nx,y\n", 1, "did you mean `__expected`?"),
        ("q,input\nx,y\n", 1, "column `input`: the prompt's `input` is the whole case input"),
        ("q,q\nx,y\n", 1, "column `q` appears twice"),
        ("q,,r\nx,y,z\n", 1, "header cell 2 is empty"),
        ("q,__metadata:\nx,y\n", 1, "`__metadata:` needs a key"),
        ("q\nx,y\n", 2, "row 2 has 2 cells, the header has 1"),
        ('q\n"x\n', 2, "malformed CSV"),
        ("q,severity\nx,critical\n", 2, "column `severity` (row 2)"),
        ("q,heldout\nx,maybe\n", 2, "column `heldout` (row 2): 'maybe' is not true or false"),
        ("q,__threshold\nx,half\n", 2, "column `__threshold` (row 2): 'half' is not a number"),
        ("q,__config:__expected:weight\nx,1\n", 2, "only `__config:__expectedN:threshold`"),
        ("q,__expected,__config:__expected3:threshold\nx,a,0.5\n", 2, "no such `__expected` value"),
        ("q,__expected\nsame,a\nsame,b\n", 3, "the same input as row 2 (line 2): give the rows an `id` column"),
        ("id,q\na,x\na,y\n", 3, "duplicate case id 'a' (first defined at faq.csv:2)"),
        ("", 1, "a CSV case file needs a header row"),
    ],
)  # fmt: skip
def test_errors_name_file_line_row_and_column(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    if message is None:  # latency without a threshold in parentheses: promptfoo's 0.75 ms
        (case,) = load(tmp_path, text)
        assert case.assertions.assertions[0].threshold == 0.75
        return
    err = error(tmp_path, text)
    assert (err.file, err.line) == ("faq.csv", line), str(err)
    assert message in str(err)


def test_config_threshold_sets_the_assertion_threshold(tmp_path: Path) -> None:
    text = "q,__expected,__expected2,__config:__expected2:threshold\nx,a,python: c.py,0.9\n"
    (case,) = load(tmp_path, text)
    assert [a.threshold for a in case.assertions.assertions] == [None, 0.9]


def test_a_bom_and_crlf_lines_are_read(tmp_path: Path) -> None:
    (tmp_path / "faq.csv").write_bytes('\ufeffid,q\r\na,"x\r\ny"\r\nb,z\r\n'.encode())
    first, second = load_cases("faq.csv", tmp_path)
    assert (first.id, first.input, second.line) == ("a", {"q": "x\ny"}, 4)


CELL = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00\r"), max_size=30
)
NAMES = st.lists(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), min_size=1, max_size=5, unique=True
)


@given(names=NAMES, data=st.data())
def test_the_parser_reads_back_what_a_csv_writer_wrote(
    names: list[str], data: st.DataObject
) -> None:
    rows = data.draw(st.lists(st.lists(CELL, min_size=len(names), max_size=len(names)), max_size=6))
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([names, *rows])
    text = buffer.getvalue()
    header, read = read_rows(text, "t.csv")
    kept = [row for row in rows if any(cell.strip() for cell in row)]  # blank rows are skipped
    assert header == names
    assert [list(r.cells.values()) for r in read] == kept
    lines = text.split("\n")
    for row in read:  # each row's line is where its first cell starts
        written = io.StringIO()
        csv.writer(written, lineterminator="\n").writerow(list(row.cells.values()))
        assert "\n".join(lines[row.line - 1 :]).startswith(written.getvalue().rstrip("\n"))


def test_a_csv_suite_runs_and_validates(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("app.py", ECHO_APP)
    p.write(
        "cases/faq.csv",
        """
        id,say,__expected,__expected2,severity
        paris,Paris is the capital,contains: Paris,icontains: CAPITAL,blocker
        lyon,Lyon is the capital,contains: Paris,,
        json,"Here you go: {""city"": ""Paris""}",contains-json,,
        bare,42,42,,
        spaced,42 ,42,,
        either,Lyon,"not-contains-all: Paris, Lyon",,
        open,anything at all,,,
        """,
    )
    p.config({"cases": "cases/faq.csv", "system": {"kind": "python", "target": "app:answer"}})
    done = gate_here("run", "--out", "reports", cwd=p.root)
    assert done.code == 0, done.err
    lines = {line["id"]: line for line in p.read_report()[1]}
    assert {i: line["status"] for i, line in lines.items()} == {
        "paris": "pass",
        "lyon": "fail",
        "json": "pass",
        "bare": "pass",
        "spaced": "fail",
        "either": "pass",
        "open": "pass",
    }  # fmt: skip  (promptfoo's equals is exact: "42 " is not "42")
    assert (lines["paris"]["severity"], lines["lyon"]["file"], lines["lyon"]["line"]) == (
        "blocker", "cases/faq.csv", 3
    )  # fmt: skip
    done = gate_here("validate", cwd=p.root)
    assert done.code == 0, done.err
    assert (
        "gate: warning: cases/faq.csv:8: case 'open' has no expectation: it passes whatever "
        "the system answers"
    ) in done.err
    assert "7 cases, 0 with a reference, 0 broken, 1 without an expectation" in done.out
    p.write("cases/faq.csv", "id,say,__expected\nx,hi,similar: hello\n")
    done = gate_here("validate", cwd=p.root)
    assert done.code == 2 and "Traceback" not in done.err
    assert "cases/faq.csv:2: row 2: assertion type `similar` is not supported" in done.err


def test_a_reference_runs_through_the_rows_assertions(tmp_path: Path) -> None:
    p = Project(tmp_path)
    p.write("app.py", ECHO_APP)
    p.write(
        "c.csv",
        "id,say,reference,__expected\na,x,Paris is big,contains: Paris\nb,y,Lyon,contains: Paris\n",
    )
    p.config({"cases": "c.csv", "system": {"kind": "python", "target": "app:answer"}})
    done = gate_here("validate", cwd=p.root)
    assert done.code == 1, done.err
    assert (
        'c.csv:3: b: reference fail: contains:Paris: Expected output to contain "Paris"' in done.out
    )
