"""`gate action` when a suite is inconclusive: the Action's `verdict` output, its exit code
under the base's `inconclusive: pass | block`, the comment's headline and what would decide it,
the job summary, and the accept label as the way out of a blocking inconclusive suite."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.servers.github_api import GitHubServer
from helpers.servers.world import (
    REPOSITORY,
    WORDS,
    World,
    project_files,
    prompt,
    serve_api,
    serve_world,
)

# One regression of six cases is a drop of 16.7 points, past the threshold of 3, which the
# drop test (exact McNemar, one run per case) cannot tell from noise: p = 0.5.
GATE_YML = """
watch: ["prompts/**"]
threshold: 3
require_significance: true
inconclusive: {rule}
suites:
  - name: support
    cases: cases/support.jsonl
    system: {{kind: python, target: "app.bot:answer"}}
"""


@pytest.fixture
def api() -> Iterator[GitHubServer]:
    with serve_api() as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: GitHubServer) -> Iterator[World]:
    with serve_world(tmp_path, api) as running:
        yield running


def _pr(world: World, rule: str) -> None:
    gate_yml = textwrap.dedent(GATE_YML.format(rule=rule)).lstrip()
    world.base({**project_files("base", WORDS), "gate.yml": gate_yml})
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    world.checkout()


def _comment(world: World) -> str:
    (body,) = [c.body for c in world.comments() if c.body.startswith("<!-- eval-gate:support ")]
    return body


@pytest.mark.parametrize(("rule", "code"), [("pass", 0), ("block", 1)])
def test_an_inconclusive_suite_is_the_prs_verdict(world: World, rule: str, code: int) -> None:
    _pr(world, rule)
    run = world.run(world.environ(world.event()))
    assert run.code == code, run.log
    assert run.outputs["verdict"] == "inconclusive"
    body = _comment(world)
    headline = body.splitlines()[1]
    assert headline.startswith("❔ **Eval Gate: inconclusive** (support)")
    assert "inconclusive: the pass rate dropped 16.7 points" in body
    assert "with one run per case the gate cannot tell these changes from noise" in body
    assert "Eval Gate: inconclusive" in run.summary
    assert "[gate] support: inconclusive: inconclusive: the pass rate dropped" in run.stdout


def test_the_accept_label_lets_a_blocking_inconclusive_suite_through(
    world: World, api: GitHubServer
) -> None:
    _pr(world, "block")
    api.state.set_labels(REPOSITORY, world.number, ["eval-gate: accept"])
    run = world.run(world.environ(world.event("pull_request.labeled")))
    assert run.code == 0 and run.outputs["verdict"] == "pass", run.log
    assert "accepted by the label" in _comment(world)
