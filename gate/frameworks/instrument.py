"""What measures an inspect or pytest suite: the files its `instrument:` globs name (default:
the task's folder; the test paths and every conftest.py above them), and the pytest
configuration the base's checkout holds.

Both sides run the base's version of those files against their own code (`overlay`), so a PR
that loosens a scorer or a test is measured by the base's; `changed_files` lists what the PR
edits in them for the comment.
"""

from __future__ import annotations

import configparser
import os
import tomllib
from pathlib import Path, PurePosixPath

from gate.inputs.config import SuiteConfig
from gate.inputs.framework_suites import InspectSuite, PytestSuite
from gate.inputs.globs import watched

# Folders never copied into a run folder nor read as instrument: git's, caches, environments.
SKIPPED = {".git", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".ruff_cache",
           ".pytest_cache", ".tox", ".eval-gate", ".inspect"}  # fmt: skip
PYTEST_CONFIGS = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")


def default_globs(settings: InspectSuite | PytestSuite) -> list[str]:
    """inspect: the task file's folder (the task alone when it lies at the root); pytest:
    each test path (a folder's files, or the file) and the conftest.py of every folder from
    the root down to it."""
    if isinstance(settings, InspectSuite):
        folder = PurePosixPath(settings.file).parent
        return [settings.file] if str(folder) == "." else [f"{folder}/**"]
    globs: list[str] = []
    for path in settings.paths:
        pure = PurePosixPath(path)
        is_file = pure.suffix == ".py"
        globs.append(path if is_file else ("**" if path == "." else f"{path}/**"))
        folder = pure.parent if is_file else pure
        for parent in [folder, *folder.parents]:
            globs.append("conftest.py" if str(parent) == "." else f"{parent}/conftest.py")
    return list(dict.fromkeys(globs))


def instrument_globs(suite: SuiteConfig) -> list[str]:
    """The suite's `instrument:`, else its framework's defaults."""
    if suite.instrument is not None:
        return list(suite.instrument)
    settings = suite.inspect or suite.pytest
    assert settings is not None, "not a suite of another framework"
    return default_globs(settings)


def checkout_files(root: Path) -> list[str]:
    """Every file and symlink of a checkout (repo-relative, posix), outside `SKIPPED`;
    symlinks to folders are listed, never followed."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        links = [d for d in dirs if (here / d).is_symlink()]
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and d not in links)
        for name in sorted([*files, *links]):
            found.append((here / name).relative_to(root).as_posix())
    return found


def instrument_files(root: Path, globs: list[str]) -> dict[str, bytes]:
    """The instrument's files of a checkout and their content (a symlink: its target)."""
    files: dict[str, bytes] = {}
    for rel in checkout_files(root):
        if watched(rel, globs):
            path = root / rel
            files[rel] = (
                b"symlink -> " + os.readlink(path).encode()
                if path.is_symlink()
                else path.read_bytes()
            )
    return files


def pytest_config(root: Path, paths: list[str]) -> tuple[str, str] | None:
    """The pytest configuration of a checkout, as pytest finds it for `paths` (from their
    common folder up to the root): the file's name and its pytest section's text."""
    common = Path(os.path.commonpath([str(root / p) for p in paths])) if paths else root
    folder = common if common.is_dir() else common.parent
    while True:
        for name in PYTEST_CONFIGS:
            section = _pytest_section(folder / name)
            if section is not None:
                rel = (folder / name).relative_to(root).as_posix()
                return rel, section
        if folder == root or root not in folder.parents:
            return None
        folder = folder.parent


def _pytest_section(path: Path) -> str | None:
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name in ("pytest.ini", ".pytest.ini"):
        return text
    if path.name == "pyproject.toml":
        try:
            tool = tomllib.loads(text).get("tool", {})
        except tomllib.TOMLDecodeError:
            return None
        pytest = tool.get("pytest") if isinstance(tool, dict) else None
        return repr(pytest) if pytest else None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    section = "pytest" if path.name == "tox.ini" else "tool:pytest"
    return repr(dict(parser[section])) if parser.has_section(section) else None


def changed_files(base_root: Path, head_root: Path, globs: list[str]) -> list[str]:
    """The instrument's files the head adds, removes or edits."""
    before, after = instrument_files(base_root, globs), instrument_files(head_root, globs)
    return sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
