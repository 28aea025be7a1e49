"""`gate schema`: the published JSON Schemas match the models and accept the examples."""

from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from helpers.cli import REPO, run_gate

from gate.inputs.schema import schema_for


@pytest.mark.parametrize(
    ("kind", "file"), [("config", "gate.schema.json"), ("case", "case.schema.json")]
)
def test_committed_schemas_are_current(kind: str, file: str) -> None:
    committed = json.loads((REPO / "schemas" / file).read_text())
    assert committed == schema_for(kind), f"run: gate schema {kind} --out schemas/{file}"


def test_examples_validate_and_typos_do_not() -> None:
    config_schema = schema_for("config")
    jsonschema.Draft202012Validator.check_schema(config_schema)
    jsonschema.validate(yaml.safe_load((REPO / "gate.yml").read_text()), config_schema)
    jsonschema.validate(
        {"cases": "c.jsonl", "system": {"kind": "replay", "file": "r.jsonl"}}, config_schema
    )
    with pytest.raises(jsonschema.ValidationError, match="threshhold"):
        jsonschema.validate(
            {"cases": "c.jsonl", "system": {"kind": "replay", "file": "r"}, "threshhold": 1},
            config_schema,
        )
    case_schema = schema_for("case")
    for path in (REPO / "cases").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            jsonschema.validate(json.loads(line), case_schema)
    with pytest.raises(jsonschema.ValidationError, match="must_inclde"):
        jsonschema.validate({"id": "x", "expect": {"must_inclde": ["a"]}}, case_schema)


def test_schema_command_prints_json() -> None:
    done = run_gate("schema", "case")
    assert done.code == 0 and json.loads(done.out)["title"].startswith("Eval Gate case")
