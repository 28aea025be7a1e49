"""`gate action` with the base's instrument, end to end: a PR that deletes its failing cases
fails with the change in the comment's visible part; the accept label, read from the API at
run time (the GitHub stand-in), turns it into an accepted pass and removing it fails it again;
the sharded mode's jobs and the finish job say what the unsharded run says, the head's own
instrument's answer included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from helpers.pr_comment import section, the_comment
from helpers.pr_scenarios import ACCEPT, SCENARIOS, base_files, visible
from helpers.servers.github_api import Fault, GitHubServer
from helpers.servers.world import REPOSITORY, Run, World

from gate.render.markdown import text

REPORTS = "eval-gate-reports"
DOWNLOADS = "eval-gate-shards"


def comment(world: World, suite: str) -> str:
    return section(the_comment(world.comments()), suite)


def run_event(world: World, name: str = "pull_request.synchronize", **payload: object) -> Run:
    """The action, in-process (`World.run_here`), on the event `name`."""
    world.checkout()
    return world.run_here(world.environ(world.event(name, **payload)))


def test_the_accept_label_is_read_when_the_job_runs(world: World, api: GitHubServer) -> None:
    world.base(base_files())
    world.pr(SCENARIOS["delete the failing cases"]())
    failed = run_event(world)
    assert failed.code == 1, failed.log
    top = visible(comment(world, "support"))
    assert "📏 This PR changes how it is measured" in top and "removes 5 cases" in top
    assert "this PR would read: pass" in top  # what the head's instrument would say

    # Someone with triage rights adds the label: GitHub sends `labeled` (whose payload holds
    # other labels: the API's answer now is what counts).
    api.state.set_labels(REPOSITORY, world.number, ["bug", ACCEPT])
    accepted = run_event(world, "pull_request.labeled")
    assert accepted.code == 0, accepted.log
    assert accepted.outputs["verdict"] == "pass"
    body = comment(world, "support")
    assert "accepted by the label <code>eval\\-gate: accept</code>" in visible(body).splitlines()[1]
    assert "which without it fails: the pass rate dropped 12.5 points" in visible(body)
    assert "[gate] support: pass: accepted by the label `eval-gate: accept`" in accepted.stdout
    assert len(api.state.requests("GET", r"/issues/\d+/labels$")) == 2

    api.state.set_labels(REPOSITORY, world.number, ["bug"])
    removed = run_event(world, "pull_request.labeled", action="unlabeled")
    assert removed.code == 1, removed.log
    assert "accepted by" not in comment(world, "support")
    assert len(world.comments()) == 1  # edited


def test_the_events_labels_count_when_the_api_cannot_say(world: World, api: GitHubServer) -> None:
    world.base(base_files())
    world.pr(SCENARIOS["loosen their expect"]())
    world.checkout()
    event = world.event("pull_request.labeled")
    payload = json.loads(event.read_text())
    payload["pull_request"]["labels"] = [{**payload["label"], "name": ACCEPT}]
    event.write_text(json.dumps(payload))
    api.state.inject(Fault("GET", r"/labels$", 404))
    run = world.run_here(world.environ(event))
    assert run.code == 0, run.log
    assert "::warning title=Eval Gate::cannot read the PR's labels" in run.stdout
    assert "accepted by the label" in comment(world, "support")


def _shard(world: World, index: int) -> Path:
    workspace = world.checkout()
    run = world.run(world.environ(world.event(), mode="shard", shard=f"{index}/2"))
    assert run.code == 0, run.log
    return workspace / REPORTS


def test_shards_and_the_finish_job_measure_with_the_base_and_say_what_the_head_would(
    world: World,
) -> None:
    world.base(base_files())
    world.pr(SCENARIOS["add head-only passing cases to offset a drop"]())
    world.checkout()
    full = world.run(world.environ(world.event(), comment="never"))
    assert full.code == 1, full.log
    whole = (world.workspace / REPORTS / "comment.md").read_text()  # type: ignore[operator]

    uploads = [_shard(world, index) for index in (1, 2)]
    for folder in uploads:  # each job re-judged its own shard with the head's instrument
        assert list(folder.glob("support/head-instrument/*.shard-*-of-2.jsonl"))
        assert not list(folder.rglob("*.answers.jsonl"))  # the recorded answers stay private
    workspace = world.checkout()
    for folder in uploads:
        shutil.copytree(folder, workspace / DOWNLOADS, dirs_exist_ok=True)
    finish = world.run(world.environ(world.event(), mode="finish"))
    assert finish.code == 1, finish.log
    body = comment(world, "support")
    for part in ("adds 200 cases", "this PR would read: pass (−2.1 points", "over 240 cases"):
        assert text(part) in visible(body) and text(part) in visible(whole)
    assert finish.outputs == full.outputs
    assert full.outputs["delta"] == "-6.25"  # both suites' 80 base cases, the added ones apart
