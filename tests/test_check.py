"""`gate check`: the PR flow on a local repository, as a developer runs it before pushing."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers.cli import clean_env, gate_completed
from helpers.flows import rendered
from helpers.servers.git_http import Author, git, make_bare
from helpers.servers.world import REPO_ROOT, WORDS, project_files, prompt

from gate.flow.pr import SuiteOutcome, run_check
from gate.flow.triggers import suite_triggers
from gate.inputs.config import load_config

MARKER = "<!-- eval-gate -->"


def gate(*args: str, cwd: Path, real: bool = False) -> subprocess.CompletedProcess[str]:
    """`gate ARGS` as a developer runs it in `cwd`: in-process, or with `real` the executable
    (`helpers.cli.gate_completed`)."""
    return gate_completed(*args, cwd=cwd, environ=clean_env(cwd), real=real)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A developer's clone: origin/HEAD -> main, which holds the project."""
    origin = make_bare(tmp_path / "origin.git")
    author = Author(tmp_path / "seed", origin)
    git(author.path, "checkout", "-q", "-B", "main")
    author.commit("project", project_files("base", WORDS))
    author.push("HEAD:main")
    git(tmp_path, "clone", "-q", str(origin), "dev")
    return tmp_path / "dev"


def test_uncommitted_regression_fails_and_prints_the_comment(clone: Path) -> None:
    git(clone, "checkout", "-q", "-b", "my-change")
    (clone / "prompts" / "support.md").write_text(prompt([w for w in WORDS if w != "fees"]))
    done = gate("check", cwd=clone, real=True)
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith(MARKER) and "faq\\-002" in done.stdout
    assert "support: fail: pass rate 100.0% -> 83.3% (−16.7 points), 1 regressions" in done.stderr
    assert "verdict: fail" in done.stderr
    assert (clone / ".eval-gate/reports" / "support" / "base.jsonl").is_file()
    assert (clone / ".eval-gate/reports" / "support" / "head.jsonl").is_file()
    assert git(clone, "worktree", "list").count("\n") == 0


def test_html_preview_is_the_printed_comment_rendered_as_github_does(clone: Path) -> None:
    from gate.render.preview import html_page

    git(clone, "checkout", "-q", "-b", "my-change")
    (clone / "prompts" / "support.md").write_text(prompt([w for w in WORDS if w != "fees"]))
    page = clone.parent / "preview.html"
    done = gate("check", "--html", str(page), cwd=clone)
    assert done.returncode == 1, done.stderr
    assert f"HTML preview: {page}" in done.stderr
    html = page.read_text()
    assert html == html_page(done.stdout[:-1], title="Eval Gate: PR comment")
    assert "<details>" in html and "faq-002" in html and "<table>" in html
    bad = gate("check", "--html", str(clone / "missing" / "p.html"), cwd=clone)
    assert bad.returncode == 2 and "key `--html`: cannot write" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_nothing_watched_changed_is_skipped(clone: Path) -> None:
    (clone / "README.md").write_text("# app\n\nedited\n")
    done = gate("check", cwd=clone)
    assert done.returncode == 0, done.stderr
    assert "support: skipped: no watched file changed (1 changed" in done.stderr
    assert not (clone / ".eval-gate/reports").exists()


def test_reports_folder_is_not_a_change(clone: Path) -> None:
    (clone / "prompts" / "support.md").write_text(prompt(WORDS) + "say: extra\n")
    assert gate("check", cwd=clone).returncode == 0
    (clone / "prompts" / "support.md").write_text(prompt(WORDS))  # back to the base
    done = gate("check", cwd=clone)  # the first check's reports are in the default --out
    assert done.returncode == 0 and "no file changed between the base and the head" in done.stderr


def test_explicit_base_and_threshold(clone: Path) -> None:
    first = git(clone, "rev-parse", "HEAD")
    (clone / "prompts" / "support.md").write_text(prompt([w for w in WORDS if w != "card"]))
    git(clone, "commit", "-qam", "drop card", env={"GIT_AUTHOR_NAME": "A"})
    done = gate("check", "--base", first, "--threshold", "20", cwd=clone)
    assert done.returncode == 1, done.stderr  # a flag only tightens: the base's 3 judges
    assert "support: fail:" in done.stderr
    assert "the override threshold: 20 was not applied as given" in done.stdout
    assert gate("check", "--base", "HEAD", cwd=clone).returncode == 0  # nothing changed


def test_unknown_base_is_one_line_exit_2(clone: Path) -> None:
    done = gate("check", "--base", "no-such-branch", cwd=clone, real=True)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gate: error: key `base-ref`: base ref 'no-such-branch' not found"
    ]


def test_no_default_branch_asks_for_base(tmp_path: Path) -> None:
    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    for name, content in project_files("base", WORDS).items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(content or "")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "x")
    done = gate("check", cwd=repo, real=True)
    assert done.returncode == 2 and "pass --base" in done.stderr


def test_head_side_input_error_is_exit_2_with_its_message(clone: Path) -> None:
    (clone / "gate.yml").write_text(
        (clone / "gate.yml").read_text().replace("app.bot:answer", "app.missing:answer")
    )
    done = gate("check", cwd=clone)
    assert done.returncode == 2, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("gate: error: ") and "app.missing" in last
    assert "Traceback" not in done.stderr


def test_a_pr_that_brings_the_suite_in_is_judged_on_the_head_alone(tmp_path: Path) -> None:
    """The base has no gate.yml: the suite is new, only the head runs and its failures decide."""
    origin = make_bare(tmp_path / "origin.git")
    author = Author(tmp_path / "seed", origin)
    git(author.path, "checkout", "-q", "-B", "main")
    author.commit("readme only", {"README.md": "# app\n"})
    author.push("HEAD:main")
    git(tmp_path, "clone", "-q", str(origin), "dev")
    dev = tmp_path / "dev"
    files = project_files("head", WORDS)
    for name, content in files.items():
        (dev / name).parent.mkdir(parents=True, exist_ok=True)
        (dev / name).write_text(content or "")
    done = gate("check", cwd=dev)
    assert done.returncode == 0, done.stderr
    shown = done.stdout.replace("\\", "")
    assert "this suite is new" in shown and "no baseline" in shown
    assert "[base]" not in done.stderr and "running head (a new suite)" in done.stderr
    assert "support: pass" in done.stderr
    # a blocker failing on the head still fails it
    rows = (
        (dev / "cases" / "support.jsonl")
        .read_text()
        .replace('"severity": "major"', '"severity": "blocker"', 1)
    )
    (dev / "cases" / "support.jsonl").write_text(rows)
    (dev / "prompts" / "support.md").write_text(prompt(WORDS[1:]))
    assert gate("check", cwd=dev).returncode == 1


def test_run_check_is_the_demo_entry_point(clone: Path, tmp_path: Path) -> None:
    (clone / "prompts" / "support.md").write_text(prompt([w for w in WORDS if w != "CAC"]))
    log = io.StringIO()
    flow = run_check(
        clone, clone / "gate.yml", None, tmp_path / "out", stream=log,
        environ={**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")},
    )  # fmt: skip
    (outcome,) = flow.suites
    assert isinstance(outcome, SuiteOutcome) and flow.verdict == "fail" and flow.exit_code == 1
    assert outcome.suite == "support" and outcome.comparison.verdict == "fail"
    assert outcome.comparison.regressions == ["faq-001"]
    (shown,) = rendered(flow)
    assert shown.markdown.startswith(MARKER)
    assert "[base]" in log.getvalue() and "[head]" in log.getvalue()
    assert outcome.changes == ("M prompts/support.md",)
    assert set(outcome.reports) == {"base", "head"}
    assert all(path.is_file() for path in outcome.reports.values())


def test_triggers_cover_config_cases_and_system_files(tmp_path: Path) -> None:
    (tmp_path / "evals").mkdir()
    config = tmp_path / "evals" / "gate.yml"
    config.write_text(
        "watch: ['prompts/**']\n"
        "sandbox: {pythonpath: [lib]}\n"
        "suites:\n"
        "  - {name: a, cases: 'cases/*.jsonl', watch: ['docs/faq.md'],\n"
        "     system: {kind: python, target: 'app.bot:answer'}}\n"
        "  - {name: b, cases: [x.jsonl], system: {kind: command, command: ['./run.sh']}}\n"
        "  - {name: c, cases: y.jsonl, system: {kind: openai, model_config: cfg/m.yaml,\n"
        "     prompt: p/s.j2}}\n"
        "  - {name: d, cases: z.jsonl, system: {kind: replay, file: rec/z.jsonl}}\n"
    )
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "m.yaml").write_text("model: m\nsystem: p/system.md\n")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "system.md").write_text("be kind")
    loaded = load_config(config)
    a, b, c, d = (suite_triggers(loaded, s, tmp_path) for s in loaded.config.suites)
    assert a == [
        "prompts/**", "docs/faq.md", "evals/gate.yml", "evals/cases/*.jsonl",
        "app/bot.py", "app/bot/__init__.py", "lib/**",
    ]  # fmt: skip
    assert "./run.sh" not in b and "run.sh" in b and "evals/x.jsonl" in b
    assert {"p/s.j2", "cfg/m.yaml", "p/system.md", "evals/y.jsonl"} <= set(c)
    assert "rec/z.jsonl" in d


def _processes_mentioning(*texts: str) -> list[int]:
    """The processes whose command line holds every one of `texts`."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
            if all(text in cmdline for text in texts):
                found.append(int(proc.name))
    return found


def test_sigterm_stops_the_runs_and_removes_the_base_worktree(clone: Path) -> None:
    slow = project_files("base", WORDS)["app/bot.py"].replace(
        "def answer(inputs):", "def answer(inputs):\n    import time; time.sleep(60)"
    )
    (clone / "app" / "bot.py").write_text(slow)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update({"PYTHONPATH": str(REPO_ROOT), "GATE_CACHE_DIR": str(clone.parent / "cache")})
    proc = subprocess.Popen(
        [sys.executable, "-m", "gate", "check"], cwd=clone, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # Both sides are running: the head's system (its worker names the clone as its root, and
    # sleeps in its first answer) and the base's, in its temporary worktree.
    head_system = ("worker_main", f'"root": "{clone}"')
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (
        _processes_mentioning(*head_system) and _processes_mentioning("gate-base-")
    ):
        time.sleep(0.1)
    assert _processes_mentioning(*head_system), "the head's system never started"
    assert _processes_mentioning("gate-base-"), "the base side never started"
    proc.terminate()
    stopping = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    # at once: a cancelled job gets a few seconds before SIGKILL, a busy side is not waited on
    assert time.monotonic() - stopping < 10
    assert _processes_mentioning(str(clone)) == []
    assert git(clone, "worktree", "list").count("\n") == 0
    assert not list((clone / ".git").glob("worktrees/*"))
