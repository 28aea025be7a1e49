"""The action's sharded mode: matrix jobs (`mode: shard`) and the final job (`mode: finish`),
each `gate action` in its own shallow checkout, against the GitHub API stand-in: the image's
process in the test that the shards equal the unsharded run, in-process in the others. Artifacts are moved the way actions/upload-artifact and download-artifact lay them
out: the uploaded folder's content, downloaded into one folder (`merge-multiple: true`) or
one folder per artifact."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers.servers.github_api import GitHubServer
from helpers.servers.world import (
    REPOSITORY,
    TOKEN,
    WORDS,
    Run,
    World,
    project_files,
    prompt,
)

from gate.errors import InputError
from gate.flow.judging import failed_comparison
from gate.flow.sides import SideStatus
from gate.github.inputs import read_settings
from gate.render.reasons import words

N_CASES = 30
REPORTS = "eval-gate-reports"
DOWNLOADS = "eval-gate-shards"
Artifacts = dict[str, Path]


def many_cases(n: int = N_CASES) -> str:
    rows = [
        {
            "id": f"faq-{k:03d}",
            "task": "faq" if k % 2 else "billing",
            "input": {"question": f"tell me about {WORDS[k % len(WORDS)]}"},
            "expect": {"must_include": [WORDS[k % len(WORDS)]]},
        }
        for k in range(1, n + 1)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def base_project(**extra: str) -> dict[str, str | None]:
    return {**project_files("base", WORDS), "cases/support.jsonl": many_cases(), **extra}


def job(world: World, env: dict[str, str], *, real: bool) -> Run:
    """The action: as the image's process (`real`), or in-process (`World.run_here`)."""
    return world.run(env) if real else world.run_here(env)


def shard_job(world: World, index: int, total: int, *, real: bool = False) -> tuple[Run, Path]:
    """One matrix job: its own checkout, `mode: shard`; what it would upload."""
    workspace = world.checkout()
    env = world.environ(world.event(), mode="shard", shard=f"{index}/{total}")
    return job(world, env, real=real), workspace / REPORTS


def shard_jobs(world: World, total: int, *, real: bool = False) -> tuple[list[Run], Artifacts]:
    runs, artifacts = [], {}
    for index in range(1, total + 1):
        run, folder = shard_job(world, index, total, real=real)
        runs.append(run)
        if folder.is_dir():  # upload-artifact with `if-no-files-found: ignore`
            artifacts[f"eval-gate-shard-{index}"] = folder
    return runs, artifacts


def download(artifacts: Artifacts, dest: Path, *, merge_multiple: bool) -> None:
    """download-artifact@v4 with `pattern:`: every artifact's files into `dest`
    (`merge-multiple: true`) or into `dest/<artifact name>/`."""
    for name, folder in artifacts.items():
        shutil.copytree(folder, dest if merge_multiple else dest / name, dirs_exist_ok=True)


def finish_job(
    world: World, artifacts: Artifacts, *, merge_multiple: bool = True, real: bool = False
) -> Run:
    workspace = world.checkout()
    download(artifacts, workspace / DOWNLOADS, merge_multiple=merge_multiple)
    return job(world, world.environ(world.event(), mode="finish"), real=real)


def annotations(run: Run) -> list[str]:
    return [line for line in run.stdout.splitlines() if line.startswith("::error ")]


def without_timings(body: str) -> str:
    """The comment minus what differs between any two runs: latencies and start times."""
    varying = ("| Latency p50 |", "| Latency p95 |", "| Created |")
    return "\n".join(line for line in body.splitlines() if not line.startswith(varying))


HEADLINE = ("verdict", "regressions", "base-pass-rate", "head-pass-rate", "delta", "report")


def test_three_shards_and_the_finish_job_equal_the_unsharded_run(
    world: World, api: GitHubServer
) -> None:
    world.base(base_project())
    world.pr({"prompts/support.md": prompt(WORDS[1:])})  # drops CAC: 5 of 30 cases regress
    world.checkout()
    full = world.run(world.environ(world.event(), comment="never"))
    assert full.code == 1, full.log
    full_comment = (world.workspace / REPORTS / "comment.md").read_text()  # type: ignore[operator]
    assert len(json.loads(full.outputs["regressions"])) == 5

    runs, artifacts = shard_jobs(world, 3, real=True)  # every job the image's process
    for run in runs:
        assert run.code == 0, run.log
        assert run.outputs["verdict"] == "partial" and run.outputs["report"] == REPORTS
        assert run.outputs["regressions"] == "[]" and "mode: finish" in run.summary
        assert TOKEN not in run.log.replace(f"::add-mask::{TOKEN}\n", "", 1)
    # shard jobs post nothing and read no label (the unsharded run before them read them once)
    assert [r.path for r in api.state.log] == [f"/repos/{REPOSITORY}/issues/7/labels"]
    head_ids = [
        json.loads(line)["id"]
        for folder in artifacts.values()
        for line in next(folder.glob("support/head.shard-*.jsonl")).read_text().splitlines()[1:]
    ]
    assert sorted(head_ids) == [f"faq-{k:03d}" for k in range(1, N_CASES + 1)]
    assert len(artifacts) == 3 and all(
        len(list(f.rglob("*"))) == 6 for f in artifacts.values()
    )  # support/ + base and head reports and summaries + the record

    finish = finish_job(world, artifacts, merge_multiple=True, real=True)
    assert finish.code == 1, finish.log
    assert {k: finish.outputs[k] for k in HEADLINE} == {k: full.outputs[k] for k in HEADLINE}
    (comment,) = world.comments()
    assert without_timings(comment.body) == without_timings(full_comment)
    assert annotations(finish) == annotations(full) != []
    merged = world.workspace / REPORTS / "support"  # type: ignore[operator]
    assert json.loads(merged.joinpath("head.summary.json").read_text())["meta"]["shards"] == [
        "1/3",
        "2/3",
        "3/3",
    ]

    # one folder per artifact (no merge-multiple): the same shards make the very same comment
    again = finish_job(world, artifacts, merge_multiple=False, real=True)
    assert again.code == 1, again.log
    assert {k: again.outputs[k] for k in HEADLINE} == {k: full.outputs[k] for k in HEADLINE}
    assert [(c.id, c.body) for c in world.comments()] == [(comment.id, comment.body)]
    assert len(api.state.requests("POST")) == 1 and api.state.requests("PATCH") == []


def test_missing_duplicated_or_stale_shards_are_an_error_naming_them(world: World) -> None:
    world.base(base_project())
    world.pr({"prompts/support.md": prompt(WORDS[1:])})
    _, artifacts = shard_jobs(world, 3)

    lost = {k: v for k, v in artifacts.items() if k != "eval-gate-shard-2"}  # its job failed
    run = finish_job(world, lost)
    assert run.code == 3, run.log
    assert run.outputs["verdict"] == "error" and run.outputs["regressions"] == "[]"
    assert "[gate] support: error: missing shard(s): 2/3" in run.stdout
    (comment,) = world.comments()
    assert "2/3" in comment.body and "2/3" in run.summary
    assert not (world.workspace / REPORTS / "support" / "head.jsonl").exists()  # type: ignore[operator]

    twice = {**artifacts, "eval-gate-shard-1-rerun": artifacts["eval-gate-shard-1"]}
    run = finish_job(world, twice, merge_multiple=False)
    assert run.code == 3 and "duplicated shard(s): 1/3" in run.stdout, run.log

    # the reports of an earlier push of the PR are not this run's
    record = artifacts["eval-gate-shard-3"] / "support" / "shard-3-of-3.json"
    data = json.loads(record.read_text())
    record.write_text(json.dumps({**data, "head_sha": "0" * 40}))
    run = finish_job(world, artifacts)
    assert run.code == 3 and "shard reports of other commits" in run.stdout, run.log
    assert "3/3 (eval-gate-shards/support/shard-3-of-3.json)" in run.stdout

    run = finish_job(world, {})  # no shard job uploaded anything
    assert run.code == 3 and "no shard reports of suite `support` under `eval-gate-shards`" in (
        run.stdout
    )
    assert [c.id for c in world.comments()] == [comment.id]  # every error edited the one comment


TWO_SUITES = """
suites:
  - name: support
    watch: ["prompts/**"]
    cases: cases/support.jsonl
    system: {kind: python, target: "app.bot:answer"}
  - name: billing
    watch: ["billing/**"]
    cases: cases/billing.jsonl
    system: {kind: python, target: "app.bot:answer"}
"""


def test_a_suite_without_a_watched_change_is_skipped_in_shard_and_finish_modes(
    world: World,
) -> None:
    world.base(
        base_project(**{"gate.yml": TWO_SUITES.lstrip(), "cases/billing.jsonl": many_cases(4)})
    )
    world.pr({"prompts/support.md": prompt(WORDS[:-1])})  # support only
    runs, artifacts = shard_jobs(world, 2)
    for run in runs:
        assert run.code == 0 and run.outputs["verdict"] == "partial", run.log
        assert "[gate] billing: shard" in run.stdout and "skipped: no watched file" in run.stdout
        assert "billing" in run.summary and "skipped" in run.summary
    assert all(sorted(p.name for p in f.iterdir()) == ["support"] for f in artifacts.values())

    finish = finish_job(world, artifacts)
    assert finish.code == 1 and finish.outputs["verdict"] == "fail", finish.log
    assert "[gate] billing: skipped: no watched file changed" in finish.stdout
    assert json.loads(finish.outputs["regressions"]) == [
        f"support/faq-{k:03d}" for k in range(5, 30, 6)
    ]
    assert [c.body.splitlines()[0] for c in world.comments()] == ["<!-- eval-gate -->"]


def test_a_pr_touching_no_watched_file_is_skipped_by_every_job(world: World) -> None:
    world.base(base_project())
    world.pr({"README.md": "# app\n\nmore words\n"})
    runs, artifacts = shard_jobs(world, 2)
    assert all(r.code == 0 and r.outputs["verdict"] == "skipped" for r in runs), runs[0].log
    assert artifacts == {}  # nothing to upload, so nothing for the final job to miss
    finish = finish_job(world, artifacts)
    assert finish.code == 0 and finish.outputs["verdict"] == "skipped", finish.log
    assert world.comments() == []


def test_a_pr_that_brings_the_suite_in_is_judged_on_the_head_alone_when_sharded(
    world: World,
) -> None:
    world.base({"README.md": "# app\n"})
    world.pr(base_project())  # the base has no gate.yml: the suite is new, only the head runs
    runs, artifacts = shard_jobs(world, 2)
    assert all(r.code == 0 and r.outputs["verdict"] == "partial" for r in runs), runs[0].log
    records = [json.loads(next(f.rglob("shard-*.json")).read_text()) for f in artifacts.values()]
    assert [[(s["side"], s["returncode"]) for s in r["sides"]] for r in records] == [
        [("head", 0)],
        [("head", 0)],
    ]
    finish = finish_job(world, artifacts)
    assert finish.code == 0 and finish.outputs["verdict"] == "pass", finish.log
    (comment,) = world.comments()
    body = comment.body.replace("\\", "")
    assert "this suite is new" in body and "no baseline" in body
    assert "the base has no gate.yml, so the head's own instrument and policy judge this PR" in body
    assert f"{N_CASES} added" in body


# --- inputs and the shard records' verdicts ---------------------------------------------------

ENV = {
    "GITHUB_EVENT_NAME": "pull_request",
    "GITHUB_EVENT_PATH": "/github/workflow/event.json",
    "GITHUB_REPOSITORY": "octo/app",
    "GITHUB_WORKSPACE": "/github/workspace",
}


def test_mode_inputs() -> None:
    inputs = read_settings({**ENV, "INPUT_MODE": "shard", "INPUT_SHARD": " 2 / 4 "}).inputs
    assert inputs.mode == "shard" and inputs.shard is not None and str(inputs.shard) == "2/4"
    finish = read_settings({**ENV, "INPUT_MODE": "finish", "INPUT_SHARD-REPORTS": "dl"}).inputs
    assert finish.shard is None and finish.shard_reports == "dl"
    assert read_settings(ENV).inputs.mode == "full"


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"MODE": "matrix"}, "`mode` must be full, shard or finish, got 'matrix'"),
        ({"MODE": "shard"}, "`shard` is required with `mode: shard`"),
        ({"MODE": "shard", "SHARD": "5/4"}, "`shard` must look like I/N"),
        ({"MODE": "shard", "SHARD": "two"}, "`shard` must look like I/N"),
        ({"SHARD": "1/2"}, "`shard` applies only to `mode: shard` (the mode is full)"),
    ],
)
def test_bad_mode_inputs_name_the_input(inputs: dict[str, str], message: str) -> None:
    with pytest.raises(InputError) as info:
        read_settings({**ENV, **{f"INPUT_{k}": v for k, v in inputs.items()}})
    assert message in str(info.value) and info.value.exit_code == 2


def test_the_side_the_gate_stopped_is_not_blamed() -> None:
    """The head fails for good after its start; the gate then stops the base (its keeper exits
    143): the comparison names the head, and does not say the base could not run."""
    statuses = [
        SideStatus(side="base", returncode=143, error="stopped", stopped=True),
        SideStatus(side="head", returncode=3, error="sandbox unavailable"),
    ]
    failed = failed_comparison(statuses, "support")
    assert failed is not None and failed.verdict == "error"
    assert words(failed).reasons == ["the head side could not run (exit 3): sandbox unavailable"]


def test_a_side_that_failed_in_a_shard_is_named_with_its_shard() -> None:
    statuses = [
        SideStatus(side="base", returncode=0, shard="1/2"),
        SideStatus(side="head", returncode=0, shard="1/2"),
        SideStatus(side="base", returncode=-15, error="killed", shard="2/2"),
        SideStatus(side="head", returncode=3, error="sandbox unavailable", shard="2/2"),
    ]
    failed = failed_comparison(statuses, "support")
    assert failed is not None and failed.verdict == "error"
    assert words(failed).reasons == [
        "the head side of shard 2/2 could not run (exit 3): sandbox unavailable"
    ]
    # a base that cannot run is an error, never a pass; a head that cannot is the user's
    base_failed = failed_comparison([SideStatus(side="base", returncode=2, error="x")], "s")
    assert base_failed is not None and base_failed.verdict == "error"
    assert words(base_failed).reasons[0] == "the base side could not run (exit 2): x"
    # a run whose every case errored wrote its report: the comparison names the errors
    assert failed_comparison([SideStatus(side="base", returncode=3, complete=True)], "s") is None
    with pytest.raises(InputError, match="no module named app"):
        failed_comparison([SideStatus(side="head", returncode=2, error="no module named app")], "s")
