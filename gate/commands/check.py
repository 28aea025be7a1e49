"""`gate check`: the PR flow on your machine: the working tree against a base branch."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gate.commands.output import terminal_default, use_colour
from gate.compare.models import Comparison
from gate.errors import InputError
from gate.flow.pr import exit_on_sigterm, plan_check, run_check
from gate.inputs.policy import policy_value
from gate.render import RenderContext, render_suite, render_text
from gate.render.pr_comment import plain_headline, render_pr_comment, terminal_suite_line


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "check",
        help="the whole PR flow locally: run base and head, compare, print the comment",
        description=(
            "Compare the working tree (uncommitted changes included) with a base branch, the "
            "way the GitHub Action compares a pull request with its base, and print the PR "
            "comment. Nothing is fetched or posted. Exit 0 pass, skipped or inconclusive, 1 "
            "fail (or inconclusive under `inconclusive: block`), 3 error, 2 bad input."
        ),
    )
    _what_arguments(p)
    _output_arguments(p)
    _run_arguments(p)
    p.set_defaults(handler=handle)


def _what_arguments(p: argparse.ArgumentParser) -> None:
    """What is compared, where the reports go, the threshold."""
    p.add_argument("-c", "--config", default="gate.yml", help="config file (default: gate.yml)")
    p.add_argument(
        "--base",
        metavar="REF",
        help="branch, tag or commit to compare with (default: origin/HEAD, else main or master)",
    )
    p.add_argument(
        "--out",
        default=".eval-gate/reports",
        help="folder for the two reports per suite (default: .eval-gate/reports, which the "
        ".gitignore of `gate init` ignores)",
    )
    p.add_argument("--threshold", type=float, metavar="POINTS", help="override `threshold`")


def _output_arguments(p: argparse.ArgumentParser) -> None:
    """What is written: the comment's format, full held-out reports, an HTML page."""
    p.add_argument(
        "--format",
        choices=("markdown", "summary", "text"),
        help=(
            "markdown: the PR comment; summary: the longer job summary; text: the comment for "
            "a terminal (default: text on a terminal, else markdown)"
        ),
    )
    p.add_argument("--summary", action="store_true", help="the same as --format summary")
    p.add_argument(
        "--heldout-detail",
        metavar="DIR",
        help="also write full reports (held-out cases unredacted) to DIR/<suite>/",
    )
    p.add_argument(
        "--html",
        metavar="FILE",
        help="also write the comment as an HTML page, rendered by GitHub's Markdown engine",
    )


def _run_arguments(p: argparse.ArgumentParser) -> None:
    """How it runs: the cache, the PR's labels, a plan instead of a run."""
    p.add_argument(
        "--no-cache",
        action="store_true",
        help="draw fresh answers: ignore and do not write the response cache (rerun a noise fail)",
    )
    p.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="NAME",
        help="a label of the PR (repeatable): with the base policy's accept_label "
        "(`eval-gate: accept`) a fail is accepted, as it would be on GitHub",
    )
    p.add_argument(
        "--plan",
        nargs="?",
        const="table",
        choices=("table", "json"),
        help="print what would run (each suite, each side's commit and system, the cases, the "
        "budget) as a table or as JSON, and run nothing",
    )


def write_preview(path: Path, markdown: str) -> None:
    from gate.render.preview import html_page  # cmarkgfm: only when asked for

    try:
        path.write_text(html_page(markdown, title="Eval Gate: PR comment"), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror}", key="--html") from None
    print(f"HTML preview: {path}", file=sys.stderr)


def pr_text(comparisons: list[Comparison], ctx: RenderContext) -> str:
    """The PR's comment for a terminal: with several suites, a line per suite, then each."""
    colour = use_colour()
    texts = [
        render_text(c, ctx.model_copy(update={"suite": c.suite}), colour=colour)
        for c in comparisons
    ]
    if len(comparisons) == 1:
        return texts[0]
    lines = [
        str(plain_headline(comparisons)),
        *(f"- {terminal_suite_line(c)}" for c in comparisons),
    ]
    return "\n".join(lines) + "\n\n" + "\n".join(texts)


def show_plan(config: Path, args: argparse.Namespace) -> int:
    from gate.commands.plan_view import plan_json, plan_table

    shown = plan_check(
        config.resolve().parent, config, args.base, Path(args.out), threshold=args.threshold
    )
    sys.stdout.write(plan_json(shown) if args.plan == "json" else plan_table(shown))
    return 0


def handle(args: argparse.Namespace) -> int:
    config = Path(args.config)
    if args.threshold is not None:  # exit 2 before anything runs
        policy_value("threshold", args.threshold, flag="--threshold")
    exit_on_sigterm()
    if args.plan:
        return show_plan(config, args)
    flow = run_check(
        config.resolve().parent,
        config,
        args.base,
        Path(args.out),
        threshold=args.threshold,
        heldout_detail=Path(args.heldout_detail) if args.heldout_detail else None,
        use_cache=not args.no_cache,
        labels=args.label,
    )
    ctx = RenderContext(
        head_sha=flow.head_sha,
        base_sha=flow.base_sha,
        report_hint=str(args.out),
        templates=flow.templates,
    )
    shown = "summary" if args.summary else (args.format or terminal_default())
    summaries = [render_suite(o.comparison, ctx, own=flow.head_templates)[1] for o in flow.suites]
    comparisons = [o.comparison for o in flow.suites]
    on_github = (
        "\n\n".join(summaries) if shown == "summary" else render_pr_comment(comparisons, ctx)
    )
    if shown == "text":
        sys.stdout.write(pr_text(comparisons, ctx))
    else:
        sys.stdout.write(on_github + "\n")
    if args.html:  # the page shows what GitHub shows: the comment, or the job summary
        write_preview(Path(args.html), on_github)
    for outcome in flow.suites:
        print(terminal_suite_line(outcome.comparison), file=sys.stderr)
    print(f"verdict: {flow.verdict}", file=sys.stderr)
    return flow.exit_code
