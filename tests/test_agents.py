"""Agents end to end: `gate check` of a pull request on a support agent, a chat model in a tool
loop (the model server stand-in, speaking OpenAI and Anthropic, checking every request against
the vendor's own description), with a second user turn. A prompt change that skips a step,
calls a forbidden tool, takes twice the steps or breaks the second turn fails, and the comment
shows both paths; a no-op change passes; a rerun costs no call; a call the case gives no result
for is an error naming it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.agents import KEY, PLAN, REFUND, STATUS, agent_prompt, base_url_of, project_files
from helpers.github_html import github_html
from helpers.servers.git_http import Author, git, make_bare
from helpers.servers.model_server import ModelServer, agent_model
from helpers.servers.world import REPO_ROOT


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(responder=agent_model, spec_check=True) as running:
        yield running


def gate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(PYTHONPATH=str(REPO_ROOT), GATE_CACHE_DIR=str(cwd.parent / "cache"), AGENT_KEY=KEY)
    return subprocess.run(
        [sys.executable, "-m", "gate", *args], cwd=cwd, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip


def clone_of(tmp_path: Path, files: dict[str, str]) -> Path:
    """A developer's clone whose main holds the agent project, on a PR branch."""
    origin = make_bare(tmp_path / "origin.git")
    author = Author(tmp_path / "seed", origin)
    git(author.path, "checkout", "-q", "-B", "main")
    author.commit("the support agent", files)
    author.push("HEAD:main")
    git(tmp_path, "clone", "-q", str(origin), "dev")
    clone = tmp_path / "dev"
    git(clone, "checkout", "-q", "-b", "pr")
    return clone


def pr(clone: Path, prompt: str) -> subprocess.CompletedProcess[str]:
    (clone / "prompts" / "agent.md").write_text(prompt)
    return gate("check", cwd=clone)


# (what the PR does to the system prompt, the checks of refund-01 that fail on head)
REGRESSIONS = {
    "skips the lookup": (
        agent_prompt(lookup=""),
        {"trajectory:strict"},
    ),
    "calls a forbidden tool": (
        agent_prompt(refund='PLAN 2: delete_account {"order_id": "{{ order }}"} && issue_refund {"order_id": "{{ order }}"}\n'),
        {"trajectory:strict", "forbidden_tool:delete_account", "turn2:include:refund"},
    ),
    "takes twice the steps": (
        agent_prompt(lookup=PLAN["lookup"] * 2, refund=PLAN["refund"] * 2),
        {"trajectory:strict", "max_tool_calls:3"},
    ),
    "breaks the second turn": (
        agent_prompt(say2="SAY 2: Done.\n"),
        {"turn2:include:refund"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
@pytest.mark.parametrize("scenario", list(REGRESSIONS))
def test_a_regressing_agent_pr_fails_and_the_comment_shows_both_paths(
    tmp_path: Path, server: ModelServer, kind: str, scenario: str
) -> None:
    clone = clone_of(tmp_path, project_files(kind, base_url_of(server, kind)))
    prompt, failing = REGRESSIONS[scenario]
    done = pr(clone, prompt)
    assert done.returncode == 1, done.stderr
    assert server.violations == []  # every request was one the vendor's API takes
    head = report_line(clone, "head", "refund-01")
    assert head["status"] == "fail"
    assert {c["name"] for c in head["checks"] if not c["passed"]} == failing
    base = report_line(clone, "base", "refund-01")
    assert base["status"] == "pass"
    assert [s["name"] for s in base["trajectory"]] == ["lookup_order", "issue_refund"]
    html = github_html(done.stdout)
    explained = html[html.index("Regressions") :]
    if scenario == "breaks the second turn":  # the same path: the turns show what broke
        assert "<td>Yes, please go ahead.</td>" in explained
        assert "<code>include:refund</code>" in explained
        return
    assert "The paths part at <strong>step" in explained
    assert "<th>Base</th>" in explained and "<th>Head</th>" in explained
    assert "<code>lookup_order</code>" in explained and "➡️" in explained
    assert "{&quot;order_id&quot;: &quot;A17&quot;}" in explained  # the arguments, escaped
    assert "{&quot;ok&quot;: true}" in explained  # and a result


def report_line(clone: Path, side: str, case: str) -> dict:
    import json

    path = clone / ".eval-gate" / "reports" / "support" / f"{side}.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines()[1:]]
    return next(x for x in lines if x["id"] == case)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_a_no_op_pr_passes_and_a_rerun_costs_no_call(
    tmp_path: Path, server: ModelServer, kind: str
) -> None:
    clone = clone_of(tmp_path, project_files(kind, base_url_of(server, kind)))
    wording = agent_prompt().replace("online shop", "online shop. Be kind")
    done = pr(clone, wording)
    assert done.returncode == 0, done.stderr
    assert server.violations == []
    calls = server.requests
    assert calls == 2 * (4 + 2)  # each side: refund-01 2 steps x 2 turns, status-02 2 steps
    again = gate("check", cwd=clone)
    assert again.returncode == 0, again.stderr
    assert server.requests == calls  # every step of every loop came from the cache
    head = report_line(clone, "head", "refund-01")
    assert head["cached"] and [s["turn"] for s in head["trajectory"]] == [1, 2]


def test_a_call_the_case_has_no_result_for_is_an_error_naming_it(
    tmp_path: Path, server: ModelServer
) -> None:
    clone = clone_of(tmp_path, project_files("openai", base_url_of(server, "openai")))
    done = pr(clone, agent_prompt(lookup='PLAN 1: lookup_user {"order_id": "{{ order }}"}\n'))
    assert done.returncode != 0, done.stderr
    head = report_line(clone, "head", "refund-01")
    assert head["status"] == "error"
    assert head["error"] == (
        'system error: turn 1: the model called lookup_user({"order_id": "A17"}), and the '
        "case's `tools` has no result for lookup_user (it has: issue_refund, lookup_order)"
    )
    assert "lookup\\_user" in done.stdout  # the comment names the call too


def test_a_when_that_matches_no_call_is_an_error_too(tmp_path: Path, server: ModelServer) -> None:
    clone = clone_of(tmp_path, project_files("anthropic", base_url_of(server, "anthropic")))
    done = pr(clone, agent_prompt(refund='PLAN 2: issue_refund {"order_id": "Z9"}\n'))
    assert done.returncode != 0
    head = report_line(clone, "head", "refund-01")
    assert "no `when` of the case's `tools.issue_refund` matches" in head["error"]
    assert 'issue_refund({"order_id": "Z9"})' in head["error"]


def test_the_cases_keys_are_checked_where_they_stand(tmp_path: Path, server: ModelServer) -> None:
    bad = {**STATUS, "tools": {"lookup_order": {"returns": 1, "when": []}}}
    files = project_files("openai", base_url_of(server, "openai"), [REFUND, bad])
    clone = clone_of(tmp_path, files)
    done = gate("validate", cwd=clone)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "cases/support.jsonl:2" in done.stderr and "tools.lookup_order" in done.stderr


def test_repeats_auto_treats_an_agent_case_like_any_other(
    tmp_path: Path, server: ModelServer
) -> None:
    files = project_files("openai", base_url_of(server, "openai"))
    files["gate.yml"] = files["gate.yml"].replace("threshold: 3\n", "threshold: 3\nrepeats: auto\n")
    clone = clone_of(tmp_path, files)
    done = pr(clone, REGRESSIONS["skips the lookup"][0])
    assert done.returncode == 1, done.stderr
    head = report_line(clone, "head", "refund-01")
    assert head["repeats"] >= 1 and head["status"] == "fail"
    assert all(a["trajectory"][0]["name"] == "issue_refund" for a in head["attempts"]) or (
        head["trajectory"][0]["name"] == "issue_refund"
    )
    assert "The paths part at <strong>step 1</strong>" in github_html(done.stdout)
    assert server.violations == []


def test_a_pr_that_edits_an_agent_case_is_measured_by_the_bases(
    tmp_path: Path, server: ModelServer
) -> None:
    """The case's tools, turns and user are the instrument: a PR that changes a tool's result
    is told so, both sides get the base's result, and the head's own instrument leaves the
    case out (its conversation would have gone otherwise)."""
    import json

    clone = clone_of(tmp_path, project_files("openai", base_url_of(server, "openai")))
    tools = {**REFUND["tools"], "lookup_order": {"returns": {"status": "lost"}}}
    edited = {**REFUND, "tools": tools, "expect": {**REFUND["expect"], "max_tool_calls": 9}}
    (clone / "cases" / "support.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in (edited, STATUS))
    )
    done = gate("check", cwd=clone)
    assert done.returncode == 0, done.stderr
    head = report_line(clone, "head", "refund-01")
    assert head["trajectory"][0]["result"] == {"status": "delivered", "days_ago": 12}
    said = " ".join(github_html(done.stdout).split())
    assert "this PR changes the tools, turns or simulated user of 1 case (refund-01)" in said
    assert "this PR changes the expectations of 1 case (refund-01)" in said
    assert "1 case (refund-01) left out" in said
    assert server.violations == []


def test_a_pr_that_changes_the_simulated_user_is_told_so(tmp_path: Path) -> None:
    """`simulated_user` belongs to the instrument beside `judge`: a PR's change is a note."""
    URL = "http://127.0.0.1:9/v1"
    from gate.compare.instrument_findings import SimulatedUserChanged
    from gate.flow.instrument_diff import SuiteDefinition, config_changes
    from gate.inputs.config import load_config

    sides = []
    for name, model in (("base", "user-1"), ("head", "user-2")):
        root = tmp_path / name
        (root / "cases").mkdir(parents=True)
        (root / "cases" / "support.jsonl").write_text("")
        files = project_files("openai", URL)
        user = f"simulated_user: {{kind: openai, model: {model}, base_url: {URL}}}\n"
        (root / "gate.yml").write_text(user + files["gate.yml"])
        loaded = load_config(root / "gate.yml")
        sides.append(SuiteDefinition(loaded, loaded.config.suites[0], [], root))
    found = [f for f in config_changes(*sides) if isinstance(f, SimulatedUserChanged)]
    assert [(c.key, c.base, c.head) for c in found[0].changes] == [("model", "user-1", "user-2")]
    from gate.render.reasons import sentence

    assert sentence(found[0]) == (
        "this PR changes the simulated user (model: user-1 → user-2): the base's plays the user "
        "on both sides"
    )
