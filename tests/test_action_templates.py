"""A PR that brings its own comment templates, through `gate action` end to end (the origin over
HTTP, the GitHub API stand-in, the action as a subprocess): the templates read no secret, and
the verdict line and the marker are the gate's."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.github_html import github_html
from helpers.servers.git_http import git
from helpers.servers.github_api import GitHubServer
from helpers.servers.world import TOKEN, WORDS, World, project_files, serve_api, serve_world

MARKER = "<!-- eval-gate:support -->"
PROVIDER_KEY = "sk-providerKeyInTheJobEnv0123456789"
GATE_YML = project_files("base", WORDS)["gate.yml"] or ""
REGRESSION = {
    "prompts/support.md": "You are the support bot.\n"
    + "".join(f"say: {w}\n" for w in WORDS if w != "CAC"),
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


@pytest.fixture
def api() -> Iterator[GitHubServer]:
    with serve_api() as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: GitHubServer) -> Iterator[World]:
    with serve_world(tmp_path, api) as running:
        yield running


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
        **REGRESSION,
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
    world.base()
    world.pr({**REGRESSION, "tpl/comment.md.j2": PROBING, "tpl/summary.md.j2": PROBING})
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
    world.head_sha = world.author.commit("template", REGRESSION)
    world.author.push("feature")
    world.merge_sha = world.author.merge_ref(
        world.base_sha, world.head_sha, f"refs/pull/{world.number}/merge"
    )
    code, log, summary, outputs = run_action(world)
    assert code == 2, log
    assert "::error file=tpl/comment.md.j2,title=Eval Gate%3A bad input::" in log
    assert "outside the repository" in log and "[base]" not in log and "[head]" not in log
    assert world.comments() == [] and leaked(log, summary, json.dumps(outputs)) == []
