"""`gate demo`: a complete PR comparison in a throwaway repository, offline and without keys."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gate.errors import InputError


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="a complete PR comparison in a throwaway repository, offline",
        description=(
            "Create a git repository with a base commit and a PR that edits a prompt and a model "
            "config, run `gate check` on it against the bundled offline example app, print the PR "
            "comment and write the reports, the Markdown and an HTML preview. Exits 0 when the "
            "demo ran, whatever the verdict it shows."
        ),
    )
    p.add_argument("--dir", metavar="DIR", help="an empty or new folder (default: a temp folder)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    folder = Path(args.dir).resolve() if args.dir else None
    if folder is not None and folder.exists() and any(folder.iterdir()):
        raise InputError("the demo needs an empty or new folder", file=folder, key="--dir")
    from gate.flow.demo import run_demo

    run_demo(folder, sys.stdout, sys.stderr)
    return 0
