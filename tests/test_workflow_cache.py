"""The response cache in the workflow files: every job that calls models restores it where the
action keeps it, with a key that finds what main's pushes saved; only pushes to main save
what every PR trusts; a workflow in the default branch's scope for PR code never saves; and
the runner simulation the end-to-end tests rely on follows actions/cache's matching rule."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.actions_cache import CacheService, Entry, version
from helpers.actions_expressions import Status, condition, evaluate, interpolate
from helpers.cli import run_gate

from gate.github.response_cache import CACHE_DIR

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yml"))
WORKFLOWS = [*EXAMPLES, *sorted((ROOT / ".github/workflows").glob("*.yml"))]
MAIN_SHA, PR_SHA, BASE_SHA = "a" * 40, "b" * 40, "c" * 40
RESTORE = ("actions/cache/restore", "actions/cache")
SAVING = ("actions/cache/save", "actions/cache")


def action(step: dict[str, Any]) -> str:
    return str(step.get("uses", "")).split("@", 1)[0]


def contexts(event: str, **github: Any) -> dict[str, Any]:
    payload = {"pull_request": {"base": {"sha": BASE_SHA}}} if event == "pull_request" else {}
    return {
        "github": {"sha": PR_SHA, "event_name": event, "event": payload, **github},
        "runner": {"os": "Linux"},
        "matrix": {"shard": 2},
        "steps": {"cache": {"outputs": {"cache-hit": "false"}}},
        "inputs": {},
    }


def gate_jobs(workflow: Path) -> list[tuple[str, list[dict[str, Any]]]]:
    """Jobs that run the gate and call models (all but `mode: finish`)."""
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    found = []
    for name, job in jobs.items():
        gate = [s for s in job["steps"] if action(s) == "eval-gate/eval-gate"]
        if gate and (gate[0].get("with") or {}).get("mode") != "finish":
            found.append((name, job["steps"]))
    return found


def mains_key(sha: str) -> str:
    steps = dict(gate_jobs(ROOT / "examples/push-main.yml"))["gate"]
    (save,) = [s for s in steps if action(s) in SAVING]
    return interpolate(save["with"]["key"], contexts("push", sha=sha))


@pytest.mark.parametrize("workflow", EXAMPLES, ids=lambda p: p.name)
def test_every_job_that_calls_models_keeps_the_cache(workflow: Path) -> None:
    event = "push" if workflow.name == "push-main.yml" else "pull_request"
    ctx = contexts(event)
    for name, steps in gate_jobs(workflow):
        uses = [action(s) for s in steps]
        gate = uses.index("eval-gate/eval-gate")
        restores = [s for s in steps[:gate] if action(s) in RESTORE]
        saves = [s for s in steps[gate:] if action(s) in SAVING]
        assert restores and saves, f"{workflow.name}:{name} keeps no cache"
        for step in restores + saves:
            assert step["with"]["path"] == CACHE_DIR, f"{workflow.name}:{name}"
        # the base's answers: an exact key for the base commit's push, else main's newest
        found = []
        for step in restores:
            keys = [step["with"]["key"], *str(step["with"].get("restore-keys", "")).split("\n")]
            found += [k for k in (interpolate(k, ctx) for k in keys if k) if k]
        base = BASE_SHA if event == "pull_request" else PR_SHA
        assert mains_key(base) in found, f"{workflow.name}:{name}: {found}"
        assert any(mains_key(MAIN_SHA).startswith(key) for key in found if key != mains_key(base))
        # saved after the run also when the gate failed (a rerun then pays for what changed)
        (save,) = saves
        assert condition(save.get("if"), ctx, Status(failed=True))
        hit = {**ctx, "steps": {"cache": {"outputs": {"cache-hit": "true"}}}}
        assert not condition(save.get("if"), hit, Status())  # an exact hit saves nothing new


def test_only_a_push_to_main_saves_what_every_pr_restores() -> None:
    steps = dict(gate_jobs(ROOT / "examples/push-main.yml"))["gate"]
    (save,) = [s for s in steps if action(s) in SAVING]
    assert condition(save.get("if"), contexts("push"), Status())
    assert not condition(save.get("if"), contexts("workflow_dispatch"), Status())
    main_family = mains_key("")
    for workflow in EXAMPLES:
        if workflow.name == "push-main.yml":
            continue
        for name, steps in gate_jobs(workflow):
            for step in (s for s in steps if action(s) in SAVING):
                key = interpolate(step["with"]["key"], contexts("pull_request"))
                assert not key.startswith(main_family), f"{workflow.name}:{name} saves {key}"


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_workflows_in_the_default_branchs_scope_never_save(workflow: Path) -> None:
    """pull_request_target and workflow_run run with the default branch's cache scope: an
    entry saved there would be every PR's base."""
    spec = yaml.safe_load(workflow.read_text())
    triggers = set(spec[True]) if isinstance(spec[True], (dict, list)) else {spec[True]}
    if not triggers & {"pull_request_target", "workflow_run"}:
        return
    for job in spec["jobs"].values():
        assert not [s for s in job["steps"] if action(s) in SAVING], workflow.name


def test_gate_init_writes_the_workflow_that_keeps_the_cache(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "prompts").mkdir(parents=True)
    (repo / "prompts/ask.j2").write_text("Answer: {{ question }}\n")
    (repo / "config").mkdir()
    (repo / "config/model.yaml").write_text("model: gpt-4o-mini\n")
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    done = run_gate("init", cwd=repo)
    assert done.code == 0, done.err
    written = repo / ".github/workflows/eval-gate.yml"
    steps = yaml.safe_load(written.read_text())["jobs"]["gate"]["steps"]
    uses = [action(s) for s in steps]
    assert uses.count("actions/cache/restore") == 2 and "actions/cache/save" in uses
    assert written.read_text() == (ROOT / "examples/pr-gate.yml").read_text()


# --- the runner simulation's own rules --------------------------------------------------------


def entry(service: CacheService, key: str, scope: str, paths: list[str] | None = None) -> None:
    service.entries.append(
        Entry(key, version(paths or [CACHE_DIR]), scope, Path("x"), len(service.entries), 0)
    )


def test_the_simulated_cache_matches_like_actions_cache(tmp_path: Path) -> None:
    service = CacheService(tmp_path / "service")
    pr, main = "refs/pull/7/merge", "refs/heads/main"
    entry(service, "k-main-1", main)
    entry(service, "k-main-2", main)
    entry(service, "k-pr-1", pr)
    entry(service, "k-main-3", main, paths=["elsewhere"])  # another version: never found
    entry(service, "k-pr-1", "refs/pull/8/merge")  # another PR's: never found

    def find(key: str, *restore: str, scopes: tuple[str, ...] = (pr, main)) -> str | None:
        found = service.find([CACHE_DIR], key, restore, scopes)
        return f"{found.key}@{found.scope}" if found else None

    assert find("k-main-1") == f"k-main-1@{main}"  # exact, in the default branch's scope
    # the run's own scope is searched first, its restore keys too, then the default branch's
    assert find("k-main-1", "k-") == f"k-pr-1@{pr}"
    assert find("k-pr-9", "k-main-", "k-") == f"k-pr-1@{pr}"  # own scope first
    assert find("k-main-9", "k-main-", scopes=(main,)) == f"k-main-2@{main}"  # newest
    assert find("k-main") == f"k-main-2@{main}"  # the key itself is a prefix too
    assert find("k-pr-1", scopes=("refs/pull/9/merge", main)) is None
    assert find("nothing", "k-main-3") is None


def test_the_simulated_expressions() -> None:
    ctx = contexts("pull_request")
    assert evaluate("runner.os == 'linux'", ctx) is True  # strings compare ignoring case
    assert evaluate("github.event.merge_group.base_sha || github.sha", ctx) == PR_SHA
    assert interpolate("k-${{ matrix.shard }}-${{ github.nothing }}", ctx) == "k-2-"
    assert condition("github.event_name == 'push'", ctx, Status()) is False
    assert condition("always()", ctx, Status(failed=True)) is True
    assert condition(None, ctx, Status(failed=True)) is False
    with pytest.raises(ValueError, match="unknown context"):
        evaluate("vars.X", ctx)
