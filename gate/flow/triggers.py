"""What a suite depends on: the globs whose change makes it run."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import yaml

from gate.flow.git import FileChange
from gate.inputs.config import (
    AnthropicSystem,
    CommandSystem,
    LoadedConfig,
    OpenAISystem,
    PromptfooSystem,
    PythonSystem,
    ReplaySystem,
    SuiteConfig,
)
from gate.inputs.globs import watched
from gate.inputs.paths import relative_posix
from gate.inputs.promptfoo_suite.suites import referenced_files

# --- what a suite depends on ---------------------------------------------------------------


def _model_config_system_file(path: Path, root: Path) -> list[str]:
    """A model config may name a system-prompt file (`system:`); that file matters too."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []
    system = data.get("system") if isinstance(data, dict) else None
    if not isinstance(system, str) or "\n" in system:
        return []
    for candidate in (root / system, path.parent / system):
        if candidate.is_file():
            return [p for p in [relative_posix(candidate, root)] if p]
    return []


def system_files(suite: SuiteConfig, root: Path) -> list[str]:
    """The system's own files in the checkout, as repo-relative paths or globs."""
    system = suite.system
    if isinstance(system, OpenAISystem | AnthropicSystem):
        files = [system.prompt, system.model_config_file]
        return files + _model_config_system_file(root / system.model_config_file, root)
    if isinstance(system, PythonSystem):
        module = system.target.partition(":")[0].replace(".", "/")
        return [f"{module}.py", f"{module}/__init__.py"]
    if isinstance(system, ReplaySystem):
        return [system.file]
    if isinstance(system, CommandSystem) and "/" in system.command[0]:
        return [system.command[0]]
    if isinstance(system, PromptfooSystem):
        return referenced_files(Path(system.config), root)[0]
    return []


def case_globs(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[str]:
    """The suite's case files, as repo-relative paths or globs."""
    config_dir = relative_posix(loaded.base_dir, root) or ""
    prefix = f"{config_dir}/" if config_dir not in ("", ".") else ""
    if isinstance(suite.system, PromptfooSystem):  # its tests, files of the checkout
        return referenced_files(Path(suite.system.config), root)[1]
    cases = [suite.cases] if isinstance(suite.cases, str) else list(suite.cases or [])
    return [prefix + c.removeprefix("./") for c in cases]


def suite_triggers(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[str]:
    """Globs (repo-relative) whose change makes the suite run: `watch` (global and the
    suite's), gate.yml itself, the suite's case files and the system's own files."""
    patterns = [*loaded.config.watch, *suite.watch]
    patterns += [p for p in [relative_posix(loaded.path, root)] if p]
    patterns += case_globs(loaded, suite, root)
    patterns += [f.removeprefix("./") for f in system_files(suite, root)]
    patterns += [f"{p.strip('/')}/**" for p in loaded.config.sandbox.pythonpath]
    return list(dict.fromkeys(patterns))


def relevant_changes(changes: Sequence[FileChange], patterns: Sequence[str]) -> list[FileChange]:
    return [c for c in changes if any(watched(p, patterns) for p in c.paths)]
