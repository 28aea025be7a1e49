"""`gate run`: one side of a comparison -> LABEL.jsonl + LABEL.summary.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gate.commands.output import describe
from gate.errors import InputError
from gate.inputs.config import load_config
from gate.inputs.shard import Shard
from gate.report.models import Summary
from gate.run.side import RunRequest, run_side

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
    p.add_argument(
        "--cases-from",
        metavar="FILE",
        help="the ids (one a line) of the cases to run; with --append: to run again",
    )
    p.add_argument(
        "--append",
        action="store_true",
        help="add --repeats more runs of the --cases-from cases to the existing report OUT/LABEL "
        "(run k of a case is its own call, and its own cached answer)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument(
        "--system-config",
        metavar="FILE",
        help="this side's own gate.yml: its suite's `system` and sandbox.pythonpath/prelude run, "
        "measured with --config's cases, checks, judge, prices and sandbox limits (the PR "
        "flow's head side, measured with the base's)",
    )
    p.add_argument(
        "--checks-root",
        metavar="DIR",
        help="the checkout whose code judges: `expect.python` modules and the sandbox's "
        "pythonpath of the checks (default: --root; the PR flow: the base's, for both sides)",
    )
    p.add_argument(
        "--added-cases",
        metavar="FILE",
        help="a gate.yml whose suite of the same name brings more cases: those whose id "
        "--config's suite lacks are asked too, marked `added` (the PR flow: the PR's cases)",
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="the response cache folder (default: cache.dir, $GATE_CACHE_DIR, ...)",
    )
    p.add_argument(
        "--answers",
        metavar="FILE",
        help="answer from this recording (`--record`'s file) instead of calling the system: "
        "re-judge the same answers with --config's instrument",
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
    own = load_config(args.system_config) if args.system_config else None
    added = load_config(args.added_cases) if args.added_cases else None
    shard = Shard.parse(args.shard) if args.shard else None
    if args.append and not args.cases_from:
        raise InputError("--append needs --cases-from: the cases to run again", key="--append")
    names = [args.suite] if args.suite else [s.name for s in loaded.config.suites]
    if args.suite:
        loaded.config.suite(args.suite)
    code = 0
    for name in names:
        label = args.label if len(names) == 1 else f"{args.label}.{name}"
        request = RunRequest(
            loaded=loaded,
            suite=name,
            root=Path(args.root),
            out_dir=Path(args.out),
            label=label,
            use_cache=not args.no_cache,
            record=Path(args.record) if args.record else None,
            shard=shard,
            repeats=args.repeats,
            concurrency=args.concurrency,
            cases_from=Path(args.cases_from) if args.cases_from else None,
            append=args.append,
            show_progress=not args.quiet,
            system_config=own,
            heldout_detail=Path(args.heldout_detail) if args.heldout_detail else None,
            checks_root=Path(args.checks_root) if args.checks_root else None,
            added_from=added,
            cache_dir=Path(args.cache_dir) if args.cache_dir else None,
            answers=Path(args.answers) if args.answers else None,
        )
        summary = _framework_side(request)  # an inspect or pytest suite (gate.frameworks)
        if summary is not None:
            pass
        elif request.append:  # the rounds of repeats: auto: more runs of some cases
            from gate.run.extend import extend_side

            summary = extend_side(request)
        else:
            summary = run_side(request)
        print(describe(summary, Path(args.out) / f"{label}.jsonl"), file=sys.stderr)
        code = max(code, exit_code(summary))
    return code


def _framework_side(request: RunRequest) -> Summary | None:
    from gate.run.framework_side import run_request

    return run_request(request)


def exit_code(summary: Summary) -> int:
    """3 when every case ended in an error (the system is down: nothing was measured)."""
    return ALL_ERRORED if summary.n and summary.errors == summary.n else 0
