"""The response cache between workflow runs, as GitHub runs the example workflows: each job a
fresh checkout and an empty HOME, only what the workflows' actions/cache steps name carried
from job to job (tests/helpers/actions_runner.py), a real model server counting the calls.

After push-main.yml ran on main, a PR on that main commit pays for its head's changed requests
only and its base for nothing, with the verdict of an uncached run; a rerun pays nothing and a
new push only for the requests it changed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.actions_cache import CacheService
from helpers.actions_runner import (
    Job,
    Runner,
    Trigger,
    pull_request_trigger,
    push_trigger,
    runner_folder,
)
from helpers.servers.model_server import ModelServer
from helpers.servers.world import REPO_ROOT, WORDS, World, cases

from gate.github.response_cache import CACHE_DIR

EXAMPLES = REPO_ROOT / "examples"
KEY = "sk-e2e-cache-0123456789"
N = len(WORDS)  # cases of the suite, one per word
ABOUT = "Tell me about {{ topic }}."
# the PR: one case's request changes (and that case now fails: a regression)
NOTHING = '{% if topic == "CAC" %}Tell me nothing.{% else %}' + ABOUT + "{% endif %}"
# its next push: CAC as on main again, another case's request changes
BRIEFLY = (
    '{% if topic == "fees" %}Tell me briefly about {{ topic }}.{% else %}' + ABOUT + "{% endif %}"
)


@pytest.fixture
def jobs() -> Iterator[Path]:
    with runner_folder() as folder:
        yield folder


@pytest.fixture
def model(model_servers: Callable[..., ModelServer]) -> ModelServer:
    return model_servers(api_key=KEY)


def project(model: ModelServer, template: str) -> dict[str, str | None]:
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/ask.j2",
        "base_url": model.openai_base_url,
        "api_key_env": "OPENAI_API_KEY",
    }
    config = {
        "watch": ["prompts/**", "config/**"],
        "suites": [{"name": "support", "cases": "cases/support.jsonl", "system": system}],
    }
    rows = [json.loads(line) for line in cases(WORDS).splitlines()]
    for row, word in zip(rows, WORDS, strict=True):
        row["input"] = {"topic": word}
    return {
        "gate.yml": yaml.safe_dump(config),
        "cases/support.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
        "config/model.yaml": "model: m1\ntemperature: 0\n",
        "prompts/ask.j2": template,
    }


def main_history(world: World, model: ModelServer) -> str:
    """main: a first commit, then a push that rewords the prompt (so push-main.yml has a
    watched change to evaluate: base and head both call the model)."""
    world.base(project(model, "About {{ topic }}."))
    return world.base({"prompts/ask.j2": ABOUT})


def runner(world: World, jobs: Path, name: str = "cache") -> Runner:
    return Runner(
        jobs / name, world, CacheService(jobs / name / "service"), {"OPENAI_API_KEY": KEY}
    )


def side(job: Job, label: str) -> dict[str, Any]:
    path = job.workspace / "eval-gate-reports" / "support" / f"{label}.summary.json"
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def cost_rows(job: Job) -> dict[str, list[str]]:
    body = (job.workspace / "eval-gate-reports" / "comment.md").read_text()
    rows = [line.strip("|").split("|") for line in body.splitlines() if line.startswith("| ")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows}


def pr_job(run: Runner, world: World, workflow: str = "pr-gate.yml") -> Job:
    return run.run(EXAMPLES / workflow, "gate", pull_request_trigger(world))


def push_job(run: Runner, world: World, sha: str) -> Job:
    return run.run(EXAMPLES / "push-main.yml", "gate", push_trigger(world, sha))


def main_pushed_then_pr(world: World, model: ModelServer, jobs: Path) -> tuple[str, Runner]:
    """push-main.yml ran on main's commit (and saved main's cache); a PR on top of it."""
    main = main_history(world, model)
    run = runner(world, jobs)
    assert push_job(run, world, main).saved
    world.pr({"prompts/ask.j2": NOTHING})
    return main, run


def verdict(job: Job) -> dict[str, str]:
    assert job.gate is not None
    return {k: v for k, v in job.gate.outputs.items()}


def succeeded(job: Job) -> bool:
    return all(step.outcome == "success" for step in job.steps)


def test_after_mains_push_a_pr_pays_for_its_head_only(
    world: World, model: ModelServer, jobs: Path
) -> None:
    workflow = "pr-gate.yml"
    main = main_history(world, model)
    run = runner(world, jobs)
    pushed = push_job(run, world, main)
    assert pushed.gate is not None and succeeded(pushed), (pushed.gate.log, pushed.steps)
    assert model.requests == 2 * N, pushed.gate.log  # the parent's answers and main's, both new
    assert len(pushed.saved) == 1, (run.cache.log, pushed.steps)
    (entry,) = pushed.saved
    assert entry.scope == "refs/heads/main" and entry.key == f"eval-gate-Linux-main-{main}"
    assert not list(pushed.home.rglob("*")), "the container's HOME holds no cache"
    assert (pushed.workspace / CACHE_DIR / ".gitignore").is_file()

    world.pr({"prompts/ask.j2": NOTHING})
    model.reset_counts()
    cached = pr_job(run, world, workflow)
    assert cached.gate is not None and cached.gate.code == 1, cached.gate.log
    # the gate's step failed (a regression); the save and the upload still ran
    assert [s.outcome for s in cached.steps][-3:] == ["failure", "success", "success"]
    assert cached.restored == [None, f"eval-gate-Linux-main-{main}"]  # no PR entry yet
    # the head's one changed request is the only call; the base's come from main's cache
    assert model.requests == 1
    assert [m["content"] for m in model.log[0].body["messages"]][-1] == "Tell me nothing."
    assert side(cached, "base")["cache"] == {"hits": N, "misses": 0}
    assert side(cached, "head")["cache"] == {"hits": N - 1, "misses": 1}
    rows = cost_rows(cached)
    assert rows["Calls"][:2] == [str(N), str(N)]
    assert rows["From the cache"][:2] == [str(N), str(N - 1)]
    (saved,) = cached.saved
    assert saved.scope == f"refs/pull/{world.number}/merge"  # the PR's own scope, never main's

    # the same PR without any cache: every call made, the same verdict and numbers
    model.reset_counts()
    fresh = pr_job(runner(world, jobs, "empty"), world, workflow)
    assert fresh.gate is not None and fresh.gate.code == 1, fresh.gate.log
    # (the two sides share one cache within a run too: a request both make at once is paid
    # once or twice, depending on which side asks first)
    misses = sum(side(fresh, label)["cache"]["misses"] for label in ("base", "head"))
    assert N + 1 <= model.requests == misses <= 2 * N
    assert verdict(fresh) == verdict(cached)
    assert json.loads(verdict(cached)["regressions"]) == ["faq-001"]
    for label in ("base", "head"):
        assert side(fresh, label)["pass_rate"] == side(cached, label)["pass_rate"]


def test_a_rerun_pays_nothing_and_a_new_push_only_its_changed_requests(
    world: World, model: ModelServer, jobs: Path
) -> None:
    main, run = main_pushed_then_pr(world, model, jobs)
    first = pr_job(run, world)
    assert first.gate is not None and first.gate.code == 1, first.gate.log

    # "Re-run jobs": the same commit; its own entry is an exact hit, nothing is saved again
    model.reset_counts()
    rerun = pr_job(run, world)
    assert rerun.gate is not None and rerun.gate.code == 1
    assert model.requests == 0
    assert rerun.restored == [first.saved[0].key, f"eval-gate-Linux-main-{main}"]
    assert rerun.saved == []
    assert cost_rows(rerun)["From the cache"][:2] == [str(N), str(N)]

    # a new push fixes CAC and rewords another case: one call, for that case
    world.pr({"prompts/ask.j2": BRIEFLY})
    model.reset_counts()
    pushed = pr_job(run, world)
    assert pushed.gate is not None and pushed.gate.code == 0, pushed.gate.log
    assert model.requests == 1
    assert model.log[0].body["messages"][-1]["content"] == "Tell me briefly about fees."
    assert pushed.restored == [first.saved[0].key, f"eval-gate-Linux-main-{main}"]
    assert side(pushed, "base")["cache"]["misses"] == 0
    assert len(pushed.saved) == 1 and pushed.saved[0].key.endswith(world.merge_sha)


@pytest.mark.parametrize("workflow", ["fork-pr.yml", "merge-queue.yml"])
def test_the_other_pr_workflows_get_the_base_from_mains_cache(
    world: World, model: ModelServer, jobs: Path, workflow: str
) -> None:
    main, run = main_pushed_then_pr(world, model, jobs)
    model.reset_counts()
    job = pr_job(run, world, workflow)
    assert job.gate is not None and job.gate.outputs["verdict"] == "fail", job.gate.log
    assert job.restored == [None, f"eval-gate-Linux-main-{main}"]
    assert model.requests == 1 and side(job, "base")["cache"]["misses"] == 0
    assert [e.scope for e in job.saved] == [f"refs/pull/{world.number}/merge"]
    assert [s.outcome for s in job.steps][-2:] == ["success", "success"]  # save, upload


def test_the_merge_queue_gets_its_base_from_mains_cache(
    world: World, model: ModelServer, jobs: Path
) -> None:
    main, run = main_pushed_then_pr(world, model, jobs)
    group = {"head_sha": world.merge_sha, "base_sha": main, "head_ref": "refs/heads/queue"}
    payload = json.loads(world.event("merge_group.checks_requested", merge_group=group).read_text())
    queue = f"refs/heads/gh-readonly-queue/main/pr-{world.number}-{world.head_sha}"
    model.reset_counts()
    job = run.run(
        EXAMPLES / "merge-queue.yml",
        "gate",
        Trigger("merge_group", payload, world.merge_sha, queue),
    )
    assert job.gate is not None and job.gate.outputs["verdict"] == "fail", job.gate.log
    assert job.restored == [None, f"eval-gate-Linux-main-{main}"]
    assert model.requests == 1 and side(job, "base")["cache"]["misses"] == 0
    assert [e.scope for e in job.saved] == [queue]


def test_sharded_jobs_get_the_base_from_mains_cache_and_save_one_entry_each(
    world: World, model: ModelServer, jobs: Path
) -> None:
    main, run = main_pushed_then_pr(world, model, jobs)
    trigger = pull_request_trigger(world)
    model.reset_counts()
    shards = [
        run.run(EXAMPLES / "sharded.yml", "shard", trigger, matrix={"shard": i})
        for i in (1, 2, 3, 4)
    ]
    for job in shards:
        assert job.gate is not None and succeeded(job), (job.gate.log, job.steps)
        assert job.restored == [None, f"eval-gate-Linux-main-{main}"]
    assert model.requests == 1  # the head's changed case, in whichever shard holds it
    keys = sorted(e.key for job in shards for e in job.saved)
    assert keys == [f"eval-gate-Linux-shard-{i}-of-4-{world.merge_sha}" for i in (1, 2, 3, 4)]
    final = run.run(EXAMPLES / "sharded.yml", "gate", trigger)
    assert final.gate is not None and final.gate.code == 1, final.gate.log
    assert json.loads(final.gate.outputs["regressions"]) == ["faq-001"]
    assert cost_rows(final)["From the cache"][:2] == [str(N), str(N - 1)]
    # a rerun of one shard job: its own entry, no call
    model.reset_counts()
    again = run.run(EXAMPLES / "sharded.yml", "shard", trigger, matrix={"shard": 2})
    assert again.restored[0] == f"eval-gate-Linux-shard-2-of-4-{world.merge_sha}"
    assert model.requests == 0 and again.saved == []
