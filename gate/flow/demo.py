"""`gate demo`: a real PR comparison in a throwaway git repository, offline and without keys.

The repository holds the bundled example app (`cases/app`: an offline assistant whose answers
follow its prompt and model-config files), its SDK and its support suite. The base commit is the
app as shipped; the PR commit edits the prompt and the model config the way a real PR would.
Then the very code path of `gate check` runs on it: change detection, both runs, comparison,
verdict, the comment.

What the PR does, and what the comment therefore shows: a regression no one can misread (two
blockers fail and the pass rate drops 12 points, four times the threshold) beside what the PR
did get right, so the comparison has both sides to show:
- drops the prompt's rules to name the CAC and never to claim to be a lawyer ("shorter"): two
  blocker cases and a held-out case regress;
- adds a rule to mention transfer fees, and switches to the `-large-` model: two fixes;
- raises the temperature to 0.7: with `repeats: 3` the opening-hours case becomes flaky.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TextIO

import git

from gate.render import render_text
from gate.render.preview import html_page

DEMO_CONFIG = """\
# Eval Gate demo: the support suite against the bundled offline example app.
watch: ["app/prompts/**", "app/config/**"]
threshold: 3
block_severities: [blocker]
repeats: 3
concurrency: 4
sandbox:
  pythonpath: ["."]
  prelude: "from finlib import FinanceLib"
suites:
  - name: support
    cases: cases/support_faq.jsonl
    system: {kind: python, target: "app.assistant:answer"}
"""

PROMPT = "app/prompts/support.md"
MODEL_CONFIG = "app/config/model.yaml"
CAC_RULE = (
    "- Always name the Corporate Affairs Commission (CAC) when a question is about registration.\n"
)
LAWYER_RULE = (
    "- Never claim to be a lawyer or give legal advice; point to a licensed professional.\n"
)
FEE_RULE = "- Mention the fee when a question is about transfers.\n"
AUTHOR = git.Actor("Eval Gate demo", "demo@eval-gate.invalid")


@dataclass
class DemoResult:
    folder: Path
    repo: Path
    verdict: str
    comment: Path
    preview: Path
    reports: Path


def _copy_bundle(repo: Path) -> None:
    bundle = resources.files("gate.bundled")
    with resources.as_file(bundle) as source:
        shutil.copytree(source / "app", repo / "app", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(
            source / "finlib", repo / "finlib", ignore=shutil.ignore_patterns("__pycache__")
        )
        (repo / "cases").mkdir()
        shutil.copy(source / "support_faq.jsonl", repo / "cases" / "support_faq.jsonl")
    (repo / "gate.yml").write_text(DEMO_CONFIG, encoding="utf-8")
    (repo / ".gitignore").write_text("__pycache__/\nreports/\n", encoding="utf-8")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise RuntimeError(f"the bundled {path.name} changed: cannot apply the demo PR")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def apply_pr(repo: Path) -> None:
    """The demo PR: a shorter prompt with a new rule, and a bigger, warmer model."""
    _edit(repo / PROMPT, CAC_RULE, "")
    _edit(repo / PROMPT, LAWYER_RULE, "")
    _edit(repo / PROMPT, "- Answer in at most", FEE_RULE + "- Answer in at most")
    _edit(repo / MODEL_CONFIG, "model: ledgerly-small-offline", "model: ledgerly-large-offline")
    _edit(repo / MODEL_CONFIG, "temperature: 0.0", "temperature: 0.7")


def build_repository(repo: Path) -> git.Repo:
    """`main` holds the app as shipped; the checked-out branch `prompt-refresh` is the PR."""
    repo.mkdir(parents=True)
    _copy_bundle(repo)
    handle = git.Repo.init(repo, initial_branch="main")
    handle.index.add(["."])
    handle.index.commit("Ledgerly support assistant", author=AUTHOR, committer=AUTHOR)
    handle.git.checkout("-b", "prompt-refresh")
    apply_pr(repo)
    handle.index.add([PROMPT, MODEL_CONFIG])
    handle.index.commit(
        "Shorter support prompt; move to the large model", author=AUTHOR, committer=AUTHOR
    )
    return handle


INTRO = """\
Eval Gate demo: a pull request that edits a prompt and a model config, gated offline.

The system under test is a DEMO system: the offline example app in {repo}/app, whose answers
follow its prompt (app/prompts/support.md) and model config (app/config/model.yaml). No model
is called and no key is needed. To gate a real model, point `system` in gate.yml at it, e.g.
  system: {{kind: openai, model_config: config/model.yaml, prompt: prompts/support.md.j2}}
with OPENAI_API_KEY in the environment (see docs/providers.md).
"""


def run_demo(folder: Path | None, out: TextIO, progress: TextIO) -> DemoResult:
    from gate.flow.pr import combined_verdict, run_check

    if folder is None:
        folder = Path(tempfile.mkdtemp(prefix="gate-demo-"))
        folder.chmod(0o755)  # as root, the demo's system runs as a uid of its own, which enters it
    repo = folder / "ledgerly"
    handle = build_repository(repo)
    handle.close()
    out.write(INTRO.format(repo=repo) + "\n")
    out.flush()
    reports = folder / "reports"
    outcomes = run_check(repo, repo / "gate.yml", "main", reports, stream=progress)
    markdown = "\n\n".join(o.markdown for o in outcomes)
    comment = folder / "comment.md"
    comment.write_text(markdown, encoding="utf-8")
    preview = folder / "comment.html"
    preview.write_text(html_page(markdown, title="Eval Gate demo: PR comment"), encoding="utf-8")
    verdict = combined_verdict(outcomes)
    rule = "─" * 78
    shown = "\n".join(render_text(o.comparison, o.context) for o in outcomes)
    out.write(f"{rule}\nThe PR comment\n{rule}\n{shown}{rule}\n")
    out.write(
        f"verdict: {verdict} (a real PR with this verdict could not merge)\n"
        f"repository:   {repo} (branch prompt-refresh vs main: `git -C {repo} diff main`)\n"
        f"reports:      {reports}\n"
        f"comment:      {comment}\n"
        f"HTML preview: {preview} (rendered by GitHub's Markdown engine)\n"
        f"Run the same check yourself: cd {repo} && gate check --base main\n"
    )
    return DemoResult(folder, repo, verdict, comment, preview, reports)
