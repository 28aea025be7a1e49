"""The release: .ci/release-action-yml points action.yml at the published image, and only at
a version the package says; on main, action.yml builds the Dockerfile (forks, and the image)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ".ci/release-action-yml"


def release_tree(tmp_path: Path, version: str = "1.4.2") -> Path:
    tree = tmp_path / "tree"
    (tree / ".ci").mkdir(parents=True)
    (tree / "gate").mkdir()
    shutil.copy(ROOT / SCRIPT, tree / SCRIPT)
    shutil.copy(ROOT / "action.yml", tree / "action.yml")
    (tree / "gate/__init__.py").write_text(f'"""x"""\n\n__version__ = "{version}"\n')
    return tree


def release(tree: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(tree / SCRIPT), *args], capture_output=True, text=True, check=False
    )


def test_main_builds_the_dockerfile() -> None:
    assert yaml.safe_load((ROOT / "action.yml").read_text())["runs"] == {
        "using": "docker",
        "image": "Dockerfile",
    }


def test_release_commit_runs_the_published_image(tmp_path: Path) -> None:
    tree = release_tree(tmp_path)
    before = yaml.safe_load((tree / "action.yml").read_text())
    done = release(tree, "ghcr.io/acme/eval-gate", "1.4.2")
    assert done.returncode == 0, done.stderr
    after = yaml.safe_load((tree / "action.yml").read_text())
    assert after["runs"] == {"using": "docker", "image": "docker://ghcr.io/acme/eval-gate:1.4.2"}
    assert {k: v for k, v in after.items() if k != "runs"} == {
        k: v for k, v in before.items() if k != "runs"
    }
    again = release(tree, "ghcr.io/acme/eval-gate", "1.4.2")  # already released: refuse
    assert again.returncode == 2 and "image: Dockerfile" in again.stderr


def test_release_refuses_a_version_the_package_does_not_say(tmp_path: Path) -> None:
    tree = release_tree(tmp_path, version="1.4.1")
    original = (tree / "action.yml").read_text()
    for args, message in [
        (("ghcr.io/acme/eval-gate", "1.4.2"), "__version__ is 1.4.1, not 1.4.2"),
        (("ghcr.io/acme/eval-gate", "v1.4.1"), "expected X.Y.Z"),
        (("ghcr.io/Acme/eval-gate:1", "1.4.1"), "lower case, no tag"),
    ]:
        done = release(tree, *args)
        assert done.returncode == 2 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert (tree / "action.yml").read_text() == original
