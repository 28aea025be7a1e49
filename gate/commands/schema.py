"""`gate schema`: JSON Schema of gate.yml and of a case (`gate.inputs.schema`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gate.inputs.schema import schema_for


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of gate.yml or of a case",
        description=(
            "Print the JSON Schema of gate.yml (`config`) or of one case (`case`), generated "
            "from the models the gate validates with, for editor completion and validation: "
            "`gate schema config --out gate.schema.json`, then "
            "`# yaml-language-server: $schema=./gate.schema.json` atop gate.yml."
        ),
    )
    p.add_argument("kind", choices=["config", "case"], help="which schema")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    text = json.dumps(schema_for(args.kind), indent=2) + "\n"
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    else:
        print(text, end="")
    return 0
