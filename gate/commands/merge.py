"""`gate merge`: join shard reports into one report, identical to an unsharded run's."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gate.commands.output import describe
from gate.report.merge import merge_reports


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        help="join the reports of `gate run --shard I/N` into one",
        description=(
            "Join the reports of the shards of one side (`gate run --shard I/N`, one report "
            "per shard) into OUT/LABEL.jsonl and its summary, identical to the report of an "
            "unsharded run. A missing or duplicated shard is an error naming it (exit 2)."
        ),
    )
    p.add_argument("reports", nargs="+", metavar="REPORT.jsonl", help="one report per shard")
    p.add_argument("--out", default="reports", help="output folder (default: reports)")
    p.add_argument("--label", required=True, help="name of the merged report: OUT/LABEL.jsonl")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    summary = merge_reports([Path(p) for p in args.reports], Path(args.out), args.label)
    print(describe(summary, Path(args.out) / f"{args.label}.jsonl"), file=sys.stderr)
    return 0
