"""The GitHub Action: GitHub's environment in; comments, job summary, outputs, annotations
and the exit code out (`gate action`, the container's entrypoint).

Reads only the standard Actions environment (see `gate.github.inputs`). Exit 0 pass, skipped or
inconclusive, 1 fail or a blocking inconclusive (`inconclusive: block`; 0 with
`fail-on-regression: false`), 3 error, 2 bad configuration (one line).
`mode: shard` and `mode: finish` split the flow over matrix jobs (`gate.flow.sharded`); a shard job
exits 0 when its shard ran (verdict `partial`) or was skipped, 3 when a side could not run.
Everything written to stdout goes through the runner's command parser, so text we do not
control (the runs' output) is streamed with workflow commands paused. What the flow's outcomes
become (comments, summary, outputs, annotations, exit code) is `gate.github.publish`.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TextIO

from gate.errors import GateError, InputError
from gate.flow.baseline import config_path
from gate.flow.git import GitRepo
from gate.flow.plan import FlowPlan, plan_flow
from gate.flow.pr import run_flow
from gate.flow.request import FlowIO, FlowRequest, PolicyOverrides, Revisions
from gate.flow.sharded import run_finish_flow, run_shard_flow
from gate.github import workflow_commands as workflow
from gate.github.client import GitHubApiError, GitHubClient
from gate.github.events import Activity, BaseSpec, activity_for, load_event
from gate.github.inputs import ActionSettings, read_settings
from gate.github.labels import pr_labels
from gate.github.publish import (
    REPORTS_DIR,
    finish_error,
    finish_uncompared,
    publish,
    publish_shard,
    say,
)
from gate.github.response_cache import cache_environ, claim_cache, hand_over, tidy_cache
from gate.inputs.config import load_config
from gate.inputs.paths import relative_posix
from gate.render.markdown import text


def run_action(environ: Mapping[str, str], out: TextIO) -> int:
    settings: ActionSettings | None = None
    try:
        settings = read_settings(environ)
        return _run(settings, environ, out)
    except InputError as exc:
        say(out, _input_error(exc, settings))
        return exc.exit_code
    except GateError as exc:
        return _fail(out, settings, str(exc), exc.exit_code)
    except Exception as exc:  # a bug of ours must read as an error (3), never as a fail (1)
        out.write(workflow.plain(traceback.format_exc()))
        return _fail(out, settings, f"internal error: {type(exc).__name__}: {exc}", 3)
    finally:  # the reports, readable by upload-artifact, which runs as the runner's user
        if settings is not None:
            hand_over(settings.env.workspace / REPORTS_DIR, settings.env.workspace)


def _fail(out: TextIO, settings: ActionSettings | None, message: str, code: int) -> int:
    if settings is not None:
        finish_error(settings, message)
    say(out, workflow.error(message, title="Eval Gate"))
    return code


def _input_error(exc: InputError, settings: ActionSettings | None) -> str:
    """One annotation line; on the config file and line when the error names them."""
    file = exc.file
    if file and settings is not None and Path(file).is_absolute():
        file = relative_posix(Path(file), settings.env.workspace) or file
        exc = InputError(exc.message, file=file, line=exc.line, key=exc.key)
    return workflow.error(exc.format(), file=file, line=exc.line, title="Eval Gate: bad input")


# --- the run ---------------------------------------------------------------------------------


def _resolve_base(repo: GitRepo, spec: BaseSpec, head: str) -> str | None:
    if spec.kind == "sha":
        return repo.ensure_commit(spec.value or "")
    if spec.kind == "ref":
        return repo.resolve_ref(spec.value or "", fetch=True)
    return repo.parent_of(head, fetch=True)


def _run(settings: ActionSettings, environ: Mapping[str, str], out: TextIO) -> int:
    env, inputs = settings.env, settings.inputs
    token = inputs.github_token.get_secret_value() if inputs.github_token else None
    activity = activity_for(
        env.event_name,
        load_event(env.event_path),
        base_ref=inputs.base_ref,
        source=str(env.event_path),
    )
    if activity.skip_reason:
        return _skip(settings, out, activity.skip_reason)
    config = load_config(env.workspace / inputs.config)
    if token:
        say(out, workflow.add_mask(token))
    environ = cache_environ(environ, env.workspace)  # both sides' cache, in the workspace
    plan: FlowPlan | None = None
    repo = GitRepo(env.workspace, token=token, server_url=env.server_url, environ=environ)
    try:
        head = repo.head_sha()
        base = _resolve_base(repo, activity.base or BaseSpec(kind="parent"), head)
        if base is None:
            return _skip(settings, out, "the head commit has no parent to compare with")
        if activity.pr_code_checkout_required and not _has_pr_code(repo, head, activity):
            say(out, workflow.warning(PR_TARGET_WARNING))
            return _skip(settings, out, "the checkout is not the PR's code")
        say(out, workflow.plain(f"[gate] {activity.title}: base {base[:12]}, head {head[:12]}"))
        revisions = Revisions(repo, base, head, fetch=True)
        request = FlowRequest(
            revisions=revisions,
            config=config,
            config_at=config_path(env.workspace, env.workspace / inputs.config),
            io=FlowIO(
                env.workspace / REPORTS_DIR,
                environ=environ,
                stream=out,
                use_cache=not inputs.no_cache,
            ),
            overrides=_overrides(settings),
            labels=_labels(settings, activity, token, out),
        )
        with workflow.commands_paused(out):
            plan = plan_flow(request)
            claim_cache(plan.cache, env.workspace)  # before any side reads it
            publish = _run_mode(settings, activity, plan, token, out)
    finally:
        repo.close()
        if plan is not None:
            _tidy(settings, plan, out)
    return publish()


def _labels(
    settings: ActionSettings, activity: Activity, token: str | None, out: TextIO
) -> tuple[str, ...]:
    """The PR's labels now (the API), else as the event gave them (with a warning). A shard
    job decides no verdict, so it reads none."""
    if activity.pr_number is None or settings.inputs.mode == "shard":
        return ()
    if token:
        client = GitHubClient(token, settings.env.api_url)
        try:
            return pr_labels(client, settings.env.repository, activity.pr_number)
        except GitHubApiError as exc:
            why = f"cannot read the PR's labels ({exc.reason}): using the event's"
            say(out, workflow.warning(why, title="Eval Gate"))
        finally:
            client.close()
    return activity.labels


def _overrides(settings: ActionSettings) -> PolicyOverrides:
    inputs = settings.inputs
    severities = tuple(inputs.block_severities) if inputs.block_severities else None
    return PolicyOverrides(
        threshold=inputs.threshold,
        block_severities=severities,
        enforce=inputs.fail_on_regression,
    )


def _tidy(settings: ActionSettings, plan: FlowPlan, out: TextIO) -> None:
    """The cache pruned (after the base's `cache.keep_days`), and readable by the step that
    saves it."""
    if settings.inputs.no_cache:
        return
    loaded = plan.baseline.loaded or plan.request.config
    line = tidy_cache(plan.cache, loaded.config.cache, settings.env.workspace)
    if line:
        with workflow.commands_paused(out):  # it names the cache's folder
            say(out, line)


def _run_mode(
    settings: ActionSettings,
    activity: Activity,
    plan: FlowPlan,
    token: str | None,
    out: TextIO,
) -> Callable[[], int]:
    """Run the `mode` input's part of the planned flow; what publishes its result."""
    inputs = settings.inputs
    if inputs.mode == "shard":
        assert inputs.shard is not None  # required by gate.github.inputs
        ran = run_shard_flow(plan, inputs.shard)
        return lambda: publish_shard(settings, ran, out)
    if inputs.mode == "finish":
        flow = run_finish_flow(plan, settings.env.workspace / inputs.shard_reports)
    else:
        flow = run_flow(plan)
    return lambda: publish(settings, activity, flow, token, out)


def _has_pr_code(repo: GitRepo, head: str, activity: Activity) -> bool:
    """The checkout is the PR's head, or GitHub's merge commit of it."""
    return activity.head_sha in (head, *repo.recorded_parents(head))


PR_TARGET_WARNING = (
    "pull_request_target checks out the base branch: there is no PR code to evaluate; "
    "see the fork-safe two-workflow setup in the docs instead of checking out PR code here"
)


def _skip(settings: ActionSettings, out: TextIO, reason: str) -> int:
    say(out, workflow.notice(f"Eval Gate skipped: {reason}"))
    finish_uncompared(settings, "skipped", f"⏭️ **Eval Gate: skipped**: {text(reason, 600)}\n")
    return 0
