"""`inspect:` suites: an inspect_ai task run on a side, its log read back as case results.

The task runs in the system's confinement (`gate.frameworks.process`, `inspect_runner`) in
the side's run folder; its log, written to a private folder, is read through inspect_ai's own
API (`read_eval_log`). Samples pair by their explicit id; each epoch is a run of the case
(`repeat` = the case's start + epoch − 1); scores map to pass and fail by `gate.frameworks
.scores`; a sample's error, or a score the gate cannot read, is an error. Tokens (every
model's), time and cost come from the sample.

inspect's own cache (`generate(cache=...)`) lives in a private folder of the run: the PR's code
cannot leave answers in it for the other side, and a later round of `repeats: auto` (whose
epochs inspect numbers from 1 again) never replays an earlier round's answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.frameworks.overlay import scratch_folder
from gate.frameworks.process import FrameworkError, run_confined, runner_env, writable_folder
from gate.frameworks.results import FrameworkRun, missing_attempts, start_of
from gate.frameworks.scores import Unscorable, score_checks
from gate.inputs.cases import Case
from gate.inputs.framework_suites import InspectSuite
from gate.inputs.shard import Shard
from gate.report.models import Attempt, Tokens, truncate_output

MAX_LOG_BYTES = 512 * 1024 * 1024


def _request(
    settings: InspectSuite, ids: Sequence[str] | None, repeats: int, concurrency: int
) -> dict[str, Any]:
    return {
        "task": settings.task,
        "task_args": settings.task_args,
        "model": settings.model,
        "model_args": settings.model_args,
        "epochs": repeats,
        "ids": list(ids) if ids is not None else None,
        "max_samples": None,
    }


def _answer(
    settings: InspectSuite, request: dict[str, Any], run_dir: Path, env: dict[str, str]
) -> dict[str, Any]:
    answer = run_confined(
        "inspect_runner", request, run_dir, env, settings.timeout_s, "inspect.task"
    )
    if "refused" in answer:
        raise InputError(str(answer["refused"]), key="inspect.task")
    if "error" in answer:
        raise FrameworkError(f"inspect could not run {settings.task}: {answer['error']}")
    return answer


def _cases(settings: InspectSuite, answer: dict[str, Any]) -> list[Case]:
    task = str(answer.get("task") or settings.task)
    return [Case(id=str(i), task=task, file=settings.file) for i in answer.get("samples", [])]


def list_samples(
    settings: InspectSuite, run_dir: Path, environ: Mapping[str, str], concurrency: int = 1
) -> list[Case]:
    """The task's samples as cases (refused without explicit ids), nothing run."""
    request = {**_request(settings, None, 1, concurrency), "list": True, "log_dir": ""}
    return _cases(settings, _answer(settings, request, run_dir, runner_env(environ, {})))


def run_inspect(
    settings: InspectSuite,
    run_dir: Path,
    ids: Sequence[str] | None,
    repeats: int,
    environ: Mapping[str, str],
    *,
    start: int | Mapping[str, int] = 0,
    shard: Shard | None = None,
    concurrency: int = 8,
) -> FrameworkRun:
    """`repeats` epochs of the samples `ids` (None: all; `shard`: of those, its own)."""
    with scratch_folder() as scratch:
        logs, cache = writable_folder(scratch, "logs"), writable_folder(scratch, "cache")
        request = _request(settings, ids, repeats, concurrency) | {
            "log_dir": str(logs),
            "shard": [shard.index, shard.total] if shard else None,
        }
        env = runner_env(environ, {"INSPECT_CACHE_DIR": str(cache)})
        answer = _answer(settings, request, run_dir, env)
        ran = [str(i) for i in answer.get("ran", [])]
        attempts = _read_logs(logs, ran, repeats, settings, start) if ran else {}
    return FrameworkRun(_cases(settings, answer), attempts)


def _read_logs(
    logs: Path, ran: list[str], repeats: int, settings: InspectSuite, start: int | Mapping[str, int]
) -> dict[str, list[Attempt]]:
    from inspect_ai.log import read_eval_log

    files = sorted(logs.glob("*.eval"))
    found: dict[str, list[Attempt]] = {i: [] for i in ran}
    why = "inspect's log holds no result for this sample"
    if len(files) != 1 or files[0].stat().st_size > MAX_LOG_BYTES:
        why = f"inspect left {len(files)} logs where the gate expected one"
    else:
        log = read_eval_log(str(files[0]))
        if log.error is not None and not log.samples:
            why = f"inspect's run failed: {log.error.message}"[:500]
        for sample in log.samples or []:
            key = str(sample.id)
            if key in found:
                repeat = start_of(start, key) + int(sample.epoch) - 1
                found[key].append(sample_attempt(sample, repeat, settings))
    for key, attempts in found.items():
        done = {a.repeat for a in attempts}
        first = start_of(start, key)
        lost = [a for a in missing_attempts(key, first, repeats, why) if a.repeat not in done]
        found[key] = sorted([*attempts, *lost], key=lambda a: a.repeat)
    return found


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
