"""`gate action` on the other events and inputs: push, workflow_dispatch, merge_group,
pull_request_target, unsupported events, `fail-on-regression`, `comment: never`, GHES; an
inconclusive suite (the `verdict` output, the exit code under `inconclusive: pass | block`, the
comment, the job summary, the accept label)."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.pr_comment import section, the_comment
from helpers.servers.git_http import git
from helpers.servers.github_api import GitHubServer
from helpers.servers.world import (
    REPOSITORY,
    WORDS,
    World,
    project_files,
    prompt,
    serve_api,
)


@pytest.fixture
def api() -> Iterator[GitHubServer]:
    with serve_api("/api/v3") as server:
        yield server


def branch_push(world: World) -> str:
    """main gets a commit that drops a rule; the workspace is that commit, one deep."""
    world.base()
    sha = world.author.commit("drop fees", {"prompts/support.md": prompt(WORDS[:1] + WORDS[2:])})
    world.author.push("HEAD:main")
    world.checkout(sha)
    return sha


def test_push_compares_with_the_parent_commit(world: World) -> None:
    sha = branch_push(world)
    event = world.event("push", after=sha, ref="refs/heads/main")
    run = world.run_here(world.environ(event, event_name="push"))
    assert run.code == 1, run.log
    assert json.loads(run.outputs["regressions"]) == ["faq-002"]
    assert world.comments() == []  # no pull request to comment on
    assert "faq\\-002" in run.summary


def test_workflow_dispatch_with_base_ref(world: World) -> None:
    first = world.base()
    world.author.commit("unrelated", {"README.md": "# changed\n"})
    world.author.push("HEAD:main")
    git(world.author.path, "checkout", "-q", "-b", "exp", first)
    sha = world.author.commit("drop card", {"prompts/support.md": prompt(WORDS[:-1])})
    world.author.push("exp")
    world.checkout(sha)
    event = world.event("workflow_dispatch", ref="refs/heads/exp")
    run = world.run_here(
        world.environ(event, event_name="workflow_dispatch", **{"base-ref": "main"})
    )
    assert run.code == 1, run.log
    assert json.loads(run.outputs["regressions"]) == ["faq-006"]
    bad = world.run_here(
        world.environ(event, event_name="workflow_dispatch", **{"base-ref": "nope"})
    )
    assert bad.code == 2 and "base ref 'nope' not found on `origin`" in bad.log


def test_merge_group_compares_with_the_queue_base(world: World) -> None:
    world.base()
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    world.checkout()
    group = json.loads(
        (Path(__file__).parent / "fixtures/webhooks/merge_group.checks_requested.json").read_text()
    )["merge_group"]
    group.update(base_sha=world.base_sha, head_sha=world.merge_sha)
    run = world.run_here(world.environ(world.event("merge_group.checks_requested", merge_group=group),
                                  event_name="merge_group"))  # fmt: skip
    assert run.code == 1 and run.outputs["verdict"] == "fail", run.log
    assert world.comments() == []


def test_pull_request_target_on_the_base_checkout_is_skipped_with_a_warning(
    world: World,
) -> None:
    world.base()
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    git(world.author.path, "checkout", "-q", "-B", "main", world.base_sha)
    world.author.commit("main moves on", {"README.md": "# newer\n"})
    world.author.push("HEAD:main")
    tip = git(world.author.path, "rev-parse", "HEAD")
    world.checkout(tip)  # what actions/checkout does for pull_request_target: the base branch
    event = world.event("pull_request.opened")
    run = world.run_here(world.environ(event, event_name="pull_request_target"))
    assert run.code == 0 and run.outputs["verdict"] == "skipped", run.log
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning::")]
    assert len(warnings) == 1 and "pull_request_target checks out the base branch" in warnings[0]
    assert world.comments() == []
    # a workflow that does check out the PR (its merge commit) is evaluated
    world.checkout()
    evaluated = world.run_here(world.environ(event, event_name="pull_request_target"))
    assert evaluated.code == 1 and len(world.comments()) == 1, evaluated.log


def test_unsupported_event_is_a_clear_skip(world: World) -> None:
    world.base()
    world.checkout(world.base_sha)
    run = world.run_here(
        world.environ(world.event("issue_comment.created"), event_name="issue_comment")
    )
    assert run.code == 0
    assert "::notice::Eval Gate skipped: event `issue_comment` is not evaluated" in run.stdout
    assert run.outputs["verdict"] == "skipped" and "skipped" in run.summary


def test_fail_on_regression_false_reports_without_blocking(world: World) -> None:
    world.base()
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    world.checkout()
    run = world.run_here(world.environ(world.event(), **{"fail-on-regression": "false"}))
    assert run.code == 0 and run.outputs["verdict"] == "fail", run.log
    assert "not blocking (fail-on-regression: false)" in run.stdout
    assert len(world.comments()) == 1  # reported all the same, on GitHub Enterprise's root


def test_comment_never_posts_nothing(world: World, api: GitHubServer) -> None:
    world.base()
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    world.checkout()
    run = world.run_here(world.environ(world.event(), comment="never"))
    assert run.code == 1
    labels = api.state.requests("GET", r"/issues/7/labels$")  # the verdict's, read only
    assert api.state.log == labels and len(labels) == 1 and "faq\\-001" in run.summary


def test_bad_input_is_one_line(world: World) -> None:
    world.base()
    world.checkout(world.base_sha)
    run = world.run(world.environ(world.event(), **{"fail-on-regression": "maybe"}))
    assert run.code == 2
    assert run.log.strip().splitlines() == [
        "::error title=Eval Gate%3A bad input::action input `fail-on-regression` must be true "
        "or false, got 'maybe'"
    ]


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


def _pr(world: World, rule: str) -> None:
    gate_yml = textwrap.dedent(GATE_YML.format(rule=rule)).lstrip()
    world.base({**project_files("base", WORDS), "gate.yml": gate_yml})
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    world.checkout()


def _comment(world: World) -> str:
    return section(the_comment(world.comments()), "support")


@pytest.mark.parametrize(("rule", "code"), [("pass", 0), ("block", 1)])
def test_an_inconclusive_suite_is_the_prs_verdict(world: World, rule: str, code: int) -> None:
    _pr(world, rule)
    run = world.run_here(world.environ(world.event()))
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
    run = world.run_here(world.environ(world.event("pull_request.labeled")))
    assert run.code == 0 and run.outputs["verdict"] == "pass", run.log
    assert "accepted by the label" in _comment(world)
