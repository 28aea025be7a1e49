"""`gate action`: the container entrypoint (see `gate.github.action`)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gate.flow.pr import exit_on_sigterm
from gate.github.action import run_action


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "action",
        help="the GitHub Action's entrypoint (reads the Actions environment)",
        description=(
            "Run the PR flow for the GitHub event this job was triggered by: fetch the base, "
            "run the suites on base and head, post one comment on the PR, write the job "
            "summary, outputs and annotations. Configured only through GITHUB_* variables and "
            "the action inputs (INPUT_*); use `gate check` on your machine. INPUT_MODE=shard "
            "(with INPUT_SHARD=I/N) runs one shard of both sides for a matrix job; "
            "INPUT_MODE=finish merges the shards, compares and comments. Exit 0 pass, skipped, "
            "inconclusive or partial, 1 fail (or inconclusive under `inconclusive: block`), "
            "3 error, 2 bad configuration."
        ),
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    exit_on_sigterm()
    return run_action(os.environ, sys.stdout)
