"""`gate schema`: JSON Schema of gate.yml and of a case, generated from the pydantic models."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from gate.inputs.cases import CaseRecord
from gate.inputs.config import GateConfig

TITLES = {
    "config": "Eval Gate configuration (gate.yml)",
    "case": "Eval Gate case (one line of a .jsonl suite)",
}


def schema_for(kind: str) -> dict[str, Any]:
    model = GateConfig if kind == "config" else CaseRecord
    schema = model.model_json_schema(by_alias=True, mode="validation")
    if kind == "config":
        _allow_single_suite_shorthand(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = TITLES[kind]
    return schema


def _allow_single_suite_shorthand(schema: dict[str, Any]) -> None:
    """`cases:` + `system:` at the top level stand for one suite (see GateConfig)."""
    suite = schema["$defs"]["SuiteConfig"]["properties"]
    for key in ("cases", "system"):
        schema["properties"][key] = suite[key]
    schema["required"] = [r for r in schema.get("required", []) if r != "suites"]
    schema["oneOf"] = [{"required": ["suites"]}, {"required": ["cases", "system"]}]


def add_parser(sub: Any) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of gate.yml or of a case")
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
