"""The action's image, run the way GitHub runs a container action, against the stand-ins.

Runs only when `GATE_CONTAINER_IMAGE` names a built image (`.ci/container-test` builds it
with Podman and sets it); otherwise skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.servers.world import (
    REPOSITORY,
    TOKEN,
    WORDS,
    World,
    parse_outputs,
    project_files,
    serve_api,
    serve_world,
)

from gate.render.pr_comment import PR_MARKER

IMAGE = os.environ.get("GATE_CONTAINER_IMAGE")
pytestmark = pytest.mark.skipif(
    not IMAGE or shutil.which("podman") is None, reason="no GATE_CONTAINER_IMAGE to run"
)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with serve_api() as api, serve_world(tmp_path, api) as running:
        yield running


def test_container_fails_the_regression_and_comments_once(world: World) -> None:
    world.base()
    head_files = project_files("head", [w for w in WORDS if w != "CAC"])
    world.pr({"prompts/support.md": head_files["prompts/support.md"]})
    workspace = world.checkout()
    # The runner's user owns the workspace; the container runs as root.
    subprocess.run(["chown", "-R", "1000:1000", str(workspace)], check=True)
    files = world.tmp / "file_commands"
    home = world.tmp / "home"
    files.mkdir()
    home.mkdir()
    (files / "output").write_text("")
    (files / "summary").write_text("")
    event = world.event()
    env = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": "/github/workflow/event.json",
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_API_URL": world.api.url,
        "GITHUB_SERVER_URL": world.git_server.url,
        "GITHUB_WORKSPACE": "/github/workspace",
        "GITHUB_OUTPUT": "/github/file_commands/output",
        "GITHUB_STEP_SUMMARY": "/github/file_commands/summary",
        "GITHUB_RUN_ID": "4242",
        "HOME": "/github/home",
        "INPUT_CONFIG": "gate.yml",
        "INPUT_GITHUB-TOKEN": TOKEN,
        "INPUT_COMMENT": "on-change",
        "INPUT_FAIL-ON-REGRESSION": "true",
    }
    argv = ["podman", "run", "--rm", "--network", "host", "--workdir", "/github/workspace"]
    argv += ["-v", f"{workspace}:/github/workspace", "-v", f"{files}:/github/file_commands"]
    argv += ["-v", f"{event}:/github/workflow/event.json:ro", "-v", f"{home}:/github/home"]
    for name, value in env.items():
        argv += ["-e", f"{name}={value}"]
    done = subprocess.run([*argv, IMAGE or ""], capture_output=True, text=True, timeout=600)
    log = done.stdout + done.stderr
    assert done.returncode == 1, log
    comments = world.comments()
    assert len(comments) == 1, log
    assert comments[0].body.startswith(f"{PR_MARKER}\n❌ **Eval Gate: fail** (support)")
    assert "faq\\-001" in comments[0].body
    outputs = parse_outputs((files / "output").read_text())
    assert outputs["verdict"] == "fail" and json.loads(outputs["regressions"]) == ["faq-001"]
    assert "faq\\-001" in (files / "summary").read_text()
    assert "::error file=cases/support.jsonl,line=1," in done.stdout
    assert TOKEN not in log.replace(f"::add-mask::{TOKEN}", "")
