"""What the Action publishes once the flow ran: the PR comments (one per suite, edited in
place), the comment files of the fork-safe setup, the job summary, the step's outputs, an
annotation on the case line of every regression, the log lines and the exit code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from gate.compare.models import EXIT_CODES, Verdict
from gate.flow.pr import SuiteOutcome, combined_verdict, exit_code, suite_folder
from gate.flow.sharded import ShardOutcome, ShardVerdict, shard_summary, shard_verdict
from gate.github import workflow_commands as workflow
from gate.github.client import GitHubClient
from gate.github.comments import (
    CommentError,
    CommentTarget,
    authenticated_login,
    upsert_comment,
)
from gate.github.events import Activity
from gate.github.inputs import ActionSettings
from gate.render import comment_marker
from gate.render.markdown import text
from gate.render.reasons import words
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
        reasons = "; ".join(outcome.reasons[:3]) or where
        say(out, f"[gate] {outcome.suite}: shard {outcome.shard}: {outcome.verdict}: {reasons}")
    return EXIT_CODES["error"] if verdict == "error" else 0


def publish(
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
    _write_comment_files(env.workspace / REPORTS_DIR, activity, outcomes)
    if env.output:
        written = outputs(verdict, _regression_ids(outcomes), _pooled(outcomes))
        workflow.write_outputs(env.output, written)
    for outcome in outcomes:
        reasons = "; ".join(words(outcome.comparison).reasons[:3])
        say(out, f"[gate] {outcome.suite}: {outcome.comparison.verdict}: {reasons}")
    code = exit_code(outcomes)
    if code == EXIT_CODES["fail"] and not inputs.fail_on_regression:
        say(
            out, workflow.warning(f"Eval Gate: {verdict}; not blocking (fail-on-regression: false)")
        )
        return 0
    return code
