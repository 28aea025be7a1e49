"""The base's gate.yml, read from the base commit: which suites are new, and whose policy."""

from __future__ import annotations

from pathlib import Path

import yaml
from helpers.servers.git_http import git

from gate.flow.baseline import flow_policy, policy_findings, read_baseline
from gate.flow.git import GitRepo
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
    baseline = read_baseline(git_repo, sha, loaded)
    assert baseline.has_suite("s") and not baseline.has_suite("new")
    policy = flow_policy(baseline, loaded)
    assert policy.threshold == 2 and policy.block_severities == ["blocker"]
    assert policy.budgets.cost_pct == 20 and policy.budgets.tokens_pct is None
    assert flow_policy(baseline, loaded, threshold=7).threshold == 7  # an explicit override
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
    baseline = read_baseline(git_repo, sha, loaded)
    assert not baseline.has_suite("s") and flow_policy(baseline, loaded).threshold == 9
    (finding,) = policy_findings(baseline, loaded)
    assert (
        sentence(finding)
        == "the base has no gate.yml, so the head's own instrument and policy judge this PR"
    )


def test_a_broken_base_config_is_reported_not_guessed(tmp_path: Path) -> None:
    git_repo, sha, root = repo(tmp_path, {"threshhold": 3, "suites": [SUITE]})
    loaded = load_config(head_config(root, {"suites": [SUITE]}))
    baseline = read_baseline(git_repo, sha, loaded)
    assert baseline.problem is not None and "threshhold" in baseline.problem
    assert baseline.has_suite("s")  # so the base side runs and fails with the reason
    assert policy_findings(baseline, loaded) == []
