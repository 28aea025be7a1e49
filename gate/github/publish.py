"""What the Action publishes once the flow ran: the PR's comment (one, edited in place), the
comment file of the fork-safe setup, the job summary, the step's outputs, an
annotation on the case line of every regression, the log lines and the exit code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from gate.compare.models import EXIT_CODES, Comparison, Verdict
from gate.flow.pr import FlowOutcome, suite_folder
from gate.flow.sharded import ShardOutcome, ShardVerdict, shard_verdict
from gate.github import workflow_commands as workflow
from gate.github.client import GitHubClient
from gate.github.comments import (
    CommentError,
    CommentTarget,
    authenticated_login,
    retire_suite_comments,
    upsert_comment,
)
from gate.github.events import Activity
from gate.github.inputs import ActionSettings
from gate.render import RenderContext, render_suite
from gate.render.markdown import text
from gate.render.pr_comment import PR_MARKER, render_pr_comment
from gate.render.reasons import sentence, words
from gate.report.files import atomic_write

REPORTS_DIR = "eval-gate-reports"


def say(out: TextIO, line: str) -> None:
    out.write(line + "\n")
    out.flush()


def finish_uncompared(settings: ActionSettings, verdict: Verdict, summary: str) -> None:
    """The job summary's line and the outputs when no suite was compared."""
    env = settings.env
    if env.step_summary:
        workflow.append_summary(env.step_summary, summary)
    if env.output:
        workflow.write_outputs(env.output, outputs(verdict, [], {}))


def finish_error(settings: ActionSettings, message: str) -> None:
    finish_uncompared(settings, "error", f"⚠️ **Eval Gate: error**: {text(message, 2000)}\n")


@dataclass(frozen=True)
class Shown:
    """A suite's outcome with its job summary, as this run shows it."""

    suite: str
    comparison: Comparison
    summary: str


@dataclass(frozen=True)
class Rendered:
    """The PR's one comment and each suite's job summary."""

    comment: str
    suites: list[Shown]


def render_outcomes(settings: ActionSettings, activity: Activity, flow: FlowOutcome) -> Rendered:
    """The PR's comment and every suite's job summary, linking to the PR's head commit (not
    GitHub's merge commit of it), with the base's templates (the PR's own rendered too, to be
    refused now if they break)."""
    env = settings.env
    ctx = RenderContext(
        repository=env.repository,
        server_url=env.server_url,
        head_sha=activity.head_sha if activity.pr_number else flow.head_sha,
        base_sha=flow.base_sha,
        run_url=env.run_url,
        report_hint=f"the {REPORTS_DIR} folder of the run",
        templates=flow.templates,
    )
    shown = []
    for outcome in flow.suites:
        _, summary = render_suite(outcome.comparison, ctx, own=flow.head_templates)
        shown.append(Shown(outcome.suite, outcome.comparison, summary))
    comment = render_pr_comment([o.comparison for o in flow.suites], ctx)
    return Rendered(comment, shown)


def _pooled(outcomes: Sequence[Shown]) -> dict[str, float | None]:
    ran = [o.comparison for o in outcomes if o.comparison.paired]
    n = sum(c.paired for c in ran)
    if not n:
        return {"base": None, "head": None, "delta": None}
    base = sum((c.base_pass_rate or 0.0) * c.paired for c in ran) / n
    head = sum((c.head_pass_rate or 0.0) * c.paired for c in ran) / n
    return {"base": base, "head": head, "delta": head - base}


def _regression_ids(outcomes: Sequence[Shown]) -> list[str]:
    prefix = len(outcomes) > 1
    return [
        f"{o.suite}/{case}" if prefix else case
        for o in outcomes
        for case in o.comparison.regressions
    ]


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def outputs(
    verdict: Verdict | ShardVerdict, regressions: list[str], pooled: Mapping[str, float | None]
) -> dict[str, str]:
    return {
        "verdict": verdict,
        "base-pass-rate": _number(pooled.get("base")),
        "head-pass-rate": _number(pooled.get("head")),
        "delta": _number(pooled.get("delta")),
        "regressions": json.dumps(regressions),
        "report": REPORTS_DIR,
    }


def regression_annotations(outcomes: Sequence[Shown]) -> list[str]:
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


def _post_comment(
    settings: ActionSettings, activity: Activity, rendered: Rendered, token: str | None
) -> list[str]:
    """Upsert the PR's comment (and retire the per-suite comments of earlier versions); the
    reasons it could not be done, for warnings."""
    env, mode = settings.env, settings.inputs.comment
    if activity.pr_number is None or mode == "never":
        return []
    if not token:
        return ["no `github-token`: the comment is only in the job summary"]
    client = GitHubClient(token, env.api_url)
    create = mode == "always" or any(s.comparison.verdict != "skipped" for s in rendered.suites)
    try:
        author = authenticated_login(client)
        target = CommentTarget(repository=env.repository, issue_number=activity.pr_number)
        posted = upsert_comment(
            client, target, rendered.comment, PR_MARKER, author=author, create=create
        )
        retire_suite_comments(client, target, posted.seen, author)
    except CommentError as exc:
        return [f"{exc}{_why(exc.status)}"]
    finally:
        client.close()
    return []


def _why(status: int | None) -> str:
    if status == 403:
        return (
            " (the token cannot write: a fork's pull request gets a read-only token; "
            "the comment is in the job summary)"
        )
    return " (the comment is in the job summary)"


def _write_comment_file(folder: Path, activity: Activity, rendered: Rendered) -> None:
    """The comment as a file beside the reports, for the fork-safe two-workflow setup: a
    `workflow_run` job with a write token posts it (docs/action.md)."""
    if all(s.comparison.verdict == "skipped" for s in rendered.suites):
        return
    atomic_write(folder / "comment.md", rendered.comment)
    if activity.pr_number is not None:
        pull = {"number": activity.pr_number, "head_sha": activity.head_sha}
        atomic_write(folder / "pull-request.json", json.dumps(pull) + "\n")


def shard_summary(ran: Sequence[ShardOutcome], reports: str) -> str:
    """The shard job's summary: one line per suite (the verdict comes from the finish job)."""
    lines = []
    for o in ran:
        head = f"**Eval Gate ({text(o.suite, 200)})**, shard {o.shard}"
        if o.verdict == "partial":
            lines.append(
                f"⏳ {head}: base and head ran; their reports are in `{reports}` for the "
                "`mode: finish` job, which compares and comments"
            )
        elif o.verdict == "error":
            lines.append(f"⚠️ {head}: error: {text('; '.join(map(sentence, o.findings)), 2000)}")
        else:
            lines.append(f"⏭️ {head}: skipped: {text('; '.join(map(sentence, o.findings)), 600)}")
    return "\n\n".join(lines) + "\n"


def publish_shard(settings: ActionSettings, ran: Sequence[ShardOutcome], out: TextIO) -> int:
    """A shard job posts nothing: a short job summary, outputs, and exit 3 on an error."""
    env = settings.env
    verdict = shard_verdict(ran)
    if env.step_summary:
        workflow.append_summary(env.step_summary, shard_summary(ran, REPORTS_DIR))
    if env.output:
        workflow.write_outputs(env.output, outputs(verdict, [], {}))
    for outcome in ran:
        where = f"reports in {REPORTS_DIR}/{suite_folder(outcome.suite)}"
        reasons = "; ".join(map(sentence, outcome.findings[:3])) or where
        line = f"[gate] {outcome.suite}: shard {outcome.shard}: {outcome.verdict}: {reasons}"
        say(out, workflow.plain(line))
    return EXIT_CODES["error"] if verdict == "error" else 0


def publish(
    settings: ActionSettings,
    activity: Activity,
    flow: FlowOutcome,
    token: str | None,
    out: TextIO,
) -> int:
    env, inputs = settings.env, settings.inputs
    verdict = flow.verdict
    rendered = render_outcomes(settings, activity, flow)
    outcomes = rendered.suites
    problems = _post_comment(settings, activity, rendered, token)
    for problem in problems:
        say(out, workflow.warning(f"PR comment not posted: {problem}", title="Eval Gate"))
    for line in regression_annotations(outcomes):
        say(out, line)
    if env.step_summary:
        for problem in problems:
            workflow.append_summary(
                env.step_summary, f"> ⚠️ PR comment not posted: {text(problem, 600)}\n"
            )
        for outcome in outcomes:
            workflow.append_summary(env.step_summary, outcome.summary)
    _write_comment_file(env.workspace / REPORTS_DIR, activity, rendered)
    if env.output:
        written = outputs(verdict, _regression_ids(outcomes), _pooled(outcomes))
        workflow.write_outputs(env.output, written)
    for outcome in outcomes:
        reasons = "; ".join(words(outcome.comparison).reasons[:3])
        say(out, workflow.plain(f"[gate] {outcome.suite}: {outcome.comparison.verdict}: {reasons}"))
    code = flow.exit_code
    if code == EXIT_CODES["fail"] and not inputs.fail_on_regression:
        say(
            out, workflow.warning(f"Eval Gate: {verdict}; not blocking (fail-on-regression: false)")
        )
        return 0
    return code
