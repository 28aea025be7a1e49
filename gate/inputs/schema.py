"""The JSON Schemas of what the user writes, generated from the pydantic models: gate.yml
(`GateConfig`) and one case (`CaseRecord`). Published in schemas/ (`gate schema`)."""

from __future__ import annotations

from typing import Any, Literal

from gate.inputs.cases import CaseRecord
from gate.inputs.config import GateConfig

SchemaKind = Literal["config", "case"]
TITLES = {
    "config": "Eval Gate configuration (gate.yml)",
    "case": "Eval Gate case (a line of a .jsonl suite, an item of .json or .yaml; a CSV row "
    "maps onto it)",
}


def schema_for(kind: SchemaKind) -> dict[str, Any]:
    model = GateConfig if kind == "config" else CaseRecord
    schema = model.model_json_schema(by_alias=True, mode="validation")
    if kind == "config":
        _allow_promptfoo_suites(schema)
        _allow_single_suite_shorthand(schema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = TITLES[kind]
    return schema


def _allow_promptfoo_suites(schema: dict[str, Any]) -> None:
    """A suite is `cases` + `system`, or `promptfoo`, `inspect` or `pytest` alone (each is the
    system too)."""
    suite = schema["$defs"]["SuiteConfig"]
    suite["required"] = [r for r in suite.get("required", []) if r != "system"]
    alone = {"anyOf": [{"required": ["cases"]}, {"required": ["system"]}]}
    suite["oneOf"] = [
        {"required": ["cases", "system"]},
        *({"required": [key], "not": alone} for key in ("promptfoo", "inspect", "pytest")),
    ]


def _allow_single_suite_shorthand(schema: dict[str, Any]) -> None:
    """`cases:` + `system:` (or `promptfoo:`, `inspect:`, `pytest:`) at the top level stand for
    one suite."""
    suite = schema["$defs"]["SuiteConfig"]["properties"]
    for key in ("cases", "system", "promptfoo", "inspect", "pytest", "instrument"):
        schema["properties"][key] = suite[key]
    schema["required"] = [r for r in schema.get("required", []) if r != "suites"]
    schema["oneOf"] = [
        {"required": ["suites"]},
        {"required": ["cases", "system"]},
        {"required": ["promptfoo"]},
        {"required": ["inspect"]},
        {"required": ["pytest"]},
    ]
