"""The base's gate.yml, read from the base commit: which suites are new, and whose policy."""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers.servers.git_http import git

from gate.compare.findings import OverrideIgnored
from gate.flow.baseline import flow_policy, policy_findings, read_baseline
from gate.flow.git import GitRepo
from gate.flow.request import PolicyOverrides
from gate.inputs.config import load_config
from gate.render.reasons import sentence

SUITE = {"name": "s", "cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}}


def repo(tmp_path: Path, base: dict | None) -> tuple[GitRepo, str, Path]:
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("x\n")
    if base is not None:
        (root / "gate.yml").write_text(yaml.safe_dump(base))
    git(root, "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    sha = git(root, "rev-parse", "HEAD").strip()
    return GitRepo(root, environ={}), sha, root


def head_config(root: Path, data: dict) -> Path:
    path = root / "gate.yml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_the_bases_policy_judges_and_the_heads_changes_are_a_note(tmp_path: Path) -> None:
    base = {"threshold": 2, "budgets": {"cost_pct": 20}, "suites": [SUITE]}
    git_repo, sha, root = repo(tmp_path, base)
    head = {
        "threshold": 50,
        "block_severities": ["blocker", "major"],
        "budgets": {"cost_pct": 500, "tokens_pct": 50},
        "suites": [SUITE, {**SUITE, "name": "new"}],
    }
    loaded = load_config(head_config(root, head))
    baseline = read_baseline(git_repo, sha, "gate.yml", loaded, git_repo.worktree_path())
    assert baseline.has_suite("s") and not baseline.has_suite("new")
    policy, _ = flow_policy(baseline, loaded)
    assert policy.threshold == 2 and policy.block_severities == ["blocker"]
    assert policy.budgets.cost_pct == 20 and policy.budgets.tokens_pct is None
    stricter = PolicyOverrides(threshold=1, block_severities=("major",))
    policy, notes = flow_policy(baseline, loaded, stricter)  # an override may tighten it
    assert policy.threshold == 1 and policy.block_severities == ["blocker", "major"]
    assert [(n.key, n.asked, n.applied) for n in notes if isinstance(n, OverrideIgnored)] == [
        ("block_severities", ["major"], ["blocker", "major"])  # blocker is the base's: kept
    ]
    looser, (note,) = flow_policy(baseline, loaded, PolicyOverrides(threshold=7))
    assert looser.threshold == 2  # never loosen it
    assert sentence(note).startswith("the override threshold: 7 was not applied as given")
    (finding,) = policy_findings(baseline, loaded)
    words = sentence(finding)
    assert (
        "threshold: 2 → 50" in words and "block_severities: [blocker] → [blocker, major]" in words
    )
    assert "budgets: {cost_pct: 20} → {cost_pct: 500, tokens_pct: 50}" in words
    assert "the base's policy judges it, the head's takes effect after merge" in words


def test_no_gate_yml_on_base_means_the_heads_policy_and_new_suites(tmp_path: Path) -> None:
    git_repo, sha, root = repo(tmp_path, None)
    loaded = load_config(head_config(root, {"threshold": 9, "suites": [SUITE]}))
    baseline = read_baseline(git_repo, sha, "gate.yml", loaded, git_repo.worktree_path())
    assert not baseline.has_suite("s") and flow_policy(baseline, loaded)[0].threshold == 9
    (finding,) = policy_findings(baseline, loaded)
    assert (
        sentence(finding)
        == "the base has no gate.yml, so the head's own instrument and policy judge this PR"
    )


def test_a_broken_base_config_is_reported_not_guessed(tmp_path: Path) -> None:
    git_repo, sha, root = repo(tmp_path, {"threshhold": 3, "suites": [SUITE]})
    loaded = load_config(head_config(root, {"suites": [SUITE]}))
    baseline = read_baseline(git_repo, sha, "gate.yml", loaded, git_repo.worktree_path())
    assert baseline.problem is not None and "threshhold" in baseline.problem
    assert baseline.has_suite("s")  # so the base side runs and fails with the reason
    assert policy_findings(baseline, loaded) == []
