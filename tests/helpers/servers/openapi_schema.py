"""OpenAPI descriptions as JSON Schema, for the stand-ins that check requests against them
(GitHub's REST API, OpenAI's chat API)."""

from __future__ import annotations

from typing import Any


def as_json_schema(node: Any, uri: str) -> Any:
    """An OpenAPI schema as JSON Schema: without `nullable` and `discriminator`, its local
    `$ref`s made absolute under `uri` (the registry's name for the whole description)."""
    if isinstance(node, list):
        return [as_json_schema(v, uri) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: as_json_schema(v, uri) for k, v in node.items() if k != "discriminator"}
    if isinstance(out.get("$ref"), str) and out["$ref"].startswith("#"):
        out["$ref"] = uri + out["$ref"]
    if "discriminator" in node and "oneOf" in out:
        out["anyOf"] = out.pop("oneOf")  # the discriminator picks a branch; they may overlap
    if out.pop("nullable", False):
        return {"anyOf": [out, {"type": "null"}]}
    return out
