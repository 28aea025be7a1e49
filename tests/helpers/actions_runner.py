"""A GitHub Actions runner for the workflow files themselves: it reads a job of an
examples/*.yml file and runs its steps the way GitHub does, with real parts.

- Every job starts from nothing: a fresh workspace checked out like actions/checkout does (one
  commit deep, from the git server of `World`), a fresh empty `HOME` for the container, and
  nothing of an earlier job except what an actions/cache step restores (`CacheService`) or
  an artifact step downloads.
- `eval-gate/eval-gate@...` is `python -m gate action` with what the runner gives a container
  action: `INPUT_*` for every input of action.yml (the step's `with:` or the default), the
  `GITHUB_*` and `RUNNER_*` variables, `HOME`, the step's `env:`, and nothing else of ours.
- actions/cache (`restore`, `save`, and the combined action with its post step, which runs only
  when the job succeeded), upload-artifact and download-artifact run as the runner's user;
  the gate runs as the container's (root, when the tests do).
- `if:` conditions, `${{ }}` values and step outputs are evaluated (`actions_expressions`).

A step this runner does not know fails the test: nothing is skipped silently.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from helpers.actions_cache import DEFAULT_BRANCH, CacheService, Entry, as_runner, runner_user
from helpers.actions_expressions import Status, condition, interpolate
from helpers.servers.git_http import checkout_like_actions
from helpers.servers.world import (
    REPO_ROOT,
    REPOSITORY,
    TOKEN,
    Run,
    World,
    action_command,
    parse_outputs,
)

ACTION_YML = REPO_ROOT / "action.yml"


@dataclass(frozen=True)
class Trigger:
    """What started the run: the event and the commit and ref GitHub gives it."""

    name: str  # pull_request, push, ...
    payload: dict[str, Any]
    sha: str  # GITHUB_SHA: what actions/checkout checks out
    ref: str  # GITHUB_REF: also the cache scope of the run

    @property
    def scopes(self) -> list[str]:
        """Where the run's cache restores look: its own ref, then the base and default branch."""
        base = self.payload.get("pull_request", {}).get("base", {}).get("ref")
        return [self.ref, *([f"refs/heads/{base}"] if base else []), DEFAULT_BRANCH]


@dataclass
class Step:
    uses: str
    outcome: str = "skipped"
    outputs: dict[str, str] = field(default_factory=dict)
    detail: str = ""


@dataclass
class Job:
    workspace: Path
    home: Path
    steps: list[Step] = field(default_factory=list)
    gate: Run | None = None
    restored: list[str | None] = field(default_factory=list)
    saved: list[Entry] = field(default_factory=list)


@contextmanager
def runner_folder() -> Iterator[Path]:
    """Where jobs and cache entries live: a folder the runner's user can reach (pytest's own
    temporary folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="gate-runner-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@dataclass
class Runner:
    root: Path  # from runner_folder()
    world: World
    cache: CacheService
    secrets: dict[str, str]
    artifacts: dict[str, Path] = field(default_factory=dict)
    jobs: int = 0

    def run(
        self,
        workflow: Path,
        job_id: str,
        trigger: Trigger,
        *,
        matrix: Mapping[str, Any] | None = None,
        inputs: Mapping[str, Any] | None = None,
    ) -> Job:
        spec = yaml.safe_load(workflow.read_text())
        assert trigger.name in spec[True], f"{workflow.name} is not triggered by {trigger.name}"
        job_spec = spec["jobs"][job_id]
        self.jobs += 1
        folder = self.root / f"job{self.jobs}"
        job = Job(workspace=folder / "workspace", home=folder / "home")
        job.home.mkdir(parents=True)
        contexts = self._contexts(trigger, job, dict(matrix or {}), dict(inputs or {}))
        status = Status()
        if not condition(job_spec.get("if"), contexts, status):
            return job
        post: list[dict[str, Any]] = []
        for spec_step in job_spec["steps"]:
            step = Step(uses=spec_step.get("uses", "run"))
            job.steps.append(step)
            if condition(spec_step.get("if"), contexts, status):
                ok = self._step(spec_step, step, job, trigger, contexts, status, post)
                step.outcome = "success" if ok else "failure"
                status.failed |= not ok
            if "id" in spec_step:
                contexts["steps"][spec_step["id"]] = {
                    "outputs": step.outputs,
                    "outcome": step.outcome,
                }
        for spec_step in reversed(post):  # the combined actions/cache's post step: on success
            if not status.failed:
                with_ = self._with(spec_step, contexts, status)
                self._save(job, with_, trigger)
        return job

    # -- contexts --

    def _contexts(
        self, trigger: Trigger, job: Job, matrix: dict[str, Any], inputs: dict[str, Any]
    ) -> dict[str, Any]:
        return {
            "github": {
                "sha": trigger.sha,
                "ref": trigger.ref,
                "ref_name": trigger.ref.rsplit("/", 1)[-1],
                "event_name": trigger.name,
                "event": trigger.payload,
                "repository": REPOSITORY,
                "token": TOKEN,
                "workspace": str(job.workspace),
                "run_id": str(4200 + self.jobs),
                "run_attempt": "1",
            },
            "runner": {"os": "Linux", "arch": "X64", "temp": str(job.home.parent / "temp")},
            "matrix": matrix,
            "inputs": inputs,
            "secrets": self.secrets,
            "steps": {},
            "env": {},
        }

    def _with(
        self, spec_step: Mapping[str, Any], contexts: Mapping[str, Any], status: Status
    ) -> dict[str, str]:
        given = spec_step.get("with", {}) or {}
        return {k: interpolate(str(v), contexts, status) for k, v in given.items()}

    # -- the steps --

    def _step(
        self,
        spec_step: Mapping[str, Any],
        step: Step,
        job: Job,
        trigger: Trigger,
        contexts: dict[str, Any],
        status: Status,
        post: list[dict[str, Any]],
    ) -> bool:
        uses = step.uses
        with_ = self._with(spec_step, contexts, status)
        action = uses.split("@", 1)[0]
        if action == "actions/checkout":
            self._checkout(job, trigger)
            return True
        if action in ("actions/cache", "actions/cache/restore"):
            entry = self._restore(job, with_, trigger)
            step.outputs["cache-hit"] = "true" if entry and entry.key == with_["key"] else "false"
            if action == "actions/cache" and step.outputs["cache-hit"] != "true":
                post.append(dict(spec_step))
            return True
        if action == "actions/cache/save":
            self._save(job, with_, trigger)
            return True
        if action == "eval-gate/eval-gate":
            env = {
                k: interpolate(str(v), contexts, status)
                for k, v in (spec_step.get("env") or {}).items()
            }
            job.gate = self._gate(job, trigger, with_, env, contexts, status)
            step.outputs.update(job.gate.outputs)
            return job.gate.code == 0
        if action == "actions/upload-artifact":
            return self._upload(job, with_, step)
        if action == "actions/download-artifact":
            return self._download(job, with_, step)
        raise AssertionError(f"the runner simulation does not know the step {uses}")

    def _checkout(self, job: Job, trigger: Trigger) -> None:
        local = (
            f"refs/remotes/pull/{self.world.number}/merge"
            if trigger.ref.startswith("refs/pull/")
            else trigger.ref.replace("refs/heads/", "refs/remotes/origin/")
        )
        checkout_like_actions(job.workspace, self.world.url, trigger.sha, local, TOKEN)
        user = runner_user()
        if user:  # the runner's user owns the workspace; the container runs as root
            subprocess.run(
                ["chown", "-R", f"{user[0]}:{user[1]}", str(job.workspace.parent)], check=True
            )

    def _restore(self, job: Job, with_: Mapping[str, str], trigger: Trigger) -> Entry | None:
        paths = _lines(with_["path"])
        entry = self.cache.restore(
            job.workspace,
            paths,
            with_["key"],
            _lines(with_.get("restore-keys", "")),
            trigger.scopes,
        )
        job.restored.append(entry.key if entry else None)
        return entry

    def _save(self, job: Job, with_: Mapping[str, str], trigger: Trigger) -> None:
        entry = self.cache.save(job.workspace, _lines(with_["path"]), with_["key"], trigger.ref)
        if entry is not None:
            job.saved.append(entry)

    def _gate(
        self,
        job: Job,
        trigger: Trigger,
        with_: Mapping[str, str],
        step_env: Mapping[str, str],
        contexts: Mapping[str, Any],
        status: Status,
    ) -> Run:
        files = job.home.parent
        event, output, summary = files / "event.json", files / "output", files / "summary"
        event.write_text(json.dumps(trigger.payload))
        output.write_text("")
        summary.write_text("")
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(REPO_ROOT),  # the image's installed gate
            "HOME": str(job.home),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": trigger.name,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": trigger.sha,
            "GITHUB_REF": trigger.ref,
            "GITHUB_WORKSPACE": str(job.workspace),
            "GITHUB_API_URL": self.world.api.url,
            "GITHUB_SERVER_URL": self.world.git_server.url,
            "GITHUB_OUTPUT": str(output),
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_RUN_ID": contexts["github"]["run_id"],
            "RUNNER_OS": "Linux",
            "RUNNER_TEMP": contexts["runner"]["temp"],
            "ACTIONS_RUNTIME_TOKEN": "ghs_runnerRuntimeToken",
            "GIT_TERMINAL_PROMPT": "0",  # a credential prompt fails instead of hanging the test
            **_inputs(with_, contexts, status),
            **step_env,
        }
        done = subprocess.run(
            action_command(),
            cwd=job.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return Run(done.returncode, done.stdout, done.stderr, parse_outputs(output.read_text()),
                   summary.read_text())  # fmt: skip

    def _upload(self, job: Job, with_: Mapping[str, str], step: Step) -> bool:
        source = job.workspace / with_["path"]
        if not source.exists():
            return with_.get("if-no-files-found", "warn") != "error"
        store = self.root / "artifacts" / with_["name"]
        store.parent.mkdir(exist_ok=True)
        user = runner_user()
        if user:
            os.chown(store.parent, *user)
        done = as_runner(["cp", "-r", str(source), str(store)])
        step.detail = done.stderr
        self.artifacts[with_["name"]] = store
        return done.returncode == 0

    def _download(self, job: Job, with_: Mapping[str, str], step: Step) -> bool:
        target = job.workspace / with_.get("path", ".")
        names = (
            [with_["name"]] if "name" in with_ else fnmatch.filter(self.artifacts, with_["pattern"])
        )
        merge = with_.get("merge-multiple") == "true" or "name" in with_
        as_runner(["mkdir", "-p", str(target)])
        for name in names:
            into = target if merge else target / name
            as_runner(["mkdir", "-p", str(into)])
            done = as_runner(["cp", "-r", f"{self.artifacts[name]}/.", str(into)])
            if done.returncode != 0:
                step.detail = done.stderr
                return False
        return True


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def _inputs(
    with_: Mapping[str, str], contexts: Mapping[str, Any], status: Status
) -> dict[str, str]:
    """`INPUT_<NAME>` for every input of action.yml: the step's value, else the default."""
    declared = yaml.safe_load(ACTION_YML.read_text())["inputs"]
    unknown = set(with_) - set(declared)
    assert not unknown, f"inputs action.yml does not declare: {sorted(unknown)}"
    values = {}
    for name, spec in declared.items():
        value = with_.get(name, interpolate(str(spec.get("default", "")), contexts, status))
        values[f"INPUT_{name.upper().replace(' ', '_')}"] = value
    return values


def pull_request_trigger(world: World, event: str = "pull_request.synchronize") -> Trigger:
    """A PR event for the world's current PR: checkout of GitHub's merge commit."""
    payload = json.loads(world.event(event).read_text())
    payload["pull_request"]["base"]["ref"] = DEFAULT_BRANCH.removeprefix("refs/heads/")
    return Trigger("pull_request", payload, world.merge_sha, f"refs/pull/{world.number}/merge")


def push_trigger(world: World, sha: str, branch: str = "main") -> Trigger:
    payload = json.loads(world.event("push", after=sha, ref=f"refs/heads/{branch}").read_text())
    return Trigger("push", payload, sha, f"refs/heads/{branch}")
