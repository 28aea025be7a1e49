"""CSV case files (what teams keep in a spreadsheet) and promptfoo's CSV tests: a header row,
then one case per row.

Columns: `id`, `task`, `severity`, `heldout` and `reference` as in JSONL, in a case file (no
`id` column: the id is the file's name and a hash of the row's input, so it stays with the row
when others move); promptfoo's `__expected` / `__expected1..N` (its `type: value` syntax, see
`gate.promptfoo.inputs.assertions`: each is an assertion, run with promptfoo's semantics),
`__description`, `__metric` (the metric of the row's assertions), `__threshold` (the row's:
the weighted score of its assertions must reach it), `__metadata:KEY` (`KEY[]`: a
comma-separated list, `\\,` a literal comma) and `__config:__expectedN:threshold`; every other
column is an input variable (a string). promptfoo's `__prefix`, `__suffix` and
`__providerOutput` have no equivalent: a value in one is an error. Errors name the file, the
line, the spreadsheet row and the column (exit 2).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gate.errors import InputError
from gate.inputs.sourcemap import suggest
from gate.promptfoo.inputs.assertions import AssertionContext, AssertionSet, from_string

CASE_COLUMNS = ("id", "task", "severity", "heldout", "reference")
SPECIAL = ("__expected", "__description", "__metric", "__threshold", "__metadata:", "__config:")
NO_EQUIVALENT = {
    "__prefix": "text added to the prompt: put it in the prompt template",
    "__suffix": "text added to the prompt: put it in the prompt template",
    "__providerOutput": "a fixed output: record outputs with `gate run --record` and replay them",
}
COLLIDING = {
    "input": "the prompt's `input` is the whole case input: rename the column",
    "expect": "checks go in `__expected` columns",
}
TRUE = {"true", "yes", "y", "1"}
FALSE = {"false", "no", "n", "0", ""}
_SPLIT = re.compile(r"(?<!\\),")
_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


@dataclass
class Row:
    """One data row: where it is and its cells by column."""

    line: int
    number: int  # in the spreadsheet (the header is row 1)
    cells: dict[str, str]


@dataclass
class Located:
    """Errors of one row: the file, the line and the spreadsheet row."""

    display: str
    row: Row

    def error(self, message: str, column: str | None = None) -> InputError:
        where = f"column `{column}` (row {self.row.number})" if column else f"row {self.row.number}"
        return InputError(f"{where}: {message}", file=self.display, line=self.row.line)


def read_rows(text: str, display: str, case_file: bool = True) -> tuple[list[str], list[Row]]:
    """The header and the data rows; blank rows are skipped, short rows padded. A case file's
    columns may not be the gate's own names (`input`, `expect`); a promptfoo CSV tests file's
    columns are variables only."""
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""), strict=True)
    header: list[str] | None = None
    rows: list[Row] = []
    number = 0
    try:
        end = 0
        for cells in reader:
            start, end = end + 1, reader.line_num
            if not any(cell.strip() for cell in cells):
                continue
            number += 1
            if header is None:
                header = _header(cells, display, start, case_file)
                continue
            if len(cells) > len(header):
                raise InputError(
                    f"row {number} has {len(cells)} cells, the header has {len(header)}",
                    file=display,
                    line=start,
                )
            cells += [""] * (len(header) - len(cells))
            rows.append(Row(start, number, dict(zip(header, cells, strict=True))))
    except csv.Error as exc:
        raise InputError(f"malformed CSV: {exc}", file=display, line=reader.line_num) from None
    if header is None:
        raise InputError("a CSV case file needs a header row", file=display, line=1)
    return header, rows


def _header(cells: list[str], display: str, line: int, case_file: bool) -> list[str]:
    names = [cell.strip() for cell in cells]
    for index, name in enumerate(names):
        if not name:
            raise InputError(f"header cell {index + 1} is empty", file=display, line=line)
        if names.index(name) != index:
            raise InputError(
                f"column `{name}` appears twice in the header", file=display, line=line
            )
        _check_column(name, display, line, case_file)
    return names


def _check_column(name: str, display: str, line: int, case_file: bool) -> None:
    problem = None
    if name in COLLIDING and case_file:
        problem = COLLIDING[name]
    elif name.startswith("_") and not name.startswith("__"):
        if any(name.startswith(s[1:]) for s in (*SPECIAL, *NO_EQUIVALENT)):
            problem = f"did you mean `_{name}`? (special columns start with two underscores)"
    elif name.startswith("__") and not name.startswith(SPECIAL) and name not in NO_EQUIVALENT:
        known = [s.rstrip(":") for s in SPECIAL] + list(NO_EQUIVALENT)
        problem = f"unknown special column{suggest(name, known)}"
    elif name == "__metadata:" or name == "__metadata:[]":
        problem = "`__metadata:` needs a key, like `__metadata:category`"
    if problem:
        raise InputError(f"column `{name}`: {problem}", file=display, line=line)


def _case_id(stem: str, inputs: dict[str, str]) -> str:
    digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
    return f"{stem}-{digest[:8]}"


def _metadata(column: str, value: str) -> tuple[str, Any]:
    key = column.removeprefix("__metadata:")
    if key.endswith("[]"):
        items = [item.replace("\\,", ",").strip() for item in _SPLIT.split(value)]
        return key[:-2], [item for item in items if item]
    return key, value


def _number(value: str, column: str, at: Located) -> float:
    if not _NUMBER.match(value):
        raise at.error(f"{value!r} is not a number", column)
    return float(value)


@dataclass
class RowTest:
    """One row as promptfoo reads it (`testCaseFromCsvRow`), with the case file's columns."""

    vars: dict[str, str] = field(default_factory=dict)
    asserts: list[dict[str, Any]] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)  # the column of each assertion
    record: dict[str, Any] = field(default_factory=dict)  # id, task, severity, heldout, ...
    metadata: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
    threshold: float | None = None

    def assertions(self, at: Located, read: Callable[[str], str]) -> AssertionSet | None:
        """The row's `__expected` columns (and `__threshold`) as a case's assertions, their
        `file://` values read with `read`; None when it has none."""
        if not self.asserts and self.threshold is None:
            return None
        from gate.promptfoo.inputs.assertion_values import parse_assertions  # jinja2

        ctx = AssertionContext(
            where=f"{at.display}:{at.row.line}",
            test=f"row {at.row.number}",
            vars=self.vars,
            read=read,
        )
        return AssertionSet(
            assertions=parse_assertions(self.asserts, ctx), threshold=self.threshold
        )

    def test(self) -> dict[str, Any]:
        """The row as a promptfoo test mapping."""
        test: dict[str, Any] = {"vars": self.vars, "assert": self.asserts}
        if self.description:
            test["description"] = self.description
        if self.threshold is not None:
            test["threshold"] = self.threshold
        if self.metadata:
            test["metadata"] = self.metadata
        return test


class RowReader:
    """One row: its variables, assertions and (in a case file) the case's own columns."""

    def __init__(self, row: Row, display: str, case_columns: tuple[str, ...]) -> None:
        self.at = Located(display, row)
        self.case_columns = case_columns
        self.out = RowTest()
        self.metric: str | None = None
        self.configs: dict[int, tuple[str, float]] = {}  # assertion index -> (column, threshold)

    def read(self) -> RowTest:
        for column, value in self.at.row.cells.items():
            self._cell(column, value)
        for index, (column, threshold) in self.configs.items():
            if index >= len(self.out.asserts):
                raise self.at.error("there is no such `__expected` value in the row", column)
            self.out.asserts[index]["threshold"] = threshold
        if self.metric:
            for assertion in self.out.asserts:
                assertion["metric"] = self.metric
        return self.out

    def _cell(self, column: str, value: str) -> None:
        if column in self.case_columns:
            self._case_column(column, value.strip())
        elif column.startswith("__expected"):
            if value.strip():
                self.out.asserts.append(from_string(value.strip()))
                self.out.columns.append(column)
        elif column in NO_EQUIVALENT:
            if value.strip():
                raise self.at.error(f"no equivalent here ({NO_EQUIVALENT[column]})", column)
        elif column == "__description":
            self.out.description = value or None
        elif column == "__metric":
            self.metric = value or None
        elif column.startswith("__metadata:"):
            key, parsed = _metadata(column, value)
            if value.strip():
                self.out.metadata[key] = parsed
        elif column == "__threshold":
            if value.strip():
                self.out.threshold = _number(value.strip(), column, self.at)
        elif column.startswith("__config:"):
            self._config(column, value.strip())
        else:
            self.out.vars[column] = value

    def _case_column(self, column: str, value: str) -> None:
        if column == "heldout":
            if value.lower() not in TRUE | FALSE:
                raise self.at.error(f"{value!r} is not true or false", column)
            self.out.record["heldout"] = value.lower() in TRUE
        elif value:
            self.out.record[column] = value

    def _config(self, column: str, value: str) -> None:
        target, _, key = column.removeprefix("__config:").rpartition(":")
        index = re.fullmatch(r"__expected(\d*)", target)
        if key != "threshold" or index is None or index.group(1) == "0":
            raise self.at.error("only `__config:__expectedN:threshold` has an equivalent", column)
        if value:
            position = max(int(index.group(1) or 1) - 1, 0)  # __expected and __expected1: the first
            self.configs[position] = (column, _number(value, column, self.at))


def csv_tests(text: str, display: str) -> Iterator[tuple[RowTest, Located]]:
    """promptfoo's CSV tests file: each row, with where it is."""
    _, rows = read_rows(text, display, case_file=False)
    for row in rows:
        yield RowReader(row, display, ()).read(), Located(display, row)


def csv_records(text: str, display: str, stem: str) -> Iterator[tuple[RowTest, Located]]:
    """Each row of a case file, its `record` the case's fields (`id`, `task`, `input`, ...),
    with where it is (to name its row and column in the errors validation finds)."""
    _, rows = read_rows(text, display)
    seen: dict[str, Row] = {}
    for row in rows:
        test = RowReader(row, display, CASE_COLUMNS).read()
        record = test.record
        record.setdefault("id", _case_id(stem, test.vars))
        record["input"] = test.vars
        metadata = dict(test.metadata)
        if test.description:
            metadata = {"description": test.description, **metadata}
        if metadata:
            record["metadata"] = metadata
        first = seen.get(record["id"])
        if first is not None and not row.cells.get("id", "").strip():
            raise Located(display, row).error(
                f"the same input as row {first.number} (line {first.line}): give the rows an "
                "`id` column, or remove one"
            )
        seen.setdefault(record["id"], row)
        yield test, Located(display, row)
