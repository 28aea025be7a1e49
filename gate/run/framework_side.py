"""`gate run` of an inspect or pytest suite (`gate.frameworks`): one side's report.

The side's run folder is its checkout (`--root`) with the instrument's files of the checkout
that measures (`--checks-root`: the base's in the PR flow; default `--root`); the framework
runs there, confined, and its results become the report's lines, aggregated as a native
suite's (`gate.run.runner.aggregate`: pass fractions, attempts, flakiness). `--append` (the
rounds of `repeats: auto`) asks for more runs (epochs) of the listed cases and adds them.

`run_request` is the hook `gate run` (`gate.commands.run`) calls before its own suites' run.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from gate import __version__
from gate.errors import InputError
from gate.frameworks import FrameworkRun, FrameworkSuite, overlay, run
from gate.inputs.cases import Case
from gate.report.io import (
    ReportWriter,
    dump_line,
    read_report,
    report_paths,
    write_report,
    write_summary,
)
from gate.report.models import CaseResult, RunMeta, Summary
from gate.report.plan import AutoRecord
from gate.report.summary import SummaryBuilder
from gate.run.extend import attempts_of
from gate.run.own_system import own_suite
from gate.run.provenance import git_state, hash_files, now_iso
from gate.run.runner import aggregate
from gate.run.side import (
    RunRequest,
    adaptive,
    auto_plan,
    cache_dir,
    run_repeats,
    wanted_ids,
    watched_files,
)


def framework_suite(request: RunRequest) -> FrameworkSuite:
    config = request.loaded.config
    measuring = config.suite(request.suite)
    own = own_suite(request.loaded, request.system_config, request.suite)
    return FrameworkSuite.of(measuring, own, request.concurrency or config.concurrency)


def _repeats(request: RunRequest, suite: FrameworkSuite) -> int:
    """Round 0's runs: `--repeats`, else the task's `epochs`, else gate.yml's."""
    if request.repeats is None and suite.inspect is not None and suite.inspect.epochs:
        return suite.inspect.epochs
    return run_repeats(request, request.loaded.config)


def _meta(request: RunRequest, suite: FrameworkSuite, done: FrameworkRun, n: int) -> RunMeta:
    root = request.root.resolve()
    sha, dirty = git_state(root)
    config = request.loaded.config
    # What ran: the side's own watched files, and the instrument as the run folder held it
    # (the measuring checkout's files, not the side's edits of them).
    own = watched_files(
        root, [*config.watch, *config.suite(request.suite).watch], skip=cache_dir(request)
    )
    judging = request.judging_root
    instrument = [p for p in watched_files(judging, list(suite.globs)) if p.is_file()]
    files = hash_files([request.own.path, *own], [root, request.loaded.base_dir])
    files |= hash_files(instrument, [judging])
    framework: dict[str, Any] = {"name": suite.framework, "instrument": list(suite.globs)}
    if done.notes:
        framework["skipped_by_marks"] = done.notes
    return RunMeta(
        gate_version=__version__,
        label=request.label,
        suite=suite.name,
        created_at=now_iso(),
        root=str(root),
        git_sha=sha,
        git_dirty=dirty,
        config_file=str(request.loaded.path),
        system_config_file=str(request.system_config.path) if request.system_config else None,
        files=dict(sorted(files.items())),
        system=suite.describe(),
        repeats=_repeats(request, suite),
        concurrency=suite.concurrency,
        auto=AutoRecord(plan=auto_plan(config)) if adaptive(request, config) else None,
        n_cases=n,
        suite_size=len(done.cases),
        shard=str(request.shard) if request.shard else None,
        framework=framework,
    )


def run_framework_side(request: RunRequest) -> Summary:
    """Round 0 of the side: every case (or `--cases-from`'s, or `--shard`'s) `repeats` times."""
    if request.answers is not None or request.record is not None:
        raise InputError(
            "inspect and pytest suites cannot record or replay answers", key="--answers"
        )
    suite = framework_suite(request)
    ids = wanted_ids(request.cases_from) if request.cases_from is not None else None
    if request.show_progress:  # the framework reports at its end: say what runs meanwhile
        what = (
            suite.inspect.task
            if suite.inspect
            else " ".join(suite.pytest.args if suite.pytest else [])
        )
        print(f"[{request.label}] {suite.framework}: running {what}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with overlay(request.root, request.judging_root, list(suite.globs)) as run_dir:
        try:
            done = run(
                suite, run_dir, ids, _repeats(request, suite), request.environ,
                shard=request.shard, config_root=request.judging_root,
            )  # fmt: skip
        except InputError as exc:  # the task's: named at the suite's key in gate.yml
            raise _at_key(request, exc) from None
    if not done.cases:
        raise InputError(
            f"suite {suite.name!r} has no cases: {suite.framework} found none", key="suites"
        )
    results = _aggregated(done.cases, done)
    meta = _meta(request, suite, done, len(results))
    writers = [ReportWriter(request.out_dir, request.label)]
    if request.heldout_detail is not None:
        writers.append(ReportWriter(request.heldout_detail, request.label, heldout_detail=True))
    for writer in writers:
        writer.open(meta)
        for result in results:
            writer.write(result)
    duration = time.perf_counter() - started
    summaries = [writer.close(meta, duration, {}) for writer in writers]
    return summaries[0]


def _at_key(request: RunRequest, exc: InputError) -> InputError:
    if exc.file is not None or exc.key is None:
        return exc
    line = request.loaded.suite_line(str(request.suite), *exc.key.split("."))
    return InputError(exc.message, file=request.loaded.path, line=line, key=exc.key)


def _aggregated(cases: list[Case], done: FrameworkRun) -> list[CaseResult]:
    return [
        aggregate(case, index, done.attempts[case.id])
        for index, case in enumerate(cases)
        if done.attempts.get(case.id)
    ]


def extend_framework_side(request: RunRequest) -> Summary:
    """`--append`: `--repeats` more runs of the listed cases, added to the side's report."""
    assert request.cases_from is not None
    suite = framework_suite(request)
    path, summary_path = report_paths(request.out_dir, request.label)
    report = read_report(path)
    previous = {r.id: r for r in report.results}
    ids = wanted_ids(request.cases_from)
    unknown = [i for i in ids if i not in previous]
    if unknown:
        raise InputError(f"case {unknown[0]!r} is not in the report", file=request.cases_from)
    more = request.repeats or 1
    started = time.perf_counter()
    with overlay(request.root, request.judging_root, list(suite.globs)) as run_dir:
        start = {i: previous[i].repeats for i in ids}
        done = run(
            suite, run_dir, ids, more, request.environ,
            start=start, config_root=request.judging_root,
        )  # fmt: skip
    results = [_extended(r, done) for r in report.results]
    write_report(path, report.meta, (dump_line(r.redacted() if r.heldout else r) for r in results))
    builder = SummaryBuilder()
    for result in results:
        builder.add(result)
    summary = builder.build(report.meta, time.perf_counter() - started, {})
    write_summary(summary_path, summary)
    if request.show_progress:
        print(f"[{request.label}] {len(ids)} cases: {more} more runs each", file=sys.stderr)
    return summary


def _extended(result: CaseResult, done: FrameworkRun) -> CaseResult:
    new = done.attempts.get(result.id)
    if not new:
        return result
    case = Case(id=result.id, task=result.task, file=result.file, line=result.line)
    return aggregate(case, result.index, attempts_of(result) + new)


def run_request(request: RunRequest) -> Summary | None:
    """The hook of `gate run`: the side's summary when its suite is an inspect or pytest
    suite (round 0, or `--append`'s more runs); None for the gate's own suites."""
    if request.loaded.config.suite(request.suite).framework is None:
        return None
    return extend_framework_side(request) if request.append else run_framework_side(request)
