"""`gate demo`: a complete PR comparison in a throwaway repository, offline and without keys."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from gate.errors import InputError

if TYPE_CHECKING:
    from gate.flow.demo import DemoRun


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="a complete PR comparison in a throwaway repository, offline",
        description=(
            "Create a git repository with a base commit and a PR that edits a prompt and a model "
            "config, run `gate check` on it against the bundled offline example app, print the PR "
            "comment and write the reports, the Markdown and an HTML preview. Exits 0 when the "
            "demo ran, whatever the verdict it shows."
        ),
    )
    p.add_argument("--dir", metavar="DIR", help="an empty or new folder (default: a temp folder)")
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    folder = Path(args.dir).resolve() if args.dir else None
    if folder is not None and folder.exists() and any(folder.iterdir()):
        raise InputError("the demo needs an empty or new folder", file=folder, key="--dir")
    from gate.flow.demo import run_demo

    show(run_demo(folder, sys.stdout, sys.stderr), sys.stdout)
    return 0


def show(demo: DemoRun, out: TextIO) -> None:
    """The demo's comment: printed, and written as Markdown and as an HTML preview."""
    from gate.render import RenderContext, render_text
    from gate.render.pr_comment import render_pr_comment
    from gate.render.preview import html_page

    flow = demo.flow
    ctx = RenderContext(head_sha=flow.head_sha, base_sha=flow.base_sha, templates=flow.templates)
    markdown = render_pr_comment([o.comparison for o in flow.suites], ctx)
    comment = demo.folder / "comment.md"
    comment.write_text(markdown, encoding="utf-8")
    preview = demo.folder / "comment.html"
    preview.write_text(html_page(markdown, title="Eval Gate demo: PR comment"), encoding="utf-8")
    rule = "─" * 78
    shown = "\n".join(
        render_text(o.comparison, ctx.model_copy(update={"suite": o.suite})) for o in flow.suites
    )
    repo = demo.repo
    out.write(f"{rule}\nThe PR comment\n{rule}\n{shown}{rule}\n")
    out.write(
        f"verdict: {flow.verdict} (a real PR with this verdict could not merge)\n"
        f"repository:   {repo} (branch prompt-refresh vs main: `git -C {repo} diff main`)\n"
        f"reports:      {demo.reports}\n"
        f"comment:      {comment}\n"
        f"HTML preview: {preview} (rendered by GitHub's Markdown engine)\n"
        f"Run the same check yourself: cd {repo} && gate check --base main\n"
    )
