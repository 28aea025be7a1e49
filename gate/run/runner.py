"""Run cases against a system with bounded concurrency, repeats and per-call timeouts.

A system that raises makes the case an `error` (never a `fail`); a check that cannot be
evaluated does too. Results go to a sink as they finish, so nothing is held for the whole run.
"""

from __future__ import annotations

import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TypedDict

from gate.checks import CheckContext, CheckPlan
from gate.errors import CheckInfraError, GateError
from gate.inputs.cases import Case
from gate.report.checks import AssertionResult, CheckResult, judge_scores
from gate.report.models import (
    Attempt,
    CaseResult,
    JudgeUsage,
    Status,
    Tokens,
    total_judge,
    truncate_output,
    truncate_transcript,
)
from gate.report.output import Step, SystemOutput, ToolCall, TranscriptMessage
from gate.systems.base import System, SystemRequest

Sink = Callable[[CaseResult], None]


@dataclass(frozen=True)
class RunOptions:
    concurrency: int = 8
    repeats: int = 1
    timeout_s: float = 120.0


def status_of(checks: list[CheckResult]) -> Status:
    """A failed check fails the case, one needing a person makes it `needs_review`; a `scored`
    result (part of a score a `threshold` result judges) does not decide."""
    checks = [c for c in checks if not (isinstance(c, AssertionResult) and c.scored)]
    if any(c.passed is False for c in checks):
        return "fail"
    if any(c.passed is None for c in checks):
        return "needs_review"
    return "pass"


def _short_exception(exc: BaseException) -> str:
    message = str(exc).strip()
    name = type(exc).__name__
    if isinstance(exc, GateError):
        return message or name
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno})" if frame else ""
    return f"{name}: {message}{where}" if message else f"{name}{where}"


def run_attempt(
    case: Case,
    repeat: int,
    system: System,
    plan: CheckPlan,
    ctx: CheckContext,
    options: RunOptions,
) -> Attempt:
    request = SystemRequest(
        case_id=case.id,
        input=case.system_input(),
        repeat=repeat,
        timeout_s=options.timeout_s,
        agent=case.agent,
    )
    started = time.perf_counter()
    try:
        output = system.call(request)
    except Exception as exc:
        latency = (time.perf_counter() - started) * 1000
        return Attempt(
            repeat=repeat,
            status="error",
            error=f"system error: {_short_exception(exc)}",
            latency_ms=round(latency, 3),
        )
    output = _timed(output, (time.perf_counter() - started) * 1000)  # what checks read
    return _checked(output, case, plan, ctx, _answer(repeat, output))


def _timed(output: SystemOutput, latency: float) -> SystemOutput:
    if output.cached and output.latency_ms is not None:
        latency = output.latency_ms  # so a cached base compares fairly with a fresh head
    return output.model_copy(update={"latency_ms": round(latency, 3)})


class _Answer(TypedDict):
    """An attempt's answer, whatever its checks make of it."""

    repeat: int
    output: str | None
    tool_calls: list[ToolCall]
    finish_reason: str | None
    messages: list[TranscriptMessage]
    trajectory: list[Step]
    latency_ms: float | None
    tokens: Tokens
    cost_usd: float | None
    cached: bool


def _answer(repeat: int, output: SystemOutput) -> _Answer:
    usage = output.usage
    tokens = (
        Tokens(prompt=usage.prompt_tokens, completion=usage.completion_tokens)
        if usage
        else Tokens()
    )
    return {
        "repeat": repeat,
        "output": truncate_output(output.text),
        "tool_calls": output.tool_calls,
        "finish_reason": output.finish_reason,
        "messages": truncate_transcript(output.messages),
        "trajectory": output.trajectory,
        "latency_ms": output.latency_ms,
        "tokens": tokens,
        "cost_usd": output.cost_usd,
        "cached": output.cached,
    }


def _checked(
    output: SystemOutput, case: Case, plan: CheckPlan, ctx: CheckContext, answer: _Answer
) -> Attempt:
    try:
        evaluation = plan.evaluate(output, case, ctx)
    except CheckInfraError as exc:
        return Attempt(status="error", error=f"check error: {exc}", **answer)
    except Exception as exc:  # a bug in a check must not take the run down
        return Attempt(status="error", error=f"check crashed: {_short_exception(exc)}", **answer)
    checks = evaluation.results
    scores = judge_scores(checks)
    judge = JudgeUsage.of(evaluation.judge) if evaluation.judge else None
    return Attempt(status=status_of(checks), checks=checks, scores=scores, judge=judge, **answer)


def aggregate(case: Case, index: int, attempts: list[Attempt]) -> CaseResult:
    """One result per case; with repeats the majority outcome decides, ties count as failing."""
    scored = [a for a in attempts if a.status != "error"]
    counts = Counter(a.status for a in scored)
    status: Status
    if not scored:
        status = "error"
    elif counts["pass"] * 2 > len(scored):
        status = "pass"
    elif counts["fail"] >= counts["needs_review"]:
        status = "fail"
    else:
        status = "needs_review"
    shown = next(a for a in attempts if a.status == status)
    errors = [a.error for a in attempts if a.error]
    return CaseResult(
        id=case.id,
        task=case.task,
        severity=case.severity,
        heldout=case.heldout,
        status=status,
        passed=status == "pass",
        checks=shown.checks,
        scores=shown.scores,
        latency_ms=shown.latency_ms,
        tokens=sum((a.tokens for a in attempts), Tokens()),
        cost_usd=_sum_cost(attempts),
        output=shown.output,
        tool_calls=shown.tool_calls,
        finish_reason=shown.finish_reason,
        messages=shown.messages,
        trajectory=shown.trajectory,
        error=shown.error if status == "error" else ("; ".join(errors) or None),
        cached=all(a.cached for a in attempts),
        repeats=len(attempts),
        pass_fraction=round(counts["pass"] / len(scored), 4) if scored else 0.0,
        flaky=len(counts) > 1,
        attempts=attempts if len(attempts) > 1 else [],
        judge=total_judge(a.judge for a in attempts),
        added=case.added,
        file=case.file,
        line=case.line,
        index=index,
    )


def _sum_cost(attempts: list[Attempt]) -> float | None:
    costs = [a.cost_usd for a in attempts if a.cost_usd is not None]
    return round(sum(costs), 8) if costs else None


def run_cases(
    cases: Iterable[tuple[int, Case]],
    evaluate: Callable[[int, Case], CaseResult],
    concurrency: int,
    sink: Sink,
) -> None:
    """`evaluate(index, case)` of each pair, `concurrency` at a time; each result goes to
    `sink` once, as it finishes. At most a few times `concurrency` cases are in flight, so a
    large suite holds no long queue."""
    window = concurrency * 4
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="gate-run") as pool:
        pending: set[Future[CaseResult]] = set()
        for index, case in cases:
            pending.add(pool.submit(evaluate, index, case))
            if len(pending) >= window:
                done, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in done:
                    sink(future.result())
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                sink(future.result())
