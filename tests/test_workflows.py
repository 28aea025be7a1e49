"""The workflow files: examples/ and .github/workflows/ are real, pinned and documented by link
(no copies inside Markdown to drift); zizmor finds nothing in them (.ci/run also runs
actionlint)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yml"))
WORKFLOWS = [*EXAMPLES, *sorted((ROOT / ".github/workflows").glob("*.yml"))]
SHA_PIN = re.compile(r"[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}  # v\d+\.\d+\.\d+")


def uses_of(workflow: Path) -> list[str]:
    data = yaml.safe_load(workflow.read_text())
    return [
        step["uses"]
        for job in data["jobs"].values()
        for step in job.get("steps", [])
        if "uses" in step
    ]


def test_the_five_kinds_of_workflow_exist_and_parse() -> None:
    names = {path.name for path in EXAMPLES}
    assert names == {
        "pr-gate.yml", "fork-pr.yml", "fork-comment.yml", "sharded.yml", "merge-queue.yml",
        "push-main.yml",
    }  # fmt: skip
    triggers = {p.name: set(yaml.safe_load(p.read_text())[True]) for p in WORKFLOWS}
    assert triggers["fork-comment.yml"] == {"workflow_run"}
    assert "merge_group" in triggers["merge-queue.yml"]
    assert triggers["push-main.yml"] == {"push", "workflow_dispatch"}
    assert {"ci.yml", "release.yml"} <= set(triggers)


def test_actions_are_pinned_to_commits_and_the_gate_to_a_release() -> None:
    for workflow in WORKFLOWS:
        for uses in uses_of(workflow):
            line = next(x for x in workflow.read_text().splitlines() if f"uses: {uses}" in x)
            if uses.startswith("eval-gate/eval-gate@"):
                assert uses == "eval-gate/eval-gate@v1", workflow.name
            else:
                assert SHA_PIN.search(line), f"{workflow.name}: {line.strip()}"


def workflow_blocks(doc: Path) -> list[str]:
    blocks = re.findall(r"```ya?ml\n(.*?)```", doc.read_text(), re.S)
    return [block for block in blocks if "jobs:" in block and "runs-on:" in block]


def test_docs_link_the_files_instead_of_copying_them() -> None:
    action_md = (ROOT / "docs/action.md").read_text()
    for example in EXAMPLES:
        assert f"](../examples/{example.name})" in action_md, example.name
    assert "](examples/pr-gate.yml)" in (ROOT / "README.md").read_text()
    for doc in sorted((ROOT / "docs").glob("*.md")):
        assert workflow_blocks(doc) == [], f"a workflow copy in {doc}"


def test_the_readmes_workflow_is_the_minimal_gate_with_steps_left_out() -> None:
    """The README shows the workflow on the page (a newcomer needs no other): the file `gate
    init` writes, with the cache and upload steps left out and nothing else changed, so it
    cannot drift from the file CI lints."""
    (block,) = workflow_blocks(ROOT / "README.md")
    shown = yaml.safe_load(block)
    full = yaml.safe_load((ROOT / "examples/pr-gate.yml").read_text())
    assert {k: v for k, v in shown.items() if k != "jobs"} == {
        k: v for k, v in full.items() if k not in ("jobs", "concurrency")
    }
    (job,) = shown["jobs"].values()
    full_job = full["jobs"]["gate"]
    assert {k: v for k, v in job.items() if k != "steps"} == {
        k: v for k, v in full_job.items() if k != "steps"
    }
    steps = full_job["steps"]
    assert all(step in steps for step in job["steps"])
    assert [s["uses"].split("@")[0] for s in job["steps"]] == [
        "actions/checkout",
        "eval-gate/eval-gate",
    ]
    for line in block.splitlines():  # the same pins, with their version comments
        if "uses:" in line:
            assert line in (ROOT / "examples/pr-gate.yml").read_text().splitlines()


def test_the_release_workflow_tests_the_image_before_pushing_it() -> None:
    release = yaml.safe_load((ROOT / ".github/workflows/release.yml").read_text())
    steps = [step.get("run", "") for step in release["jobs"]["release"]["steps"]]
    tested = next(i for i, run in enumerate(steps) if ".ci/container-test" in run)
    pushed = next(i for i, run in enumerate(steps) if "podman push" in run)
    tagged = next(i for i, run in enumerate(steps) if "git push" in run)
    assert tested < pushed < tagged
    assert "GATE_PULL_BASE=1" in steps[tested]  # the real base, never the local stand-in
    assert release["jobs"]["release"]["permissions"] == {"contents": "write", "packages": "write"}


def test_zizmor_finds_nothing() -> None:
    zizmor = shutil.which("zizmor") or str(Path(sys.executable).parent / "zizmor")
    if not Path(zizmor).exists():
        pytest.skip("zizmor is not installed (pip install zizmor)")
    done = subprocess.run(
        [zizmor, "--offline", "--quiet", "--config", str(ROOT / ".github/zizmor.yml"),
         *map(str, WORKFLOWS)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
