"""The Action's inputs and `gate check`'s flags only tighten the policy.

On `pull_request` the workflow file is the PR's own, so its `threshold` and `block-severities`
could relax the gate that judges the PR: a larger threshold is not applied, a dropped severity
still blocks, and the comment says so; `fail-on-regression: false` (which the gate cannot take
back: the step's exit code is the workflow's) makes the comment say the verdict is not
enforced. Through the real Action (a GitHub API stand-in, a real repository) and `gate check`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import gate_here
from helpers.pr_scenarios import drop, make_project, visible
from helpers.servers.world import WORDS, World, prompt, serve_api, serve_world

from gate.render.markdown import prose, text

LOOSER = "was not applied as given: it would loosen the policy"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    with serve_api() as api, serve_world(tmp_path, api) as running:
        yield running


def api_comment(world: World) -> str:
    (body,) = [c.body for c in world.comments()]
    return str(body)


def regressing_pr(world: World) -> None:
    world.base()
    world.pr({"prompts/support.md": prompt(WORDS[:1] + WORDS[2:])})  # fees: -16.7 points
    world.checkout()


def test_a_looser_threshold_and_a_dropped_severity_are_not_applied(world: World) -> None:
    regressing_pr(world)
    inputs = {"threshold": "50", "block-severities": "minor"}
    run = world.run_here(world.environ(world.event(), **inputs))
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.log
    shown = visible(api_comment(world))
    assert "❌ **Eval Gate: fail** (support)" in shown
    assert text(f"the override threshold: 50 {LOOSER} (3)", 400) in shown
    assert text("so 3 judges this PR", 400) in shown
    severities = f"the override block_severities: [minor] {LOOSER} ([blocker])"
    assert text(severities, 400) in shown
    assert text("so [blocker, minor] judges this PR", 400) in shown
    assert json.loads(run.outputs["regressions"]) == ["faq-002"]


def test_a_stricter_threshold_applies_without_a_note(world: World) -> None:
    regressing_pr(world)
    run = world.run_here(
        world.environ(world.event(), threshold="1", **{"block-severities": "blocker,major"})
    )
    assert run.code == 1, run.log
    body = api_comment(world)
    assert "threshold 1)" in visible(body) and LOOSER not in body
    assert "Blocking cases failing on head (1)" in visible(body)  # a major case blocks


def test_fail_on_regression_false_says_the_verdict_is_not_enforced(world: World) -> None:
    regressing_pr(world)
    run = world.run_here(world.environ(world.event(), **{"fail-on-regression": "false"}))
    assert run.code == 0 and run.outputs["verdict"] == "fail", run.log
    shown = visible(api_comment(world))
    assert "❌ **Eval Gate: fail** (support)" in shown  # the real verdict, shown as it is
    assert text("this verdict is not enforced: the workflow sets", 400) in shown
    assert (
        text("so a fail (or an inconclusive that the policy blocks) does not block", 400) in shown
    )


def test_gate_check_threshold_only_tightens(tmp_path: Path) -> None:
    author = make_project(tmp_path / "repo")
    author.write({"prompts/support.md": drop("fees")["prompt"]})  # support: -12.5 points
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    args = ("check", "--base", "main", "--format", "markdown")
    looser = gate_here(*args, "--threshold", "20", cwd=author.path, env=env)
    assert looser.code == 1, looser.err
    assert text(f"the override threshold: 20 {LOOSER} (3)", 400) in visible(looser.out)
    assert "(−12.5 pts, threshold 3)" in looser.out


def test_a_config_path_the_base_lacks_is_named(tmp_path: Path) -> None:
    """The workflow's `config:` (or `-c`) pointing at a file the PR adds: the head's instrument
    applies, as for the first PR, and the comment names the file the base lacks."""
    author = make_project(tmp_path / "repo")
    moved = (author.path / "gate.yml").read_text().replace("threshold: 3", "threshold: 50")
    author.write(
        {"evals/gate.yml": moved.replace("cases/", "../cases/").replace("safety/", "../safety/")}
    )
    author.write({"prompts/support.md": drop("fees")["prompt"]})
    done = gate_here("check", "--base", "main", "-c", "evals/gate.yml", "--format", "markdown",
                    cwd=author.path, env={"GATE_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    assert done.code == 0, done.err  # the known gap: docs/security.md, what is knowingly left
    said = "the base has no `evals/gate.yml`, so the head's own instrument and policy judge"
    assert prose(said, 400) in visible(done.out)
