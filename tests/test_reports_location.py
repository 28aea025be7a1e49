"""Where `gate check` writes its reports: .eval-gate/reports, a folder the .gitignore that
`gate init` writes ignores, so a check leaves the repository's status as it found it."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.cli import gate_here, run_gate
from helpers.servers.git_http import git
from helpers.support_bot import adopt, real_cases, regressing_pr, support_bot

from gate.init.gitignore import GATE_FOLDER, ignore_gate_folder


def test_gate_check_writes_its_reports_where_gate_init_ignores_them(tmp_path: Path) -> None:
    repo = support_bot(tmp_path / "repo")
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = run_gate("init", cwd=repo, env=env)
    assert done.code == 0, done.err
    assert "wrote .gitignore (.eval-gate/)" in done.out
    real_cases(repo, "evals/cases.jsonl")
    adopt(repo)
    regressing_pr(repo)
    checked = gate_here("check", "--base", "main", cwd=repo, env=env)
    assert checked.code == 1 and "verdict: fail" in checked.err, checked.err
    for side in ("base", "head"):
        assert (repo / ".eval-gate/reports/app" / f"{side}.jsonl").is_file()
    assert not (repo / "reports").exists()
    # the check changed nothing git sees but the PR's own edit
    assert git(repo, "status", "--porcelain") == "M bot/prompts/support.txt"
    # --out still decides (the stable `gate run --out` is untouched: test_run.py)
    elsewhere = tmp_path / "out"
    again = gate_here("check", "--base", "main", "--out", str(elsewhere), cwd=repo, env=env)
    assert again.code == 1, again.err
    assert (elsewhere / "app/head.jsonl").is_file()


def ignored(repo: Path, path: str) -> bool:
    done = subprocess.run(["git", "-C", str(repo), "check-ignore", "-q", path], check=False)
    return done.returncode == 0


def test_init_adds_the_folder_to_an_existing_gitignore_once(tmp_path: Path) -> None:
    repo = support_bot(tmp_path / "repo")
    (repo / ".gitignore").write_text("node_modules/\n*.log")  # no newline at the end
    first = run_gate("init", cwd=repo)
    assert first.code == 0, first.err
    assert "added .eval-gate/ to .gitignore" in first.out
    lines = (repo / ".gitignore").read_text().splitlines()
    assert lines[:2] == ["node_modules/", "*.log"] and lines[-1] == GATE_FOLDER
    assert ignored(repo, ".eval-gate/reports/app/base.jsonl")
    assert ignored(repo, ".eval-gate/cache/ab/cd.json")
    again = run_gate("init", "--force", cwd=repo)
    assert again.code == 0, again.err
    assert ".gitignore" not in again.out
    assert (repo / ".gitignore").read_text().splitlines() == lines


def test_a_line_that_already_ignores_the_folder_is_kept(tmp_path: Path) -> None:
    for spelling in ("/.eval-gate", ".eval-gate/", "  .eval-gate  "):
        (tmp_path / ".gitignore").write_text(f"build/\n{spelling}\n")
        assert ignore_gate_folder(tmp_path) is None
        assert (tmp_path / ".gitignore").read_text() == f"build/\n{spelling}\n"
    (tmp_path / ".gitignore").write_text("# .eval-gate/ is not ignored by a comment\n")
    assert ignore_gate_folder(tmp_path) == "added .eval-gate/ to .gitignore"
