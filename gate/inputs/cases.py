"""Eval cases: both published formats, from .jsonl, .json and .yaml files, and CSV files (see
`gate.promptfoo.inputs.csv_tests`), with line numbers.

Format A: `{id, task?, severity?, heldout?, input, expect, reference?}`.
Format B: `{id, prompt, test_code, reference?}` (a domain code benchmark); it becomes a case
whose input is `{"prompt": ...}` and whose `expect.test_code` is the test code.
A CSV row becomes a format A case: its columns are the input, its `__expected` columns
promptfoo assertions (`assertions`, run with promptfoo's semantics). A promptfoo config's tests
become cases too (`gate.promptfoo.inputs.tests`): their `input` is the test's `vars`.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gate.errors import InputError
from gate.inputs.agent import DEFAULT_MAX_STEPS, AgentCase, SimulatedUser, ToolResults, UserTurn
from gate.inputs.expect import EXPECT_KEYS, Expect, check_test_code, foreign_hint
from gate.inputs.paths import display_path
from gate.inputs.policy import Severity
from gate.inputs.sourcemap import Locator, known_fields, load_yaml, validation_error
from gate.inputs.text_files import read_utf8
from gate.promptfoo.inputs.assertions import Assertion, AssertionSet

CASE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml", ".csv")


class CaseRecord(BaseModel):
    """A case as written in a file (either format). A CSV row maps onto format A: the columns
    `id`, `task`, `severity`, `heldout`, `reference`; the `__expected` columns (promptfoo's
    `type: value`) are `expect`; every other column is a string in `input` (docs/cases.md)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    id: str = Field(min_length=1)
    task: str | None = None
    severity: Severity = "major"
    heldout: bool = False
    input: dict[str, Any] | None = None
    expect: Expect = Field(default_factory=Expect)
    reference: str | None = Field(None, description="A known-good output (or implementation)")
    prompt: str | None = Field(None, description="Format B: the prompt given to the system")
    test_code: str | None = Field(None, description="Format B: defines test_* functions")
    metadata: dict[str, Any] = Field(default_factory=dict)
    tools: dict[str, ToolResults] | None = Field(
        None, description="Each tool's result in this case: `returns`, or `when` + `otherwise`"
    )
    max_steps: int | None = Field(
        None, ge=1, le=100, description=f"Model calls per turn (default {DEFAULT_MAX_STEPS})"
    )
    turns: list[UserTurn] | None = Field(
        None, description="User turns after the first: `[{user, expect?}]`"
    )
    user: SimulatedUser | None = Field(
        None, description="A model plays the user: `{persona, goal, max_turns}`"
    )

    @field_validator("test_code")
    @classmethod
    def _runnable_tests(cls, value: str | None) -> str | None:
        return check_test_code(value)

    @model_validator(mode="after")
    def _one_format(self) -> CaseRecord:
        if self.prompt is not None and self.input is not None:
            raise ValueError("use either `input` (format A) or `prompt` (format B), not both")
        if self.test_code is not None and self.expect.test_code is not None:
            raise ValueError("`test_code` is given both at the top level and in `expect`")
        if self.turns is not None and self.user is not None:
            raise ValueError("use either `turns` (scripted) or `user` (simulated), not both")
        return self

    def agent(self) -> AgentCase | None:
        """The conversation and tool loop keys, when the case has any."""
        keys = ("tools", "max_steps", "turns", "user")
        given = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        if not given:
            return None
        expects = [self.expect, *(t.expect for t in self.turns or [])]
        forbidden = tuple(dict.fromkeys(t for e in expects for t in e.forbidden_tools))
        return AgentCase(**given, forbidden=forbidden)


class Case(BaseModel):
    """A normalised case, whatever format it came from."""

    model_config = ConfigDict(frozen=True)

    id: str
    task: str
    severity: Severity = "major"
    heldout: bool = False
    input: dict[str, Any] = Field(default_factory=dict)
    expect: Expect = Field(default_factory=Expect)
    reference: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    assertions: AssertionSet | None = Field(
        None, description="promptfoo's assertions (CSV columns, a promptfoo config's tests)"
    )
    input_is_vars: bool = Field(
        False, description="a promptfoo test: the system gets its vars as they are, no `id`"
    )
    agent: AgentCase | None = Field(
        None, description="the case's conversation and tool loop (`tools`, `turns`, `user`)"
    )
    file: str = ""
    line: int = 0
    added: bool = False  # the PR flow: a case the PR adds, which the base's suite lacks

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def python_targets(self) -> list[str]:
        """Every python check's `module:function`: `expect.python`'s and the assertions'."""
        found = self.assertions.python_targets if self.assertions else []
        return [*self.expect.python, *found]

    @property
    def simulated(self) -> bool:
        """A model plays the case's user (gate.yml's `simulated_user`)."""
        return self.agent is not None and self.agent.user is not None

    @property
    def graded(self) -> list[Assertion]:
        """The `llm-rubric` assertions (each asks the judge, or its own grader)."""
        return self.assertions.graded if self.assertions else []

    def system_input(self) -> dict[str, Any]:
        """What the system receives: the case input plus its id under `id` (a promptfoo
        test's vars as they are: one may be called `id`)."""
        return dict(self.input) if self.input_is_vars else {**self.input, "id": self.id}


VOCABULARY = sorted(known_fields(CaseRecord) | set(EXPECT_KEYS))


def _normalise(record: CaseRecord, *, task: str, file: str, line: int) -> Case:
    expect = record.expect
    if record.test_code is not None:
        expect = expect.model_copy(update={"test_code": record.test_code})
    inputs = record.input if record.input is not None else {}
    if record.prompt is not None:
        inputs = {"prompt": record.prompt}
    return Case(
        id=record.id,
        task=record.task or task,
        severity=record.severity,
        heldout=record.heldout,
        input=inputs,
        expect=expect,
        reference=record.reference,
        metadata=record.metadata,
        agent=record.agent(),
        file=file,
        line=line,
    )


def parse_case(
    data: Any,
    *,
    file: Path,
    display: str,
    line: int,
    locator: Locator | None = None,
    prefix: tuple[str | int, ...] = (),
) -> Case:
    if not isinstance(data, dict):
        raise InputError(
            f"a case must be a JSON object, got {type(data).__name__}", file=display, line=line
        )
    try:
        record = CaseRecord.model_validate(data)
    except ValidationError as err:
        sub = Locator(_sub_node(locator, prefix)) if locator else None
        error = validation_error(
            err, file=display, data=data, locator=sub, line=line, vocabulary=VOCABULARY
        )
        raise _with_foreign_hint(error) from None
    return _normalise(record, task=file.stem, file=display, line=line)


def _with_foreign_hint(error: InputError) -> InputError:
    """`expect.icontains` is promptfoo's name for `must_include`: say so."""
    key = error.key or ""
    hint = foreign_hint(key.removeprefix("expect.")) if key.startswith("expect.") else None
    if hint is None or not error.message.startswith("unknown key"):
        return error
    return InputError(hint, file=error.file, line=error.line, key=error.key)


def _sub_node(locator: Locator | None, prefix: tuple[str | int, ...]) -> Any:
    if locator is None:
        return None
    node = locator.root
    for part in prefix:
        node = node.value[part] if node is not None and isinstance(part, int) else None
    return node


def _records_jsonl(text: str, display: str) -> Iterator[tuple[Any, int]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            yield json.loads(stripped), number
        except json.JSONDecodeError as exc:
            raise InputError(
                f"malformed JSON: {exc.msg} (column {exc.colno})", file=display, line=number
            ) from None


def _records_json_array(text: str, display: str) -> Iterator[tuple[Any, int]]:
    """Decode a JSON array element by element so each case keeps its line number."""
    decoder = json.JSONDecoder()
    try:
        whole = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg}", file=display, line=exc.lineno) from None
    if not isinstance(whole, list):
        raise InputError("a .json case file must hold an array of cases", file=display, line=1)
    pos = text.index("[") + 1
    for _ in whole:
        while text[pos] in " \t\r\n,":
            pos += 1
        value, end = decoder.raw_decode(text, pos)
        yield value, text.count("\n", 0, pos) + 1
        pos = end


def _csv_cases(text: str, path: Path, display: str, root: Path) -> Iterator[Case]:
    """A CSV case file's rows; `file://` values and python files are the checkout's (`root`)."""
    from gate.promptfoo.inputs.csv_tests import csv_records  # only for CSV files

    for test, at in csv_records(text, display, path.stem):
        try:
            case = parse_case(test.record, file=path, display=display, line=at.row.line)
        except InputError as exc:  # a column's value: name the column and the row
            raise at.error(exc.message, exc.key) from None
        assertions = test.assertions(at, lambda rel: _root_text(root, rel, display))
        if assertions is not None:
            case = case.model_copy(update={"assertions": assertions})
        yield case


def _root_text(root: Path, relative: str, display: str) -> str:
    """A file a CSV row's assertion names (`file://expected.txt`), in the checkout only."""
    path = (root / relative).resolve()
    if not path.is_relative_to(root.resolve()):
        raise InputError(f"{relative!r} leads outside the checkout: not read", file=display)
    return read_utf8(path, display, "file")


def load_case_file(path: Path, display: str, root: Path | None = None) -> list[Case]:
    text = read_utf8(path, display, "case file")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return [
            parse_case(data, file=path, display=display, line=line)
            for data, line in _records_jsonl(text, display)
        ]
    if suffix == ".json":
        return [
            parse_case(data, file=path, display=display, line=line)
            for data, line in _records_json_array(text, display)
        ]
    if suffix == ".csv":
        return list(_csv_cases(text, path, display, root or path.parent))
    if suffix in (".yaml", ".yml"):
        data, locator = load_yaml(text, display)
        if data is None:
            return []
        if not isinstance(data, list):
            raise InputError("a YAML case file must hold a list of cases", file=display, line=1)
        items = locator.root.value if locator.root is not None else []
        return [
            parse_case(
                item,
                file=path,
                display=display,
                line=node.start_mark.line + 1,
                locator=locator,
                prefix=(index,),
            )
            for index, (item, node) in enumerate(zip(data, items, strict=True))
        ]
    raise InputError(
        f"unsupported case file type {suffix or '(none)'}; use one of {', '.join(CASE_SUFFIXES)}",
        file=display,
    )


def resolve_case_paths(spec: str | list[str], base_dir: Path) -> list[Path]:
    """Files named by a path, a glob or a list of them, relative to `base_dir`."""
    specs = [spec] if isinstance(spec, str) else spec
    paths: list[Path] = []
    for item in specs:
        pattern = str(base_dir / item)
        if glob.has_magic(item):
            matches = sorted(
                Path(p) for p in glob.glob(pattern, recursive=True) if p.endswith(CASE_SUFFIXES)
            )
            if not matches:
                raise InputError(f"no case files match {item!r}", file=base_dir, key="cases")
            paths.extend(matches)
        else:
            path = Path(pattern)
            if not path.is_file():
                raise InputError(f"case file {item!r} not found in {base_dir}", key="cases")
            paths.append(path)
    unique: dict[Path, None] = dict.fromkeys(p.resolve() for p in paths)
    return list(unique)


def load_cases(
    spec: str | list[str], base_dir: Path, display_root: Path | None = None
) -> list[Case]:
    """Load every case; ids must be unique across all files (both places are named)."""
    cases: list[Case] = []
    seen: dict[str, Case] = {}
    for path in resolve_case_paths(spec, base_dir):
        root = display_root or base_dir
        for case in load_case_file(path, display_path(path, root), root):
            if case.id in seen:
                first = seen[case.id]
                raise InputError(
                    f"duplicate case id {case.id!r} (first defined at {first.where})",
                    file=case.file,
                    line=case.line,
                    key="id",
                )
            seen[case.id] = case
            cases.append(case)
    return cases
