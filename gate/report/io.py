"""Run report files: `LABEL.jsonl` holds a metadata line followed by one line per case;
`LABEL.summary.json` holds the totals. Case lines are appended (and flushed) as cases finish,
so a killed run leaves every finished case on disk; when the run completes they are re-sorted
into suite order.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError

from gate.errors import InputError
from gate.report.compat import CHECKS_KNOWN_SINCE, upgrade_case, upgrade_meta, version_of
from gate.report.files import atomic_write
from gate.report.models import CaseResult, Report, RunMeta, Summary
from gate.report.summary import SummaryBuilder


def report_paths(out_dir: Path, label: str) -> tuple[Path, Path]:
    return out_dir / f"{label}.jsonl", out_dir / f"{label}.summary.json"


def dump_line(model: BaseModel) -> str:
    return model.model_dump_json(exclude_defaults=False) + "\n"


class ReportWriter:
    """Streams case lines to disk and finishes with the sorted report and the summary.

    Held-out cases are written redacted (`CaseResult.redacted`) unless `heldout_detail`: only
    a writer into a folder the user asked for, and never uploads, keeps their detail."""

    def __init__(self, out_dir: Path, label: str, *, heldout_detail: bool = False) -> None:
        self.jsonl, self.summary_path = report_paths(out_dir, label)
        self.heldout_detail = heldout_detail
        self._handle: IO[str] | None = None
        self.builder = SummaryBuilder()

    def open(self, meta: RunMeta) -> None:
        self.jsonl.parent.mkdir(parents=True, exist_ok=True)
        self.summary_path.unlink(missing_ok=True)
        self._handle = self.jsonl.open("w", encoding="utf-8")
        self._handle.write(dump_line(meta))
        self._handle.flush()

    def write(self, result: CaseResult) -> None:
        assert self._handle is not None, "open() first"
        shown = result if self.heldout_detail or not result.heldout else result.redacted()
        self._handle.write(dump_line(shown))
        self._handle.flush()
        self.builder.add(result)

    def close(
        self,
        meta: RunMeta,
        duration_s: float | None = None,
        http: dict[str, dict[str, int]] | None = None,
    ) -> Summary:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
        summary = self.builder.build(meta, duration_s, http)
        write_report(self.jsonl, meta, _sorted_lines(self.jsonl))
        atomic_write(self.summary_path, summary.model_dump_json(indent=2) + "\n")
        return summary


def _sorted_lines(path: Path) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        lines = handle.readlines()[1:]
    return sorted(lines, key=lambda raw: json.loads(raw).get("index", 0))


def write_report(path: Path, meta: RunMeta, lines: Iterable[str]) -> None:
    """Write a whole report atomically from pre-serialised case lines."""
    atomic_write(path, dump_line(meta) + "".join(lines))


def write_summary(path: Path, summary: Summary) -> None:
    atomic_write(path, summary.model_dump_json(indent=2) + "\n")


def _meta_line(first: str, file: Path) -> tuple[RunMeta, int]:
    """The metadata line, of any schema version this gate reads (`gate.report.compat`), and
    that version."""
    try:
        data = json.loads(first) if first.strip() else None
    except json.JSONDecodeError:
        data = None
    if not isinstance(data, dict) or data.get("type") != "meta":  # a case line is no metadata
        raise InputError(
            "not a gate report: the first line must be the metadata line", file=file, line=1
        )
    try:
        return RunMeta.model_validate(upgrade_meta(data, file)), version_of(data, file)
    except ValidationError as err:
        raise _bad_line("metadata line", err, file, 1) from None


def _bad_line(what: str, err: ValidationError, file: Path, line: int) -> InputError:
    detail = err.errors()[0]
    key = ".".join(str(p) for p in detail["loc"]) or None
    return InputError(f"bad {what}: {detail['msg']}", file=file, line=line, key=key)


def iter_report(path: str | Path) -> tuple[RunMeta, Iterator[CaseResult]]:
    """Read a report lazily; bad lines name the file and line."""
    file = Path(path)
    try:
        handle = file.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("report not found", file=file) from None
    except OSError as exc:
        raise InputError(f"cannot read report: {exc.strerror}", file=file) from None
    try:
        meta, version = _meta_line(handle.readline(), file)
    except InputError:
        handle.close()
        raise

    def results() -> Iterator[CaseResult]:
        with handle:
            for number, raw in enumerate(handle, start=2):
                if not raw.strip():
                    continue
                try:
                    yield _case_line(raw, version)
                except ValidationError as err:
                    raise _bad_line("case line", err, file, number) from None

    return meta, results()


def _case_line(raw: str, version: int) -> CaseResult:
    if version >= CHECKS_KNOWN_SINCE:
        return CaseResult.model_validate_json(raw)
    try:
        data = json.loads(raw)
    except ValueError:
        return CaseResult.model_validate_json(raw)  # raises, saying why
    return CaseResult.model_validate(
        upgrade_case(data, version) if isinstance(data, dict) else data
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Building ~10 objects per case line, the cyclic GC would rescan the growing heap again
    and again (3-5x slower at 10,000 cases); nothing read here forms cycles."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_report(path: str | Path, *, fold_attempts: bool = False) -> Report:
    """A whole report; `fold_attempts` keeps only the totals of each attempt (comparisons)."""
    meta, results = iter_report(path)
    with _gc_paused():
        items = list(results) if not fold_attempts else list(map(_folded, results))
    seen: dict[str, int] = {}
    for position, item in enumerate(items):
        if item.id in seen:
            raise InputError(
                f"duplicate case id {item.id!r} in report", file=path, line=position + 2, key="id"
            )
        seen[item.id] = position
    return Report(meta=meta, results=items, path=Path(path))


def _folded(result: CaseResult) -> CaseResult:
    result.fold_attempts()
    return result
