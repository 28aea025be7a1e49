"""Run reports: the stable on-disk interface between `gate run` and everything after it.

`LABEL.jsonl` holds a metadata line followed by one line per case; `LABEL.summary.json` holds
the totals. Case lines are appended (and flushed) as cases finish, so a killed run leaves every
finished case on disk; when the run completes they are re-sorted into suite order.
"""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate import REPORT_SCHEMA_VERSION
from gate.checks.base import CheckResult, JudgeCall
from gate.errors import InputError
from gate.files import atomic_write

Status = Literal["pass", "fail", "error", "needs_review"]
OUTPUT_LIMIT = 20_000


class Tokens(BaseModel):
    prompt: int = 0
    completion: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(
            prompt=self.prompt + other.prompt, completion=self.completion + other.completion
        )


class JudgeUsage(BaseModel):
    """The judge calls behind a result: what grading cost, kept apart from the system's own
    tokens and cost (which the comparison reads as the PR's effect)."""

    calls: int = 0
    cached: int = 0
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None

    @classmethod
    def of(cls, call: JudgeCall) -> JudgeUsage:
        return cls(
            calls=1,
            cached=int(call.cached),
            tokens=Tokens(prompt=call.prompt_tokens, completion=call.completion_tokens),
            cost_usd=call.cost_usd,
        )

    def __add__(self, other: JudgeUsage) -> JudgeUsage:
        costs = [c for c in (self.cost_usd, other.cost_usd) if c is not None]
        return JudgeUsage(
            calls=self.calls + other.calls,
            cached=self.cached + other.cached,
            tokens=self.tokens + other.tokens,
            cost_usd=round(sum(costs), 8) if costs else None,
        )


def total_judge(usages: Iterable[JudgeUsage | None]) -> JudgeUsage | None:
    present = [u for u in usages if u is not None]
    return sum(present[1:], present[0]) if present else None


class Attempt(BaseModel):
    """One call of the system for a case (there are `repeats` of them)."""

    repeat: int
    status: Status
    checks: list[CheckResult] = Field(default_factory=list)
    scores: dict[str, int] = Field(default_factory=dict)
    output: str | None = None
    error: str | None = None
    latency_ms: float | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    cached: bool = False
    judge: JudgeUsage | None = None


class CaseResult(BaseModel):
    """One line of `LABEL.jsonl`."""

    model_config = ConfigDict(extra="ignore")

    id: str
    task: str
    severity: str = "major"
    heldout: bool = False
    status: Status
    passed: bool
    checks: list[CheckResult] = Field(default_factory=list)
    scores: dict[str, int] = Field(default_factory=dict)
    latency_ms: float | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    output: str | None = None
    error: str | None = None
    cached: bool = False
    repeats: int = 1
    pass_fraction: float = 0.0
    flaky: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    judge: JudgeUsage | None = None
    file: str = ""
    line: int = 0
    index: int = 0
    folded_calls: tuple[Call, ...] | None = Field(None, exclude=True, repr=False)

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.passed is False]

    def fold_attempts(self) -> None:
        """Keep of the attempts only what totals read (`calls_of`): a large report with
        repeats then fits in memory. For reading; a folded result is not written again."""
        if self.attempts:
            self.folded_calls = tuple(map(Call.of, self.attempts))
            self.attempts = []


class Call(NamedTuple):
    """One call of the system, as totals and comparisons count it (a few dozen bytes, where
    an `Attempt` object takes about 2 KB)."""

    latency_ms: float | None
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    cached: bool

    @classmethod
    def of(cls, source: Attempt | CaseResult) -> Call:
        tokens = source.tokens
        return cls(
            source.latency_ms, tokens.prompt, tokens.completion, source.cost_usd, source.cached
        )


class RunMeta(BaseModel):
    """The metadata line: where, what and with which files this report was produced."""

    model_config = ConfigDict(extra="allow")

    type: Literal["meta"] = "meta"
    schema_version: int = REPORT_SCHEMA_VERSION
    gate_version: str = ""
    label: str = ""
    suite: str = ""
    created_at: str = ""
    root: str = ""
    git_sha: str | None = None
    git_dirty: bool | None = None
    config_file: str | None = None
    files: dict[str, str] = Field(default_factory=dict, description="path -> sha256")
    system: dict[str, Any] = Field(default_factory=dict)
    repeats: int = 1
    concurrency: int = 1
    n_cases: int = 0
    suite_size: int | None = Field(None, description="Cases in the whole suite (before sharding)")
    shard: str | None = None
    shards: list[str] = Field(default_factory=list)
    sandbox: dict[str, Any] | None = None


class TaskSummary(BaseModel):
    n: int = 0
    passed: int = 0
    pass_rate: float = 0.0


class Summary(BaseModel):
    """`LABEL.summary.json`."""

    n: int
    passed: int
    failed: int
    errors: int
    needs_review: int
    pass_rate: float = Field(description="Percent of cases that passed (errors count as not)")
    by_task: dict[str, TaskSummary]
    latency_p50_ms: float | None
    latency_p95_ms: float | None
    tokens: dict[str, int]
    cost_usd: float | None
    cache: dict[str, int]
    judge: JudgeUsage | None = Field(None, description="Rubric judge calls, tokens and cost")
    http: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="Per provider client (system, judge): requests, retries, 429s, failures",
    )
    flaky: int
    duration_s: float | None = None
    meta: RunMeta


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low, high = math.floor(pos), math.ceil(pos)
    value = ordered[low] + (ordered[high] - ordered[low]) * (pos - low)
    return round(value, 3)


def rate(passed: int, n: int) -> float:
    return round(100.0 * passed / n, 2) if n else 0.0


def calls_of(result: CaseResult) -> Sequence[Call]:
    """Every call of the system for a case: its attempts with repeats, else the case itself."""
    if result.folded_calls is not None:
        return result.folded_calls
    return [Call.of(a) for a in result.attempts] if result.attempts else [Call.of(result)]


@dataclass
class SummaryBuilder:
    """Accumulates totals case by case so no run has to keep its results in memory."""

    counts: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("pass", "fail", "error", "needs_review"), 0)
    )
    tasks: dict[str, list[int]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    hits: int = 0
    misses: int = 0
    judge: JudgeUsage | None = None
    flaky: int = 0

    def add(self, result: CaseResult) -> None:
        self.counts[result.status] += 1
        task = self.tasks.setdefault(result.task, [0, 0])
        task[0] += 1
        task[1] += int(result.passed)
        for source in calls_of(result):
            if source.latency_ms is not None:
                self.latencies.append(source.latency_ms)
            self.prompt_tokens += source.prompt_tokens
            self.completion_tokens += source.completion_tokens
            if source.cost_usd is not None:
                self.cost = (self.cost or 0.0) + source.cost_usd
            self.hits += int(source.cached)
            self.misses += int(not source.cached)
        self.judge = total_judge([self.judge, result.judge])
        self.flaky += int(result.flaky)

    def build(
        self,
        meta: RunMeta,
        duration_s: float | None = None,
        http: dict[str, dict[str, int]] | None = None,
    ) -> Summary:
        n = sum(self.counts.values())
        passed = self.counts["pass"]
        return Summary(
            n=n,
            passed=passed,
            failed=self.counts["fail"],
            errors=self.counts["error"],
            needs_review=self.counts["needs_review"],
            pass_rate=rate(passed, n),
            by_task={
                name: TaskSummary(n=t[0], passed=t[1], pass_rate=rate(t[1], t[0]))
                for name, t in sorted(self.tasks.items())
            },
            latency_p50_ms=percentile(self.latencies, 50),
            latency_p95_ms=percentile(self.latencies, 95),
            tokens={
                "prompt": self.prompt_tokens,
                "completion": self.completion_tokens,
                "total": self.prompt_tokens + self.completion_tokens,
            },
            cost_usd=round(self.cost, 6) if self.cost is not None else None,
            cache={"hits": self.hits, "misses": self.misses},
            judge=self.judge,
            http=http or {},
            flaky=self.flaky,
            duration_s=round(duration_s, 3) if duration_s is not None else None,
            meta=meta,
        )


def report_paths(out_dir: Path, label: str) -> tuple[Path, Path]:
    return out_dir / f"{label}.jsonl", out_dir / f"{label}.summary.json"


def dump_line(model: BaseModel) -> str:
    return model.model_dump_json(exclude_defaults=False) + "\n"


class ReportWriter:
    """Streams case lines to disk and finishes with the sorted report and the summary."""

    def __init__(self, out_dir: Path, label: str) -> None:
        self.jsonl, self.summary_path = report_paths(out_dir, label)
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
        self._handle.write(dump_line(result))
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


@dataclass
class Report:
    meta: RunMeta
    results: list[CaseResult]
    path: Path


def iter_report(path: str | Path) -> tuple[RunMeta, Iterator[CaseResult]]:
    """Read a report lazily; bad lines name the file and line."""
    file = Path(path)
    try:
        handle = file.open(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("report not found", file=file) from None
    except OSError as exc:
        raise InputError(f"cannot read report: {exc.strerror}", file=file) from None
    first = handle.readline()
    try:
        meta = RunMeta.model_validate_json(first) if first.strip() else None
    except ValidationError:
        meta = None
    if meta is not None and "type" not in meta.model_fields_set:
        meta = None  # every field has a default: a case line would pass for metadata
    if meta is None:
        handle.close()
        raise InputError(
            "not a gate report: the first line must be the metadata line", file=file, line=1
        )

    def results() -> Iterator[CaseResult]:
        with handle:
            for number, raw in enumerate(handle, start=2):
                if not raw.strip():
                    continue
                try:
                    yield CaseResult.model_validate_json(raw)
                except ValidationError as err:
                    detail = err.errors()[0]
                    key = ".".join(str(p) for p in detail["loc"]) or None
                    raise InputError(
                        f"bad case line: {detail['msg']}", file=file, line=number, key=key
                    ) from None

    return meta, results()


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


def summarise(meta: RunMeta, results: Iterable[CaseResult]) -> Summary:
    builder = SummaryBuilder()
    for result in results:
        builder.add(result)
    return builder.build(meta)


def load_summary(path: str | Path) -> Summary:
    try:
        return Summary.model_validate_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("summary not found", file=path) from None
    except ValidationError as err:
        raise InputError(f"bad summary: {err.errors()[0]['msg']}", file=path) from None


def truncate_output(text: str | None, limit: int = OUTPUT_LIMIT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n…[truncated {len(text) - limit} characters]"
