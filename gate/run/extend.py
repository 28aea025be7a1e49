"""`gate run --append --cases-from FILE`: more runs of some cases, added to an existing report.

This is how `repeats: auto` spends calls after round 0: the flow names the cases it wants more
runs of, and each side's `gate run` adds `--repeats` runs to each of them. Run k of a case is
the call with repeat index k (its own cached answer: the cache key holds the index), so an
unchanged side replays what it answered before and a changed one pays only for new runs.
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from gate.checks import plan_case
from gate.errors import InputError
from gate.inputs.cases import Case
from gate.report.io import dump_line, read_report, report_paths, write_report, write_summary
from gate.report.models import Attempt, CaseResult, Report, Summary
from gate.report.summary import SummaryBuilder
from gate.run.runner import RunOptions, aggregate, run_attempt
from gate.run.side import RunRequest, measured_cases, open_services, system_env, wanted_ids


def attempts_of(result: CaseResult) -> list[Attempt]:
    """The runs a result holds (a single run keeps them in the result itself)."""
    if result.attempts:
        return list(result.attempts)
    return [
        Attempt(
            repeat=0,
            status=result.status,
            checks=result.checks,
            scores=result.scores,
            output=result.output,
            error=result.error,
            latency_ms=result.latency_ms,
            tokens=result.tokens,
            cost_usd=result.cost_usd,
            cached=result.cached,
            judge=result.judge,
        )
    ]


def extend_side(request: RunRequest) -> Summary:
    """Add `request.repeats` runs (default 1) of the listed cases to OUT/LABEL.jsonl (and to
    the held-out detail report, when there is one); held-out cases stay redacted in the first."""
    assert request.cases_from is not None
    config = request.loaded.config
    cases = measured_cases(request)
    path, summary_path = report_paths(request.out_dir, request.label)
    report = read_report(path)
    by_id = {case.id: (index, case) for index, case in enumerate(cases)}
    previous = {result.id: result for result in report.results}
    ids = wanted_ids(request.cases_from)
    for case_id in ids:
        if case_id not in by_id or case_id not in previous:
            where = "the suite" if case_id not in by_id else "the report"
            raise InputError(f"case {case_id!r} is not in {where}", file=request.cases_from)
    more = request.repeats or 1
    options = RunOptions(
        concurrency=request.concurrency or config.concurrency,
        repeats=more,
        timeout_s=config.timeout_s,
    )
    env = system_env(request)
    started = time.perf_counter()
    with open_services(request, [by_id[i][1] for i in ids], env) as (system, ctx):

        def one(case_id: str) -> list[Attempt]:
            _, case = by_id[case_id]
            start = previous[case_id].repeats
            checks = plan_case(case)
            return [run_attempt(case, start + k, system, checks, ctx, options) for k in range(more)]

        with ThreadPoolExecutor(max_workers=options.concurrency) as pool:
            new = dict(zip(ids, pool.map(one, ids), strict=True))
    http = {role: traffic.as_dict() for role, traffic in env.traffic.items()}
    duration = time.perf_counter() - started
    summary = _extend(report, path, summary_path, new, by_id, duration, http, redact=True)
    if request.heldout_detail is not None:
        detail, detail_summary = report_paths(request.heldout_detail, request.label)
        if detail.is_file():
            full = read_report(detail)
            _extend(full, detail, detail_summary, new, by_id, duration, http, redact=False)
    if request.show_progress:
        print(f"[{request.label}] {len(ids)} cases: {more} more runs each", file=sys.stderr)
    return summary


def _extend(
    report: Report,
    path: Path,
    summary_path: Path,
    new: dict[str, list[Attempt]],
    by_id: dict[str, tuple[int, Case]],
    duration: float,
    http: dict[str, dict[str, int]],
    *,
    redact: bool,
) -> Summary:
    results = []
    for result in report.results:
        if result.id in new:
            index, case = by_id[result.id]
            result = aggregate(case, index, attempts_of(result) + new[result.id])
        results.append(result.redacted() if redact and result.heldout else result)
    write_report(path, report.meta, (dump_line(r) for r in results))
    builder = SummaryBuilder()
    for result in results:
        builder.add(result)
    summary = builder.build(report.meta, duration, http)
    write_summary(summary_path, summary)
    return summary
