"""`gate action` end to end: a real origin over HTTP, a shallow workspace, real webhook
payloads, the GitHub API stand-in, and the action as a real subprocess (as the image starts
it); the tests of how it talks to the API (the comment's pages, edits, retries, a read-only
token, skips) run it in-process (`World.run_here`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.github_html import github_html
from helpers.servers.git_http import git
from helpers.servers.github_api import Fault, GitHubServer
from helpers.servers.world import (
    REPOSITORY,
    TOKEN,
    WORDS,
    World,
    project_files,
)

MARKER = "<!-- eval-gate -->"
REGRESSION = {
    "prompts/support.md": "You are the support bot.\n"
    + "".join(f"say: {w}\n" for w in WORDS if w != "CAC")
}


def regression_pr(world: World) -> None:
    world.base()
    world.pr({**REGRESSION, "app/bot.py": project_files("head", WORDS)["app/bot.py"]})


def test_regression_fails_with_one_comment_outputs_summary_and_annotations(
    world: World,
) -> None:
    regression_pr(world)
    workspace = world.checkout()
    assert git(workspace, "rev-parse", "--is-shallow-repository") == "true"
    run = world.run(world.environ(world.event()))
    assert run.code == 1, run.log
    comments = world.comments()
    assert len(comments) == 1
    body = comments[0].body
    assert body.startswith(MARKER) and "faq\\-001" in body
    assert comments[0].user.login == "github-actions[bot]"
    assert run.outputs["verdict"] == "fail"
    assert json.loads(run.outputs["regressions"]) == ["faq-001"]
    assert float(run.outputs["base-pass-rate"]) == 100.0
    assert float(run.outputs["head-pass-rate"]) == pytest.approx(500 / 6, abs=0.01)
    assert float(run.outputs["delta"]) == pytest.approx(-100 / 6, abs=0.01)
    assert run.outputs["report"] == "eval-gate-reports"
    assert "faq\\-001" in run.summary
    assert (
        "::error file=cases/support.jsonl,line=1,title=Eval Gate (support)::faq-001 regressed"
        in run.stdout
    )
    # each side ran its own checkout's code, and the code under test saw no credential
    reports = workspace / "eval-gate-reports" / "support"
    base_report = (reports / "base.jsonl").read_text()
    head_report = (reports / "head.jsonl").read_text()
    assert "[base] leak=no" in base_report and "[head]" not in base_report
    assert "[head] leak=no" in head_report and "[base]" not in head_report
    # the base fetch went through the token-protected server, and the token was never shown
    assert any(r.authorized and r.method == "POST" for r in world.git_server.log)
    log = run.log.replace(f"::add-mask::{TOKEN}\n", "", 1)  # consumed by the runner
    everything = log + run.summary + json.dumps(run.outputs) + base_report + head_report + body
    assert TOKEN not in everything
    # the comment and the PR it belongs to, for a workflow_run job to post (docs/action.md)
    assert (reports.parent / "comment.md").read_text() == body
    pull = json.loads((reports.parent / "pull-request.json").read_text())
    assert pull == {"number": world.number, "head_sha": world.head_sha}
    # the base worktree is gone
    assert git(workspace, "worktree", "list").count("\n") == 0


def test_rerun_edits_the_same_comment(world: World, api: GitHubServer) -> None:
    regression_pr(world)
    world.checkout()
    first = world.run_here(world.environ(world.event()))
    assert first.code == 1, first.log
    (comment,) = world.comments()
    before = comment.body
    # a new push fixes the regression but breaks another rule
    world.pr({"prompts/support.md": "".join(f"say: {w}\n" for w in WORDS if w != "fees")})
    world.checkout()
    second = world.run_here(world.environ(world.event()))
    assert second.code == 1, second.log
    after = world.comments()
    assert [c.id for c in after] == [comment.id]
    assert after[0].body != before and "faq\\-002" in after[0].body
    assert len(api.state.requests("PATCH")) == 1 and len(api.state.requests("POST")) == 1


def test_comment_found_among_150_others_across_pages(world: World, api: GitHubServer) -> None:
    someone = api.state.add_token("ghp_someone", "someone")
    for n in range(150):
        api.state.add_comment(REPOSITORY, world.number, f"comment {n}", someone)
    # someone pasted our marker: it must not be taken for ours
    api.state.add_comment(REPOSITORY, world.number, MARKER + "\nnot the bot", someone)
    regression_pr(world)
    world.checkout()
    assert world.run_here(world.environ(world.event())).code == 1
    ours = [c for c in world.comments() if c.user.login == "github-actions[bot]"]
    assert len(ours) == 1
    world.checkout()
    rerun = world.run_here(world.environ(world.event()))
    assert rerun.code == 1, rerun.log
    assert [c for c in world.comments() if c.user.login == "github-actions[bot]"] == ours
    pages = [r.query.get("page", ["1"])[0] for r in api.state.requests("GET", "/comments$")]
    assert pages == ["1", "2", "1", "2"]
    assert all(r.query["per_page"] == ["100"] for r in api.state.requests("GET", "/comments$"))
    assert world.comments()[150].body.endswith("not the bot")


def test_read_only_token_falls_back_to_the_job_summary(world: World, api: GitHubServer) -> None:
    api.state.tokens[TOKEN].read_only = True  # a fork's pull_request token
    regression_pr(world)
    world.checkout()
    run = world.run_here(world.environ(world.event()))
    assert run.code == 1, run.log  # the verdict is unchanged
    assert world.comments() == []
    warnings = [line for line in run.stdout.splitlines() if line.startswith("::warning")]
    assert len(warnings) == 1 and "read-only" in warnings[0] and "403" in warnings[0]
    assert run.summary.startswith("> ⚠️ PR comment not posted: cannot create")
    assert "faq\\-001" in run.summary and run.outputs["verdict"] == "fail"


def test_server_errors_are_retried_without_duplicating(world: World, api: GitHubServer) -> None:
    api.state.inject(Fault("GET", "/comments$", 502))
    api.state.inject(Fault("POST", "/comments$", 502, apply=True))  # written, then 502
    regression_pr(world)
    world.checkout()
    run = world.run_here(world.environ(world.event()))
    assert run.code == 1, run.log
    assert len(world.comments()) == 1
    statuses = [(r.method, r.status) for r in api.state.requests(path="/comments")]
    assert statuses[:2] == [("GET", 502), ("GET", 200)]
    assert ("POST", 502) in statuses and "::warning" not in run.stdout


def test_no_watched_change_is_skipped(world: World) -> None:
    world.base()
    world.pr({"README.md": "# app\n\nmore words\n"})
    world.checkout()
    run = world.run_here(world.environ(world.event()))
    assert run.code == 0, run.log
    assert run.outputs["verdict"] == "skipped" and run.outputs["regressions"] == "[]"
    assert world.comments() == []  # on-change: nothing to say
    assert not (world.workspace / "eval-gate-reports").exists()  # type: ignore[operator]
    world.checkout()
    always = world.run_here(world.environ(world.event(), comment="always"))
    assert always.code == 0 and len(world.comments()) == 1
    assert world.comments()[0].body.startswith(MARKER)


def test_workspace_owned_by_another_user(world: World) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to chown the workspace")
    regression_pr(world)
    workspace = world.checkout()
    subprocess.run(["chown", "-R", "1000:1000", str(workspace)], check=True)
    env = world.environ(world.event())
    plain = subprocess.run(
        ["git", "-C", str(workspace), "status"], env=env, capture_output=True, text=True
    )
    assert "dubious ownership" in plain.stderr  # the situation is real
    run = world.run(env)
    assert run.code == 1, run.log
    assert len(world.comments()) == 1
    assert (
        not (Path.home() / ".gitconfig").exists()
        or "safe" not in (Path.home() / ".gitconfig").read_text()
    )


def test_bad_config_exits_2_with_one_line(world: World) -> None:
    world.base()
    world.pr(
        {"gate.yml": "suites:\n  - name: support\n    cases: cases/support.jsonl\n    sytem: {}\n"}
    )
    world.checkout()
    run = world.run(world.environ(world.event()))
    assert run.code == 2
    (line,) = run.log.strip().splitlines()
    assert line.startswith("::error file=gate.yml,line=4,")
    assert "gate.yml:4" in line and "`suites[0].sytem`" in line and "did you mean `system`" in line


def test_missing_base_without_token_names_fetch_depth(world: World) -> None:
    regression_pr(world)
    world.checkout()
    env = world.environ(world.event())
    env["INPUT_GITHUB-TOKEN"] = ""
    run = world.run(env)
    assert run.code == 3
    assert "fetch-depth: 0" in run.stdout and run.outputs["verdict"] == "error"
    assert TOKEN not in run.log


# --- a PR's own comment templates: they read no secret; the top is the gate's ---------------

PROVIDER_KEY = "sk-providerKeyInTheJobEnv0123456789"
GATE_YML = project_files("base", WORDS)["gate.yml"] or ""
TEMPLATED_REGRESSION = {
    **REGRESSION,
    "app/bot.py": project_files("head", WORDS)["app/bot.py"],
    "gate.yml": GATE_YML + "templates: tpl\n",
}

# Tries every way to the environment without failing, then claims a pass and prints a marker.
PROBING = """\
{% if cycler.__init__ is defined %}{{ cycler.__init__.__globals__.os.environ }}{% endif %}
{{- (lipsum | attr("__globals__")) | default("") -}}
{{- (joiner | attr("__init__")) | default("") -}}
{{- ("{0.__class__}".format(c) if false else "") -}}
✅ **Eval Gate: pass** (support) — pass rate 100.0% → 100.0% (±0.0 pts, threshold 3)

<!-- eval-gate:support -->
Everything is fine. {{ ctx.run_url }}
"""


def run_action(world: World) -> tuple[int, str, str, dict[str, str]]:
    world.checkout()
    env = world.environ(world.event())
    env["OPENAI_API_KEY"] = PROVIDER_KEY  # a provider key in the job's environment
    run = world.run(env)
    log = run.log.replace(f"::add-mask::{TOKEN}\n", "", 1)  # consumed by the runner
    return run.code, log, run.summary, run.outputs


def leaked(*texts: str) -> list[str]:
    """Any secret of the job, also as Markdown-escaped text (`ghs\\_…`)."""
    found = []
    for secret in (TOKEN, PROVIDER_KEY, "ghs_runnerRuntimeToken"):
        for form in (secret, secret.replace("_", "\\_"), secret.replace("-", "\\-")):
            found += [form for text in texts if form in text]
    return found


def test_a_pr_template_that_reads_the_environment_fails_on_its_own_file(world: World) -> None:
    world.base()
    world.pr({
        **TEMPLATED_REGRESSION,
        "tpl/comment.md.j2": "Hello\n"
        '{{ cycler.__init__.__globals__.os.environ.get("INPUT_GITHUB-TOKEN") }}\n',
    })  # fmt: skip
    code, log, summary, outputs = run_action(world)
    assert code == 2, log
    assert "::error file=tpl/comment.md.j2,line=2,title=Eval Gate%3A bad input::" in log
    assert "blocked by the template sandbox" in log and "Traceback" not in log
    posted = [c.body for c in world.comments()]
    assert posted == [] and leaked(log, summary, json.dumps(outputs), *posted) == []


def test_a_pr_template_that_probes_and_claims_pass_gets_the_real_verdict(world: World) -> None:
    """A template merged before (the base's templates render a PR's comment) that probes and
    claims a pass: the PR that regresses gets the real verdict line and no secret."""
    templated = {**TEMPLATED_REGRESSION, "tpl/comment.md.j2": PROBING, "tpl/summary.md.j2": PROBING}
    world.base({**project_files("base", WORDS), "gate.yml": templated["gate.yml"],
                "tpl/comment.md.j2": PROBING, "tpl/summary.md.j2": PROBING})  # fmt: skip
    world.pr({k: v for k, v in templated.items() if not k.startswith(("tpl/", "gate.yml"))})
    code, log, summary, outputs = run_action(world)
    assert code == 1, log
    (comment,) = world.comments()
    body = comment.body
    first, verdict = body.split("\n")[:2]
    assert first == MARKER and body.count("<!-- eval-gate") == 1
    assert verdict.startswith("❌ **Eval Gate: fail** (support) — pass rate 100.0% → 83.3%")
    assert "Everything is fine." in body and "not the verdict" in body
    for page in (body, summary):
        html = github_html(page)
        assert html.count("<strong>") == 1 and "<strong>Eval Gate: fail</strong>" in html
    assert outputs["verdict"] == "fail"
    workspace = world.workspace
    assert workspace is not None
    reports = [p.read_text() for p in (workspace / "eval-gate-reports").rglob("*") if p.is_file()]
    assert leaked(log, summary, json.dumps(outputs), body, *reports) == []
    assert "environ(" not in body + summary and "__globals__" not in body + summary


def test_a_pr_template_that_links_to_the_environment_is_refused_before_any_run(
    world: World,
) -> None:
    world.base()
    author = world.author.path
    git(author, "checkout", "-q", "-B", "feature", world.base_sha)
    (author / "tpl").mkdir()
    os.symlink("/proc/self/environ", author / "tpl" / "comment.md.j2")
    world.head_sha = world.author.commit("template", TEMPLATED_REGRESSION)
    world.author.push("feature")
    world.merge_sha = world.author.merge_ref(
        world.base_sha, world.head_sha, f"refs/pull/{world.number}/merge"
    )
    code, log, summary, outputs = run_action(world)
    assert code == 2, log
    assert "::error file=tpl/comment.md.j2,title=Eval Gate%3A bad input::" in log
    assert "outside the repository" in log and "[base]" not in log and "[head]" not in log
    assert world.comments() == [] and leaked(log, summary, json.dumps(outputs)) == []
