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


def test_docs_link_the_files_instead_of_copying_them() -> None:
    action_md = (ROOT / "docs/action.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for example in EXAMPLES:
        assert f"](../examples/{example.name})" in action_md, example.name
        assert f"](examples/{example.name})" in readme, example.name
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for block in re.findall(r"```ya?ml\n(.*?)```", doc.read_text(), re.S):
            assert not ("jobs:" in block and "runs-on:" in block), f"a workflow copy in {doc}"


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
