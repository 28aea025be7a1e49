"""Run reports' models: the stable on-disk interface between `gate run` and everything after it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from gate import REPORT_SCHEMA_VERSION
from gate.inputs.policy import Severity
from gate.report.checks import CheckResult
from gate.report.descriptions import SandboxInfo, SystemInfo
from gate.report.output import Step, ToolCall, TranscriptMessage
from gate.report.plan import AutoRecord

Status = Literal["pass", "fail", "error", "needs_review"]
OUTPUT_LIMIT = 20_000


class JudgeCall(BaseModel):
    """What one judge call cost: recorded with the attempt it graded, totalled in the summary."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cached: bool = False


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


def add_calls(first: JudgeCall | None, second: JudgeCall) -> JudgeCall:
    """Two judge calls of one attempt, counted as one."""
    if first is None:
        return second
    costs = [c for c in (first.cost_usd, second.cost_usd) if c is not None]
    return JudgeCall(
        prompt_tokens=first.prompt_tokens + second.prompt_tokens,
        completion_tokens=first.completion_tokens + second.completion_tokens,
        cost_usd=round(sum(costs), 8) if costs else None,
        cached=first.cached and second.cached,
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
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    error: str | None = None
    latency_ms: float | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    cached: bool = False
    judge: JudgeUsage | None = None
    messages: list[TranscriptMessage] = Field(default_factory=list)
    trajectory: list[Step] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        return _without_empty_path(handler(self))


def _without_empty_path(data: dict[str, object]) -> dict[str, object]:
    """A one-answer case's line keeps no empty `messages` and `trajectory`."""
    for key in ("messages", "trajectory"):
        if data.get(key) == []:
            data.pop(key)
    return data


class CaseResult(BaseModel):
    """One line of `LABEL.jsonl`."""

    model_config = ConfigDict(extra="ignore")

    id: str
    task: str
    severity: Severity = "major"
    heldout: bool = False
    status: Status
    passed: bool
    checks: list[CheckResult] = Field(default_factory=list)
    scores: dict[str, int] = Field(default_factory=dict)
    latency_ms: float | None = None
    tokens: Tokens = Field(default_factory=Tokens)
    cost_usd: float | None = None
    output: str | None = None
    tool_calls: list[ToolCall] = Field(
        default_factory=list, description="The answer's tool calls: `{name, arguments}`"
    )
    finish_reason: str | None = Field(
        None, description="OpenAI's finish_reason, Anthropic's stop_reason"
    )
    messages: list[TranscriptMessage] = Field(
        default_factory=list, description="A conversation's transcript (the run shown)"
    )
    trajectory: list[Step] = Field(
        default_factory=list, description="The agent's tool calls and their results"
    )
    error: str | None = None
    cached: bool = False
    repeats: int = 1
    pass_fraction: float = 0.0
    flaky: bool = False
    attempts: list[Attempt] = Field(default_factory=list)
    auto_end: Literal["rule", "flow"] | None = Field(
        None,
        description="repeats: auto: why the case got no more runs: its outcome was clear "
        "(rule), or the flow stopped spending (flow)",
    )
    judge: JudgeUsage | None = None
    added: bool = Field(
        False,
        description="a case the PR adds (the base's suite lacks it): asked of both sides, "
        "kept out of the pass-rate delta",
    )
    file: str = ""
    line: int = 0
    index: int = 0
    folded_calls: tuple[Call, ...] | None = Field(None, exclude=True, repr=False)
    folded_passes: tuple[bool, ...] | None = Field(None, exclude=True, repr=False)

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        return _without_empty_path(handler(self))

    @property
    def failed_checks(self) -> list[CheckResult]:
        return [c for c in self.checks if c.passed is False]

    def redacted(self) -> CaseResult:
        """What a held-out case may show in a file anyone with read access can download: its
        outcome and what it cost, never its output (text and tool calls), checks (their names
        carry expectations), scores or error text."""
        hidden: dict[str, object] = {
            "checks": [],
            "scores": {},
            "output": None,
            "tool_calls": [],
            "finish_reason": None,
            "messages": [],
            "trajectory": [],
            "error": None,
        }
        attempts = [a.model_copy(update=hidden) for a in self.attempts]
        return self.model_copy(update={**hidden, "attempts": attempts})

    def run_passes(self) -> list[bool]:
        """Whether each run passed, in run order (one run: the case's own outcome)."""
        if self.attempts:
            return [a.status == "pass" for a in self.attempts]
        if self.folded_passes is not None:
            return list(self.folded_passes)
        return [self.passed]

    def fold_attempts(self) -> None:
        """Keep of the attempts only what totals read (`calls_of`): a large report with
        repeats then fits in memory. For reading; a folded result is not written again."""
        if self.attempts:
            self.folded_calls = tuple(map(Call.of, self.attempts))
            self.folded_passes = tuple(a.status == "pass" for a in self.attempts)
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
    system_config_file: str | None = Field(
        None, description="the side's own gate.yml whose system ran, when not config_file"
    )
    files: dict[str, str] = Field(default_factory=dict, description="path -> sha256")
    system: SystemInfo = Field(default_factory=SystemInfo)
    repeats: int = 1
    concurrency: int = 1
    n_cases: int = 0
    suite_size: int | None = Field(None, description="Cases in the whole suite (before sharding)")
    shard: str | None = None
    shards: list[str] = Field(default_factory=list)
    sandbox: SandboxInfo | None = None
    auto: AutoRecord | None = Field(
        None, description="repeats: auto: the plan that allocated the runs and why it stopped"
    )


class TaskSummary(BaseModel):
    n: int = 0
    passed: int = 0
    pass_rate: float | None = None


class Summary(BaseModel):
    """`LABEL.summary.json`."""

    n: int
    passed: int
    failed: int
    errors: int
    needs_review: int
    pass_rate: float | None = Field(
        description="Percent of cases that passed (errors count as not); with repeats the "
        "mean of the cases' pass fractions, as the comparison's pass rate; None: no case"
    )
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


def truncate_output(text: str | None, limit: int = OUTPUT_LIMIT) -> str | None:
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + f"\n…[truncated {len(text) - limit} characters]"


def truncate_transcript(messages: list[TranscriptMessage]) -> list[TranscriptMessage]:
    """Each message's text at most `OUTPUT_LIMIT` characters, as an output is."""
    return [
        m
        if len(m.content) <= OUTPUT_LIMIT
        else m.model_copy(update={"content": truncate_output(m.content)})
        for m in messages
    ]


@dataclass
class Report:
    """A report read back: its metadata line, its case lines and where it came from."""

    meta: RunMeta
    results: list[CaseResult]
    path: Path


def rate(passed: float, n: int) -> float | None:
    """Percent of `n` that passed (`passed` may sum pass fractions); None for no case at all
    (never a 0 % or 100 % of nothing)."""
    return 100.0 * passed / n if n else None
