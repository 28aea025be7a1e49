"""Which file is the instrument: the base commit's config at the path the workflow names,
read from the commit's objects. A PR that turns `gate.yml` into a symlink to a config of its
own (its instrument, its policy) does not move where the base's is read, so its regression is
measured by the base's instrument and fails, under `gate check` and `gate action`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml
from helpers.cli import gate_here
from helpers.pr_comment import section, the_comment
from helpers.pr_scenarios import base_files, config, drop, dump, make_project
from helpers.servers.git_http import git
from helpers.servers.world import World


def own_config() -> str:
    """The head's own config beside the symlink: the same suites, paths from `evals/`, and a
    policy that lets a 20-point drop through."""
    data: dict[str, Any] = config(threshold=50)
    for suite in data["suites"]:
        suite["cases"] = f"../{suite['cases']}"
    data["watch"] = ["../prompts/**"]
    return dump(data)


def link_the_config(root: Path) -> None:
    """`gate.yml` becomes a symlink to `evals/gate.yml`, the PR's own."""
    (root / "evals").mkdir(exist_ok=True)
    (root / "evals" / "gate.yml").write_text(own_config())
    (root / "gate.yml").unlink()
    os.symlink("evals/gate.yml", root / "gate.yml")


REGRESSION = {"prompts/support.md": drop("fees", "hours", "refund")["prompt"]}


def test_a_symlinked_config_does_not_move_the_bases_instrument(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo", base_files())
    link_the_config(project.path)
    project.write(REGRESSION)
    git(project.path, "add", "-A")
    assert yaml.safe_load((project.path / "gate.yml").read_text())["threshold"] == 50
    done = gate_here("check", "--base", "main", cwd=project.path)
    assert done.code == 1, done.err
    assert "this suite is new" not in done.out and "no baseline" not in done.out
    assert "support: fail: pass rate" in done.err


def test_the_first_pr_rule_needs_a_base_without_the_config(tmp_path: Path) -> None:
    """The first-PR rule applies only when the base commit has no file at the named path."""
    files = {k: v for k, v in base_files().items() if k != "gate.yml"}
    project = make_project(tmp_path / "repo", files)
    project.write({"gate.yml": dump(config())})
    done = gate_here("check", "--base", "main", cwd=project.path)
    assert done.code == 0, done.err
    assert "the base has no `gate.yml`" in done.out or "no gate.yml" in done.out


def test_the_action_reads_the_bases_config_at_the_named_path(world: World) -> None:
    world.base(base_files())
    git(world.author.path, "checkout", "-q", "-B", "feature", world.base_sha)
    link_the_config(world.author.path)
    world.pr(REGRESSION, "my own gate.yml")
    world.checkout()
    run = world.run_here(world.environ(world.event()))
    assert run.code == 1, run.log
    assert run.outputs["verdict"] == "fail"
    body = section(the_comment(world.comments()), "support")
    assert "❌ **Eval Gate: fail** (support)" in body
