"""What a suite depends on: the globs whose change makes it run.

Change detection sees what the system reads: a chat system's prompt and everything it
includes, imports or extends, its model config and system-prompt file; a `python` target's
module and its import closure inside the repository (`gate.flow.imports`: read, never run); a
`command` system's arguments that are files of the checkout (a Python script's imports too);
a replay file; an inspect or pytest suite's instrument and what its Python files import. Each
such path that is, or lies under, a symlink inside the repository is also watched at its
target (a symlinked prompt or folder whose target changed). A suite runs when a change matches
the head's triggers or the base's `watch` (`base_watch`), each read on its own: a PR that
narrows `watch`, or adds a `!pattern`, cannot skip itself. A submodule's new commit is a
change of everything below its folder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from gate.errors import InputError
from gate.flow.git import FileChange
from gate.flow.imports import import_closure, module_files
from gate.frameworks.instrument import checkout_files, instrument_globs
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
from gate.inputs.framework_suites import InspectSystem, PytestSystem
from gate.inputs.globs import reaches_below, watched
from gate.inputs.paths import relative_posix
from gate.promptfoo.inputs.suites import referenced_files
from gate.providers.prompt_sources import PromptSources

EVERYTHING = "**"  # what a suite whose files cannot be read watches: it runs, and says why
WILDCARDS = "*?["

# --- what a suite depends on ---------------------------------------------------------------


def _model_config_system_file(path: Path, root: Path) -> list[Path]:
    """A model config may name a system-prompt file (`system:`); that file matters too."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return []
    system = data.get("system") if isinstance(data, dict) else None
    if not isinstance(system, str) or "\n" in system:
        return []
    return [c for c in (root / system, path.parent / system) if c.is_file()][:1]


def _template_files(path: Path, root: Path) -> list[str]:
    """A prompt template and what it loads (missing optional names too: adding one counts)."""
    if not path.is_file():
        return []
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    display = relative_posix(path, root) or str(path)
    try:
        sources = PromptSources(ImmutableSandboxedEnvironment(), root, path, display, str)
    except InputError:
        return [EVERYTHING]  # a broken prompt: the run names the problem
    return [*_relative(sources.files, root), *sources.missing]


def _relative(paths: Iterable[Path], root: Path) -> list[str]:
    return [p for p in (relative_posix(path, root) for path in paths) if p]


def _chat_files(system: OpenAISystem | AnthropicSystem, root: Path) -> list[str]:
    config = root / system.model_config_file
    files = [system.prompt, system.model_config_file]
    for template in [root / system.prompt, *_model_config_system_file(config, root)]:
        files += _template_files(template, root)
    return files


def _python_files(target: str, roots: list[Path], root: Path) -> list[str]:
    module = target.partition(":")[0]
    declared = module.replace(".", "/")
    closure = import_closure(module_files(module, roots), roots, root)
    return [f"{declared}.py", f"{declared}/__init__.py", *_relative(closure, root)]


def _command_files(command: list[str], roots: list[Path], root: Path) -> list[str]:
    """The program and every argument that is a file of the checkout (`x.py`, `--cfg=y.yaml`),
    a Python script's imports and an `-m module`'s too."""
    files: list[Path] = []
    for index, arg in enumerate(command):
        if index and command[index - 1] == "-m":
            files += import_closure(module_files(arg, roots), roots, root)
            continue
        value = arg.partition("=")[2] if arg.startswith("-") else arg
        path = root / value.removeprefix("./")
        if value and not value.startswith("{") and path.is_file():
            found = import_closure([path], [path.parent, *roots], root)
            files += found if path.suffix == ".py" else [path]
    first = command[0].removeprefix("./")
    return ([first] if "/" in command[0] else []) + _relative(files, root)


def _framework_files(suite: SuiteConfig, roots: list[Path], root: Path) -> list[str]:
    """An inspect or pytest suite: its instrument's globs and what the instrument's Python
    files import from the checkout (the system's code: a prompt it reads needs `watch`)."""
    globs = instrument_globs(suite)
    code = [root / f for f in checkout_files(root) if f.endswith(".py") and watched(f, globs)]
    folders = list(dict.fromkeys(p.parent for p in code))
    return [*globs, *_relative(import_closure(code, [*roots, *folders], root), root)]


def system_files(suite: SuiteConfig, root: Path, pythonpath: Sequence[str] = ()) -> list[str]:
    """The system's own files in the checkout and what they read, as repo-relative paths or
    globs; `pythonpath` (`sandbox.pythonpath`) is searched for imported modules too."""
    system, root = suite.system, root.resolve()
    roots = [root, *(root / entry for entry in pythonpath)]
    files: list[str] = []
    if isinstance(system, OpenAISystem | AnthropicSystem):
        files = _chat_files(system, root)
    elif isinstance(system, PythonSystem):
        files = _python_files(system.target, roots, root)
    elif isinstance(system, ReplaySystem):
        files = [system.file]
    elif isinstance(system, CommandSystem):
        files = _command_files(system.command, roots, root)
    elif isinstance(system, PromptfooSystem):  # the config and its prompts', providers' files
        files = referenced_files(Path(system.config), root)[0]
    elif isinstance(system, InspectSystem | PytestSystem):
        files = _framework_files(suite, roots, root)
    return list(dict.fromkeys(f.removeprefix("./") for f in files))


def through_symlinks(pattern: str, root: Path) -> str | None:
    """`pattern` with its literal folders or file resolved, when a symlink inside the
    repository leads elsewhere in it (`prompts/**` → `shared/prompts/**`); else None."""
    parts = pattern.strip("/").split("/")
    literal = 0
    while literal < len(parts) and not any(c in parts[literal] for c in WILDCARDS):
        literal += 1
    if literal == 0:
        return None
    real = relative_posix(root.joinpath(*parts[:literal]), root)
    if real is None or real == "/".join(parts[:literal]):
        return None
    return "/".join([real, *parts[literal:]])


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
    suite's), gate.yml itself, the suite's case files, the system's own files and what they
    read, each also at its symlink's target."""
    pythonpath = loaded.config.sandbox.pythonpath
    patterns = [*loaded.config.watch, *suite.watch]
    patterns += [p for p in [relative_posix(loaded.path, root)] if p]
    patterns += case_globs(loaded, suite, root)
    patterns += system_files(suite, root, pythonpath)
    patterns += [f"{p.strip('/')}/**" for p in pythonpath]
    resolved = [through_symlinks(p, root) for p in patterns if not p.startswith("!")]
    return list(dict.fromkeys([*patterns, *(p for p in resolved if p)]))


def base_watch(base: LoadedConfig | None, suite: str) -> list[str]:
    """The base's `watch` for the suite (global and the suite's own): it keeps watching what
    the base watched whatever the head's `watch` says."""
    if base is None:
        return []
    own = next((s.watch for s in base.config.suites if s.name == suite), [])
    return [*base.config.watch, *own]


def relevant_changes(
    changes: Sequence[FileChange], patterns: Sequence[str], *more: Sequence[str]
) -> list[FileChange]:
    """The changes some group of patterns watches; each group's `!pattern`s exclude only
    within that group. A submodule's new commit changes everything below it: it counts for a
    pattern that matches its folder or may match inside it (`reaches_below`)."""
    groups = [patterns, *more]
    return [c for c in changes if any(_touches(c, g) for g in groups)]


def _touches(change: FileChange, group: Sequence[str]) -> bool:
    if any(watched(path, group) for path in change.paths):
        return True
    return change.submodule and any(
        reaches_below(pattern, path) for pattern in group for path in change.paths
    )
