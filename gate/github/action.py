"""The GitHub Action: GitHub's environment in; comments, job summary, outputs, annotations
and the exit code out (`gate action`, the container's entrypoint).

Reads only the standard Actions environment (see `gate.github.inputs`). Exit 0 pass or skipped,
1 fail (0 with `fail-on-regression: false`), 3 error, 2 bad configuration (one line).
`mode: shard` and `mode: finish` split the flow over matrix jobs (`gate.flow.sharded`); a shard job
exits 0 when its shard ran (verdict `partial`) or was skipped, 3 when a side could not run.
Everything written to stdout goes through the runner's command parser, so text we do not
control (the runs' output) is streamed with workflow commands paused.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TextIO

from gate.compare.models import EXIT_CODES
from gate.errors import GateError, InputError
from gate.flow.git import GitRepo
from gate.flow.plan import plan_flow
from gate.flow.pr import SuiteOutcome, combined_verdict, exit_code, run_flow, suite_folder
from gate.flow.request import FlowIO, FlowRequest, PolicyOverrides, Revisions
from gate.flow.sharded import (
    ShardOutcome,
    run_finish_flow,
    run_shard_flow,
    shard_summary,
    shard_verdict,
)
from gate.github import workflow_commands as workflow
from gate.github.client import GitHubClient
from gate.github.comments import (
    CommentError,
    CommentTarget,
    authenticated_login,
    upsert_comment,
)
from gate.github.events import Activity, BaseSpec, activity_for, load_event
from gate.github.inputs import ActionSettings, read_settings
from gate.github.response_cache import cache_environ, hand_over, tidy_cache
from gate.inputs.config import LoadedConfig, load_config
from gate.inputs.paths import relative_posix
from gate.render import RenderContext, comment_marker
from gate.render.markdown import text
from gate.render.reasons import words
from gate.report.files import atomic_write

REPORTS_DIR = "eval-gate-reports"


def run_action(environ: Mapping[str, str], out: TextIO) -> int:
    settings: ActionSettings | None = None
    try:
        settings = read_settings(environ)
        return _run(settings, environ, out)
    except InputError as exc:
        _say(out, _input_error(exc, settings))
        return exc.exit_code
    except GateError as exc:
        return _fail(out, settings, str(exc), exc.exit_code)
    except Exception as exc:  # a bug of ours must read as an error (3), never as a fail (1)
        traceback.print_exc(file=out)
        return _fail(out, settings, f"internal error: {type(exc).__name__}: {exc}", 3)
    finally:  # the reports, readable by upload-artifact, which runs as the runner's user
        if settings is not None:
            hand_over(settings.env.workspace / REPORTS_DIR, settings.env.workspace)


def _fail(out: TextIO, settings: ActionSettings | None, message: str, code: int) -> int:
    if settings is not None:
        _finish_error(settings, message)
    _say(out, workflow.error(message, title="Eval Gate"))
    return code


def _say(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def _input_error(exc: InputError, settings: ActionSettings | None) -> str:
    """One annotation line; on the config file and line when the error names them."""
    file = exc.file
    if file and settings is not None and Path(file).is_absolute():
        file = relative_posix(Path(file), settings.env.workspace) or file
        exc = InputError(exc.message, file=file, line=exc.line, key=exc.key)
    return workflow.error(exc.format(), file=file, line=exc.line, title="Eval Gate: bad input")


def _finish_uncompared(settings: ActionSettings, verdict: str, summary: str) -> None:
    """The job summary's line and the outputs when no suite was compared."""
    env = settings.env
    if env.step_summary:
        workflow.append_summary(env.step_summary, summary)
    if env.output:
        workflow.write_outputs(env.output, _outputs(verdict, [], {}))


def _finish_error(settings: ActionSettings, message: str) -> None:
    _finish_uncompared(settings, "error", f"⚠️ **Eval Gate: error**: {text(message, 2000)}\n")


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
        _say(out, workflow.add_mask(token))
    environ = cache_environ(environ, env.workspace)  # both sides' cache, in the workspace
    repo = GitRepo(env.workspace, token=token, server_url=env.server_url, environ=environ)
    try:
        head = repo.head_sha()
        base = _resolve_base(repo, activity.base or BaseSpec(kind="parent"), head)
        if base is None:
            return _skip(settings, out, "the head commit has no parent to compare with")
        if activity.pr_code_checkout_required and not _has_pr_code(repo, head, activity):
            _say(out, workflow.warning(PR_TARGET_WARNING))
            return _skip(settings, out, "the checkout is not the PR's code")
        _say(out, f"[gate] {activity.title}: base {base[:12]}, head {head[:12]}")
        revisions = Revisions(repo, base, head, fetch=True)
        request = FlowRequest(
            revisions=revisions,
            config=config,
            io=FlowIO(
                env.workspace / REPORTS_DIR,
                environ=environ,
                stream=out,
                use_cache=not inputs.no_cache,
            ),
            display=_display(settings, activity, revisions),
            overrides=_overrides(settings),
        )
        with workflow.commands_paused(out):
            publish = _run_mode(settings, activity, request, token, out)
    finally:
        repo.close()
        _tidy(settings, config, environ, out)
    return publish()


def _display(settings: ActionSettings, activity: Activity, revisions: Revisions) -> RenderContext:
    """How the comments link: to the PR's head commit (not GitHub's merge commit of it)."""
    env = settings.env
    return RenderContext(
        repository=env.repository,
        server_url=env.server_url,
        head_sha=activity.head_sha if activity.pr_number else revisions.head_sha,
        base_sha=revisions.base_sha,
        run_url=env.run_url,
        report_hint=f"the {REPORTS_DIR} folder of the run",
    )


def _overrides(settings: ActionSettings) -> PolicyOverrides:
    inputs = settings.inputs
    severities = tuple(inputs.block_severities) if inputs.block_severities else None
    return PolicyOverrides(threshold=inputs.threshold, block_severities=severities)


def _tidy(
    settings: ActionSettings, config: LoadedConfig, environ: Mapping[str, str], out: TextIO
) -> None:
    """The cache pruned, and readable by the step that saves it."""
    workspace = settings.env.workspace
    line = None if settings.inputs.no_cache else tidy_cache(config, environ, workspace)
    if line:
        with workflow.commands_paused(out):  # it names cache.dir, which the PR may set
            _say(out, line)


def _run_mode(
    settings: ActionSettings,
    activity: Activity,
    request: FlowRequest,
    token: str | None,
    out: TextIO,
) -> Callable[[], int]:
    """Plan the flow once, run the `mode` input's part of it; what publishes its result."""
    inputs, plan = settings.inputs, plan_flow(request)
    if inputs.mode == "shard":
        assert inputs.shard is not None  # required by gate.github.inputs
        ran = run_shard_flow(plan, inputs.shard)
        return lambda: _publish_shard(settings, ran, out)
    if inputs.mode == "finish":
        outcomes = run_finish_flow(plan, settings.env.workspace / inputs.shard_reports)
    else:
        outcomes = run_flow(plan)
    return lambda: _publish(settings, activity, outcomes, token, out)


def _has_pr_code(repo: GitRepo, head: str, activity: Activity) -> bool:
    """The checkout is the PR's head, or GitHub's merge commit of it."""
    return activity.head_sha in (head, *repo.recorded_parents(head))


PR_TARGET_WARNING = (
    "pull_request_target checks out the base branch: there is no PR code to evaluate; "
    "see the fork-safe two-workflow setup in the docs instead of checking out PR code here"
)


def _skip(settings: ActionSettings, out: TextIO, reason: str) -> int:
    _say(out, workflow.notice(f"Eval Gate skipped: {reason}"))
    _finish_uncompared(settings, "skipped", f"⏭️ **Eval Gate: skipped**: {text(reason, 600)}\n")
    return 0


# --- publishing ------------------------------------------------------------------------------


def _pooled(outcomes: Sequence[SuiteOutcome]) -> dict[str, float | None]:
    ran = [o.comparison for o in outcomes if o.comparison.paired]
    n = sum(c.paired for c in ran)
    if not n:
        return {"base": None, "head": None, "delta": None}
    base = sum((c.base_pass_rate or 0.0) * c.paired for c in ran) / n
    head = sum((c.head_pass_rate or 0.0) * c.paired for c in ran) / n
    return {"base": base, "head": head, "delta": head - base}


def _regression_ids(outcomes: Sequence[SuiteOutcome]) -> list[str]:
    prefix = len(outcomes) > 1
    return [
        f"{o.suite}/{case}" if prefix else case
        for o in outcomes
        for case in o.comparison.regressions
    ]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def _outputs(
    verdict: str, regressions: list[str], pooled: Mapping[str, float | None]
) -> dict[str, str]:
    return {
        "verdict": verdict,
        "base-pass-rate": _number(pooled.get("base")),
        "head-pass-rate": _number(pooled.get("head")),
        "delta": _number(pooled.get("delta")),
        "regressions": json.dumps(regressions),
        "report": REPORTS_DIR,
    }


def regression_annotations(outcomes: Sequence[SuiteOutcome]) -> list[str]:
    """`::error` on the case line of every regression and new blocker failure."""
    lines = []
    for outcome in outcomes:
        c = outcome.comparison
        flagged = list(dict.fromkeys([*c.regressions, *c.new_blocker_failures]))
        for case_id in flagged:
            case = c.cases.get(case_id)
            if case is None:
                continue
            shown = case.shown
            failed = ", ".join(check.name for check in shown.failed_checks[:5]) or shown.status
            what = "regressed" if case_id in c.regressions else "fails (blocker)"
            lines.append(
                workflow.error(
                    f"{case_id} {what}: {failed}".rstrip(": "),
                    file=case.file or None,
                    line=case.line or None,
                    title=f"Eval Gate ({outcome.suite})",
                )
            )
    return lines


def _post_comments(
    settings: ActionSettings,
    activity: Activity,
    outcomes: Sequence[SuiteOutcome],
    token: str | None,
) -> list[str]:
    """Upsert one comment per suite; the reasons it could not be done, for warnings."""
    env, mode = settings.env, settings.inputs.comment
    if activity.pr_number is None or mode == "never":
        return []
    if not token:
        return ["no `github-token`: the comment is only in the job summary"]
    client = GitHubClient(token, env.api_url)
    problems: list[str] = []
    try:
        author = authenticated_login(client)
        target = CommentTarget(repository=env.repository, issue_number=activity.pr_number)
        for outcome in outcomes:
            create = mode == "always" or outcome.comparison.verdict != "skipped"
            try:
                upsert_comment(
                    client,
                    target,
                    outcome.markdown,
                    comment_marker(outcome.suite),
                    author=author,
                    create=create,
                )
            except CommentError as exc:
                problems.append(f"{outcome.suite}: {exc}{_why(exc.status)}")
    finally:
        client.close()
    return problems


def _why(status: int | None) -> str:
    if status == 403:
        return (
            " (the token cannot write: a fork's pull request gets a read-only token; "
            "the comment is in the job summary)"
        )
    return " (the comment is in the job summary)"


def _write_comment_files(
    folder: Path, activity: Activity, outcomes: Sequence[SuiteOutcome]
) -> None:
    """The comments as files beside the reports, for the fork-safe two-workflow setup: a
    `workflow_run` job with a write token posts them (docs/action.md)."""
    ran = [o for o in outcomes if o.comparison.verdict != "skipped"]
    for outcome in ran:
        atomic_write(folder / suite_folder(outcome.suite) / "comment.md", outcome.markdown)
    if ran and activity.pr_number is not None:
        pull = {"number": activity.pr_number, "head_sha": activity.head_sha}
        atomic_write(folder / "pull-request.json", json.dumps(pull) + "\n")


def _publish_shard(settings: ActionSettings, ran: Sequence[ShardOutcome], out: TextIO) -> int:
    """A shard job posts nothing: a short job summary, outputs, and exit 3 on an error."""
    env = settings.env
    verdict = shard_verdict(ran)
    if env.step_summary:
        workflow.append_summary(env.step_summary, shard_summary(ran, REPORTS_DIR))
    if env.output:
        workflow.write_outputs(env.output, _outputs(verdict, [], {}))
    for outcome in ran:
        where = f"reports in {REPORTS_DIR}/{suite_folder(outcome.suite)}"
        reasons = "; ".join(outcome.reasons[:3]) or where
        _say(out, f"[gate] {outcome.suite}: shard {outcome.shard}: {outcome.verdict}: {reasons}")
    return EXIT_CODES["error"] if verdict == "error" else 0


def _publish(
    settings: ActionSettings,
    activity: Activity,
    outcomes: Sequence[SuiteOutcome],
    token: str | None,
    out: TextIO,
) -> int:
    env, inputs = settings.env, settings.inputs
    verdict = combined_verdict(outcomes)
    problems = _post_comments(settings, activity, outcomes, token)
    for problem in problems:
        _say(out, workflow.warning(f"PR comment not posted: {problem}", title="Eval Gate"))
    for line in regression_annotations(outcomes):
        _say(out, line)
    if env.step_summary:
        for problem in problems:
            workflow.append_summary(
                env.step_summary, f"> ⚠️ PR comment not posted: {text(problem, 600)}\n"
            )
        for outcome in outcomes:
            workflow.append_summary(env.step_summary, outcome.summary)
    _write_comment_files(env.workspace / REPORTS_DIR, activity, outcomes)
    if env.output:
        outputs = _outputs(verdict, _regression_ids(outcomes), _pooled(outcomes))
        workflow.write_outputs(env.output, outputs)
    for outcome in outcomes:
        reasons = "; ".join(words(outcome.comparison).reasons[:3])
        _say(out, f"[gate] {outcome.suite}: {outcome.comparison.verdict}: {reasons}")
    code = exit_code(outcomes)
    if code == EXIT_CODES["fail"] and not inputs.fail_on_regression:
        _say(
            out, workflow.warning(f"Eval Gate: {verdict}; not blocking (fail-on-regression: false)")
        )
        return 0
    return code
