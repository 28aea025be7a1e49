"""`inspect:` suites: an inspect_ai task run on a side, its log read back as case results.

The task runs in the system's confinement (`gate.frameworks.process`, `inspect_runner`) in the
side's run folder, loaded once for the side; each run's log, written to a private folder, is
read through inspect_ai's own API (`read_eval_log`). Samples pair by their explicit id; each
epoch is a run of the case (`repeat` = the case's start + epoch − 1); scores map to pass and
fail by `gate.frameworks .scores`; a sample's error, or a score the gate cannot read, is an
error. Tokens (every model's), time and cost come from the sample.

inspect's own cache (`generate(cache=...)`) lives in a private folder of the run: the PR's code
cannot leave answers in it for the other side, and a later round of `repeats: auto` (whose
epochs inspect numbers from 1 again) never replays an earlier round's answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.frameworks.process import FrameworkError, FrameworkProcess, writable_folder
from gate.frameworks.results import Listing, Runs, completed
from gate.frameworks.scores import Unscorable, score_checks
from gate.inputs.cases import Case
from gate.inputs.framework_suites import InspectSuite
from gate.report.models import Attempt, Tokens, truncate_output

MAX_LOG_BYTES = 512 * 1024 * 1024


def _request(settings: InspectSuite, **more: Any) -> dict[str, Any]:
    return {
        "task": settings.task,
        "task_args": settings.task_args,
        "model": settings.model,
        "model_args": settings.model_args,
        "max_samples": None,
        **more,
    }


def _answer(
    process: FrameworkProcess, settings: InspectSuite, request: dict[str, Any]
) -> dict[str, Any]:
    answer = process.call(request, settings.timeout_s)
    if "refused" in answer:
        raise InputError(str(answer["refused"]), key="inspect.task")
    if "error" in answer:
        raise FrameworkError(f"inspect could not run {settings.task}: {answer['error']}")
    return answer


def list_samples(process: FrameworkProcess, settings: InspectSuite) -> Listing:
    """The task's samples as cases (refused without explicit ids), nothing run."""
    answer = _answer(process, settings, _request(settings, list=True))
    task = str(answer.get("task") or settings.task)
    samples = answer.get("samples", [])
    return Listing([Case(id=str(i), task=task, file=settings.file) for i in samples])


def run_inspect(
    process: FrameworkProcess,
    settings: InspectSuite,
    folder: Path,
    starts: Mapping[str, int],
    repeats: int,
) -> Runs:
    """`repeats` epochs of the samples `starts` names, each numbered from its start; the
    run's log and inspect's cache in `folder`, a fresh one of the gate's."""
    logs, cache = writable_folder(folder, "logs"), writable_folder(folder, "cache")
    request = _request(
        settings, epochs=repeats, ids=list(starts), log_dir=str(logs), cache_dir=str(cache)
    )
    ran = [str(i) for i in _answer(process, settings, request).get("ran", [])]
    found, why = _read_logs(logs, ran, settings, starts) if ran else ({}, "")
    return completed(found, starts, repeats, why or "inspect ran no such sample")


def _read_logs(
    logs: Path, ran: Sequence[str], settings: InspectSuite, starts: Mapping[str, int]
) -> tuple[dict[str, list[Attempt]], str]:
    """Each sample's epochs the run's one log holds, and why one is missing."""
    from inspect_ai.log import read_eval_log

    files = sorted(logs.glob("*.eval"))
    found: dict[str, list[Attempt]] = {i: [] for i in ran}
    if len(files) != 1 or files[0].stat().st_size > MAX_LOG_BYTES:
        return found, f"inspect left {len(files)} logs where the gate expected one"
    log = read_eval_log(str(files[0]))
    why = "inspect's log holds no result for this sample"
    if log.error is not None and not log.samples:
        why = f"inspect's run failed: {log.error.message}"[:500]
    for sample in log.samples or []:
        key = str(sample.id)
        if key in found and key in starts:
            repeat = starts[key] + int(sample.epoch) - 1
            found[key].append(sample_attempt(sample, repeat, settings))
    return found, why


def _usage(sample: Any) -> tuple[Tokens, float | None]:
    prompt = completion = 0
    costs = []
    for usage in (sample.model_usage or {}).values():
        prompt += int(usage.input_tokens or 0)
        completion += int(usage.output_tokens or 0)
        if getattr(usage, "total_cost", None) is not None:
            costs.append(float(usage.total_cost))
    return Tokens(prompt=prompt, completion=completion), (round(sum(costs), 8) if costs else None)


def sample_attempt(sample: Any, repeat: int, settings: InspectSuite) -> Attempt:
    """One epoch of one sample (an inspect `EvalSample`) as a run of its case."""
    tokens, cost = _usage(sample)
    seconds = sample.total_time if sample.total_time is not None else sample.working_time
    output = sample.output.completion if sample.output is not None else None
    base: dict[str, Any] = {
        "repeat": repeat,
        "output": truncate_output(output),
        "latency_ms": round(seconds * 1000, 3) if seconds is not None else None,
        "tokens": tokens,
        "cost_usd": cost,
    }
    if sample.error is not None:
        return Attempt(status="error", error=f"sample error: {sample.error.message}"[:2000], **base)
    try:
        checks = score_checks(sample.scores or {}, settings.pass_, settings.scorer)
    except Unscorable as exc:
        return Attempt(status="error", error=f"score error: {exc}", **base)
    status = "pass" if all(c.passed for c in checks) else "fail"
    return Attempt(status=status, checks=checks, **base)
