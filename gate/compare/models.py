"""The comparison's models: one case on both sides, per-task and per-side totals, and
`Comparison`, which is also the `json` format (its keys are stable; `gate.render.reasons` adds
the findings in words, `reasons` and `notes`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from gate.compare.droptest import DropTest
from gate.compare.findings import Finding, Skipped
from gate.compare.metrics import MetricRate
from gate.compare.paths import TurnSide, parting_step
from gate.compare.power import Power
from gate.compare.rubric import RubricComparison
from gate.compare.stats import Significance
from gate.compare.system import SystemDiff
from gate.inputs.policy import Policy, Severity
from gate.report.checks import CheckResult, RubricResult
from gate.report.models import RunMeta, Status
from gate.report.output import Step

Verdict = Literal["pass", "fail", "inconclusive", "error", "skipped"]
# inconclusive exits 0 here, 1 where the policy's `inconclusive: block` makes it block
EXIT_CODES: dict[Verdict, int] = {"pass": 0, "skipped": 0, "inconclusive": 0, "fail": 1, "error": 3}
BLOCKING_INCONCLUSIVE = 1
# the combined verdict of several suites is the first of these that any of them has
VERDICT_ORDER: tuple[Verdict, ...] = ("error", "fail", "inconclusive", "pass", "skipped")


def exit_code_of(verdict: Verdict, policy: Policy) -> int:
    """The exit code of a verdict under a policy: inconclusive blocks only if it says so."""
    if verdict == "inconclusive" and policy.inconclusive == "block":
        return BLOCKING_INCONCLUSIVE
    return EXIT_CODES[verdict]


EXCERPT_CHARS = 2000


class SideCase(BaseModel):
    """One side of a case: its outcome over its runs and, unless held out, what it answered
    and which checks decided it."""

    status: Status
    fraction: float = Field(
        description="pass fraction over the runs (under repeats: auto, the unbiased estimate)"
    )
    repeats: int = 1
    passes: int = Field(description="runs that passed, of repeats")
    flaky: bool = False
    output: str | None = Field(None, description=f"the first {EXCERPT_CHARS} characters")
    output_chars: int = Field(0, description="how long the whole output was")
    failed_checks: list[CheckResult] = Field(default_factory=list)
    review_checks: list[CheckResult] = Field(default_factory=list, description="needs review")
    rubric: list[RubricResult] = Field(default_factory=list, description="the judge's results")
    error: str | None = None
    path: list[Step] = Field(
        default_factory=list, description="an agent's tool calls and results (long values cut)"
    )
    path_steps: int = Field(0, description="how many steps the whole path had")
    turns: list[TurnSide] = Field(
        default_factory=list, description="a conversation's user turns, each with its answer"
    )


class CaseChange(BaseModel):
    """One case on both sides. Held-out cases carry only id, task, severity and outcomes."""

    id: str
    task: str
    severity: Severity
    heldout: bool = False
    blocking: bool = False
    base: SideCase | None = Field(None, description="None: the case is not in the base report")
    head: SideCase | None = Field(None, description="None: the case is not in the head report")
    file: str = ""
    line: int = 0
    index: int = 0
    added_by_pr: bool = Field(
        False, description="a case the PR adds: asked of both sides, outside the delta"
    )

    @property
    def statuses(self) -> tuple[Status | None, Status | None]:
        """The outcome on base and on head; None where the case is not in that report."""
        return (self.base.status if self.base else None, self.head.status if self.head else None)

    @property
    def shown(self) -> SideCase:
        """The side a listing shows: the head's, or the base's for a removed case."""
        side = self.head or self.base
        assert side is not None, "a case is in at least one report"
        return side

    @property
    def flaky(self) -> bool:
        return any(side.flaky for side in (self.base, self.head) if side)

    @property
    def path_changed(self) -> bool:
        """An agent case whose tool calls or number of turns differ between the sides."""
        base, head = self.base, self.head
        if base is None or head is None:
            return False
        return (
            parting_step(base.path, head.path) is not None
            or base.path_steps != head.path_steps
            or len(base.turns) != len(head.turns)
        )

    @property
    def repeated(self) -> bool:
        """Either side ran the case more than once."""
        return any(side.repeats > 1 for side in (self.base, self.head) if side)


class TaskDelta(BaseModel):
    task: str
    n: int = Field(description="paired cases of this task")
    base_passed: int
    head_passed: int
    base_pass_rate: float | None
    head_pass_rate: float | None
    delta_points: float | None
    regressions: int = 0
    fixes: int = 0
    added: int = 0
    removed: int = 0


class SideUsage(BaseModel):
    """Tokens, cost and latency of one side over the paired cases (every repeat counted)."""

    calls: int = 0
    tokens_prompt: int = 0
    tokens_completion: int = 0
    tokens_total: int = 0
    cost_usd: float | None = None
    latency_p50_ms: float | None = None
    latency_p95_ms: float | None = None
    judge_calls: int = 0  # what grading cost, apart from the system's own tokens and cost
    judge_tokens: int = 0
    judge_cost_usd: float | None = None
    cached_calls: int = 0  # of `calls`, answered by the response cache (no call made)
    judge_cached: int = 0  # of `judge_calls`, likewise


class SideTotals(BaseModel):
    """A whole report, paired or not."""

    n: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    needs_review: int = 0
    pass_rate: float | None = None
    error_rate: float | None = None
    repeats: int = 1


class Comparison(BaseModel):
    """The result of `gate compare`, and its `json` format."""

    verdict: Verdict
    findings: list[Finding] = Field(
        default_factory=list, description="the rules, as data (`gate.compare.findings`)"
    )
    suite: str = "default"
    policy: Policy = Field(default_factory=Policy.from_config)
    base_pass_rate: float | None = None
    head_pass_rate: float | None = None
    delta_points: float | None = None
    paired: int = 0
    regressions: list[str] = Field(default_factory=list, description="pass -> fail")
    new_errors: list[str] = Field(default_factory=list, description="pass -> error")
    fixes: list[str] = Field(default_factory=list, description="not passing -> pass")
    still_failing: list[str] = Field(default_factory=list, description="not passing -> fail")
    added: list[str] = Field(default_factory=list, description="only in the head report")
    removed: list[str] = Field(default_factory=list, description="only in the base report")
    added_by_pr: list[str] = Field(
        default_factory=list,
        description="cases the PR adds, asked of both sides: outside the rates and the delta; "
        "a blocking one failing on head blocks",
    )
    blocker_failures: list[str] = Field(
        default_factory=list, description="blocking-severity cases not passing on head"
    )
    new_blocker_failures: list[str] = Field(
        default_factory=list, description="the blocker failures that passed on base or are new"
    )
    errors: list[str] = Field(default_factory=list, description="error on head")
    base_errors: list[str] = Field(default_factory=list, description="error on base")
    needs_review: list[str] = Field(default_factory=list, description="needs_review on head")
    flaky: list[str] = Field(default_factory=list, description="outcome varies across repeats")
    path_changed: list[str] = Field(
        default_factory=list, description="agent cases whose path (tool calls, turns) changed"
    )
    p_value: float | None = Field(None, description="exact McNemar p-value")
    ci_low_points: float | None = None
    ci_high_points: float | None = None
    significant: bool = False
    statistics: Significance | None = None
    power: Power | None = Field(None, description="what the suite can resolve")
    drop_test: DropTest | None = Field(
        None, description="the drop against no change, at the suite's share of false_block_rate"
    )
    tasks: list[TaskDelta] = Field(default_factory=list)
    metrics: list[MetricRate] = Field(
        default_factory=list, description="promptfoo's metric names, pass rates base vs head"
    )
    base: SideTotals = Field(default_factory=SideTotals)
    head: SideTotals = Field(default_factory=SideTotals)
    base_usage: SideUsage = Field(default_factory=SideUsage)
    head_usage: SideUsage = Field(default_factory=SideUsage)
    cases: dict[str, CaseChange] = Field(
        default_factory=dict, description="every case named in a list above, by id"
    )
    base_meta: RunMeta | None = None
    head_meta: RunMeta | None = None
    rubric: RubricComparison | None = Field(None, description="judge scores, base vs head")
    system_diff: SystemDiff | None = Field(
        None, description="the system files the PR changed (filled in by the PR flow)"
    )

    @property
    def exit_code(self) -> int:
        return exit_code_of(self.verdict, self.policy)

    def case_list(self, ids: Iterable[str]) -> list[CaseChange]:
        return [self.cases[i] for i in ids]


def skipped_comparison(reason: str, *, suite: str = "default") -> Comparison:
    """No watched file changed: nothing was run, nothing blocks."""
    return Comparison(verdict="skipped", findings=[Skipped(reason=reason)], suite=suite)
