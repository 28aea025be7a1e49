"""CSV case files (what teams keep in a spreadsheet): a header row, then one case per row.

Columns: `id`, `task`, `severity`, `heldout` and `reference` as in JSONL (no `id` column: the
id is the file's name and a hash of the row's input, so it stays with the row when others
move); promptfoo's `__expected` / `__expected1..N` (its `type: value` syntax, see
`gate.inputs.assertions`), `__description`, `__metric`, `__threshold` (of the row's `python`
checks), `__metadata:KEY` (`KEY[]`: a comma-separated list, `\\,` a literal comma) and
`__config:__expectedN:threshold`; every other column is an input variable (a string).
promptfoo's `__prefix`, `__suffix` and `__providerOutput` have no equivalent: a value in one is
an error. Errors name the file, the line, the spreadsheet row and the column (exit 2).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from gate.errors import InputError
from gate.inputs.assertions import expectation
from gate.inputs.expect import Expect
from gate.inputs.sourcemap import suggest

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
LIST_KEYS = frozenset(
    {
        "must_include",
        "must_not_include",
        "contains",
        "contains_any",
        "contains_all",
        "regex",
        "not_regex",
        "python",
    }
)


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
    seen: dict[str, str] = field(default_factory=dict)  # expect key -> the column that set it

    def error(self, message: str, column: str | None = None) -> InputError:
        where = f"column `{column}` (row {self.row.number})" if column else f"row {self.row.number}"
        return InputError(f"{where}: {message}", file=self.display, line=self.row.line)


def read_rows(text: str, display: str) -> tuple[list[str], list[Row]]:
    """The header and the data rows; blank rows are skipped, short rows padded."""
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
                header = _header(cells, display, start)
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


def _header(cells: list[str], display: str, line: int) -> list[str]:
    names = [cell.strip() for cell in cells]
    for index, name in enumerate(names):
        if not name:
            raise InputError(f"header cell {index + 1} is empty", file=display, line=line)
        if names.index(name) != index:
            raise InputError(
                f"column `{name}` appears twice in the header", file=display, line=line
            )
        _check_column(name, display, line)
    return names


def _check_column(name: str, display: str, line: int) -> None:
    problem = None
    if name in COLLIDING:
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


def _merge(expect: dict[str, Any], keys: dict[str, Any], column: str, at: Located) -> None:
    for key, value in keys.items():
        if key in LIST_KEYS:
            expect.setdefault(key, []).extend(value)
        elif key in expect and expect[key] != value:
            raise at.error(f"`{key}` is already set by column `{at.seen[key]}`", column)
        else:
            expect[key] = value
        at.seen.setdefault(key, column)


def _assertion(value: str, column: str, at: Located) -> tuple[dict[str, Any], float | None]:
    try:
        keys, threshold = expectation(value)
        Expect.model_validate(keys)
    except ValueError as exc:
        message = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
        raise at.error(message.removeprefix("Value error, "), column) from None
    return keys, threshold


def _threshold(value: str, column: str, at: Located) -> float:
    try:
        number = float(value)
    except ValueError:
        raise at.error(f"{value!r} is not a number", column) from None
    if not 0 <= number <= 1:
        raise at.error(f"{number:g} is not in [0, 1]", column)
    return number


class RowReader:
    """One row as the fields of a case record (`id`, `input`, `expect`, ...)."""

    def __init__(self, row: Row, display: str, stem: str) -> None:
        self.at = Located(display, row)
        self.stem = stem
        self.record: dict[str, Any] = {}
        self.inputs: dict[str, str] = {}
        self.expect: dict[str, Any] = {}
        self.metadata: dict[str, Any] = {}
        self.thresholds: dict[str, float] = {}  # column -> its threshold

    def read(self) -> dict[str, Any]:
        for column, value in self.at.row.cells.items():
            self._cell(column, value)
        self._apply_thresholds()
        record = {**self.record, "input": self.inputs, "expect": self.expect}
        if self.metadata:
            record["metadata"] = self.metadata
        record.setdefault("id", _case_id(self.stem, self.inputs))
        return record

    def _cell(self, column: str, value: str) -> None:
        if column in CASE_COLUMNS:
            self._case_column(column, value.strip())
        elif column.startswith("__expected"):
            if value.strip():
                keys, threshold = _assertion(value, column, self.at)
                _merge(self.expect, keys, column, self.at)
                if threshold is not None:
                    self.thresholds[column] = threshold
        elif column in NO_EQUIVALENT:
            if value.strip():
                raise self.at.error(f"no equivalent here ({NO_EQUIVALENT[column]})", column)
        elif column in ("__description", "__metric"):
            if value.strip():
                self.metadata[column.removeprefix("__")] = value
        elif column.startswith("__metadata:"):
            key, parsed = _metadata(column, value)
            if value.strip():
                self.metadata[key] = parsed
        elif column == "__threshold" or column.startswith("__config:"):
            self._config(column, value.strip())
        else:
            self.inputs[column] = value

    def _case_column(self, column: str, value: str) -> None:
        if column == "heldout":
            if value.lower() not in TRUE | FALSE:
                raise self.at.error(f"{value!r} is not true or false", column)
            self.record["heldout"] = value.lower() in TRUE
        elif value:
            self.record[column] = value

    def _config(self, column: str, value: str) -> None:
        if not value:
            return
        if column == "__threshold":
            self.thresholds[column] = _threshold(value, column, self.at)
            return
        target, _, key = column.removeprefix("__config:").rpartition(":")
        if key != "threshold" or not target.startswith("__expected"):
            raise self.at.error("only `__config:__expectedN:threshold` has an equivalent", column)
        self.thresholds[column] = _threshold(value, column, self.at)

    def _apply_thresholds(self) -> None:
        if not self.thresholds:
            return
        column = next(iter(self.thresholds))
        if "python" not in self.expect:
            raise self.at.error("a threshold applies to `python` checks only", column)
        values = set(self.thresholds.values())
        if len(values) > 1:
            raise self.at.error("the row's python checks share one threshold", column)
        self.expect["threshold"] = values.pop()


def csv_records(text: str, display: str, stem: str) -> Iterator[tuple[dict[str, Any], Located]]:
    """Each row as a case record (the fields of JSONL's format A), with where it is (to name
    its row and column in the errors the record's validation finds)."""
    _, rows = read_rows(text, display)
    seen: dict[str, Row] = {}
    for row in rows:
        record = RowReader(row, display, stem).read()
        first = seen.get(record["id"])
        if first is not None and not row.cells.get("id", "").strip():
            raise Located(display, row).error(
                f"the same input as row {first.number} (line {first.line}): give the rows an "
                "`id` column, or remove one"
            )
        seen.setdefault(record["id"], row)
        yield record, Located(display, row)
