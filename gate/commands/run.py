"""`gate run`: one side of a comparison -> LABEL.jsonl + LABEL.summary.json."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.inputs.config import LoadedConfig, load_config
from gate.inputs.shard import Shard
from gate.report.io import ReportWriter
from gate.report.models import CaseResult, Summary
from gate.run.endpoint_keys import judge_key_problem, located, system_key_problem
from gate.run.preflight import python_check_problems, pythonpath_problems, system_files_problems
from gate.run.side import SideRunner, cache_folder, spec_of_config
from gate.run.spec import SideSpec
from gate.run.summary_line import describe

ALL_ERRORED = 3  # the same code as an error verdict


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run a suite against one checkout and write its report",
        description=(
            "Run the suites of a config (or one, --suite) against one checkout (--root): ask "
            "the system every case, check each answer and write OUT/LABEL.jsonl (a metadata "
            "line, then one line per case) and OUT/LABEL.summary.json. One side of a "
            "comparison: `gate compare` pairs two such reports. Exit 0 when it ran, 3 when "
            "every case ended in an error, 2 bad input."
        ),
    )
    p.add_argument("-c", "--config", default="gate.yml", help="config file (default: gate.yml)")
    p.add_argument("--suite", help="suite name (default: every suite in the config)")
    p.add_argument("--root", default=".", help="checkout whose prompts, config and code are used")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--label", default="run", help="report name: OUT/LABEL.jsonl (default: run)")
    p.add_argument("--repeats", type=int, help="override `repeats` (runs per case)")
    p.add_argument("--concurrency", type=int, help="override `concurrency`")
    p.add_argument(
        "--no-cache", action="store_true", help="ignore and do not write the response cache"
    )
    p.add_argument("--record", metavar="FILE", help="also write the outputs as a replay file")
    p.add_argument("--shard", metavar="I/N", help="run only shard I of N (see `gate merge`)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="the response cache folder (default: cache.dir, $GATE_CACHE_DIR, ...)",
    )
    p.add_argument(
        "--heldout-detail",
        metavar="DIR",
        help="also write the full report here; the report in --out holds held-out cases "
        "redacted (id, outcome, cost), so --out can be uploaded",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    loaded = load_config(args.config)
    shard = str(Shard.parse(args.shard)) if args.shard else None
    names = [args.suite] if args.suite else [s.name for s in loaded.config.suites]
    if args.suite:
        loaded.config.suite(args.suite)
    code = 0
    for name in names:
        label = args.label if len(names) == 1 else f"{args.label}.{name}"
        spec = side_spec(loaded, name, args, label=label, shard=shard)
        try:
            summary = run_to_files(spec, Path(args.out), heldout_detail=args.heldout_detail)
        except InputError as exc:  # a refusal of the system's, named at gate.yml's line
            raise located(exc, loaded, loaded.config.suite(name)) from None
        print(describe(summary, Path(args.out) / f"{label}.jsonl"), file=sys.stderr)
        code = max(code, exit_code(summary))
    return code


def side_spec(
    loaded: LoadedConfig, name: str, args: argparse.Namespace, *, label: str, shard: str | None
) -> SideSpec:
    """The flags as one side: the config measures and runs, in the checkout `--root`."""
    suite, root = loaded.config.suite(name), Path(args.root)
    spec = spec_of_config(
        loaded,
        suite,
        root,
        label=label,
        cache_dir=Path(args.cache_dir).resolve()
        if args.cache_dir
        else cache_folder(loaded, dict(os.environ)),
        use_cache=not args.no_cache,
        shard=shard,
        record=Path(args.record).resolve() if args.record else None,
        show_progress=not args.quiet,
    )
    cases, environ = list(spec.measure.cases), dict(os.environ)
    problems = system_files_problems(loaded, suite, root) + pythonpath_problems(loaded, root)
    problems += python_check_problems(loaded, root, cases)
    keys = [judge_key_problem(loaded, cases, environ)]
    keys.append(system_key_problem(loaded, suite, root, environ))
    problems += [p for p in keys if p is not None]
    if problems:
        raise problems[0]
    update: dict[str, Any] = {}
    if args.repeats:
        update["repeats"] = args.repeats
    if args.concurrency:
        update["concurrency"] = args.concurrency
    if not update:
        return spec
    return spec.model_copy(update={"measure": spec.measure.model_copy(update=update)})


def run_to_files(spec: SideSpec, out: Path, *, heldout_detail: str | None = None) -> Summary:
    """Run the side once and write its report as the cases finish (a killed run leaves every
    finished case on disk); the held-out detail report too, when asked."""
    writers = [ReportWriter(out, spec.label)]
    if heldout_detail:
        writers.append(ReportWriter(Path(heldout_detail), spec.label, heldout_detail=True))
    started = time.perf_counter()
    with SideRunner(spec) as runner:
        assert runner.meta is not None
        for writer in writers:
            writer.open(runner.meta)

        def sink(result: CaseResult) -> None:
            for writer in writers:
                writer.write(result)

        runner.run(None, spec.measure.repeats, sink)
        duration = time.perf_counter() - started
        summaries = [w.close(runner.meta, duration, runner.traffic) for w in writers]
    return summaries[0]


def exit_code(summary: Summary) -> int:
    """3 when every case ended in an error (the system is down: nothing was measured)."""
    return ALL_ERRORED if summary.n and summary.errors == summary.n else 0
