"""What `gate run` would reject, found before anything runs: `gate validate` reports all of it.

- the files a system names (model config, system prompt, prompt template, replay file) are
  missing from the checkout: the error names `gate.yml:LINE` and the suite;
- a prompt template that does not compile, or does not render for some case's input (an
  undefined variable): the error names the template or the case's file and line;
- a `sandbox.pythonpath` entry that is not a folder of the checkout;
- a `python` system whose `target` does not import from the checkout (tried in a fresh
  interpreter, so the gate's own process never imports the team's code);
- an `expect.python` check whose module is in neither `sandbox.pythonpath` nor the checkout
  (looked up as files: the check's code runs only in the sandbox);
- tools in a model config that Anthropic has no equivalent for, on an Anthropic side;
- a promptfoo suite's prompt that does not compile or render for some test's vars.

`unchecked_cases` finds the cases with no expectation at all (they always pass): `gate
validate` warns about them.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gate.checks import plan_case
from gate.errors import GateError, InputError
from gate.inputs.cases import Case
from gate.inputs.config import (
    AnthropicSystem,
    LoadedConfig,
    OpenAISystem,
    PromptfooSystem,
    PythonSystem,
    ReplaySystem,
    SuiteConfig,
)

IMPORT_TIMEOUT_S = 30.0
IMPORT_PROBE = """
import importlib, sys
sys.path.insert(0, sys.argv[1])
module, _, name = sys.argv[2].partition(":")
if not callable(getattr(importlib.import_module(module), name, None)):
    raise SystemExit(f"{module} has no function {name!r}")
"""


def _missing(root: Path, name: str) -> bool:
    path = (root / name).resolve()
    return not (path.is_relative_to(root.resolve()) and path.is_file())


def system_files_problems(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[InputError]:
    """Files the suite's system names that the checkout lacks, each named at its gate.yml line."""
    system = suite.system
    named: list[tuple[str, str]] = []
    if isinstance(system, OpenAISystem | AnthropicSystem):
        named = [("model_config", system.model_config_file), ("prompt", system.prompt)]
    elif isinstance(system, ReplaySystem):
        named = [("file", system.file)]
    return [
        InputError(
            f"suite {suite.name!r}: file {value!r} not found in checkout {root}",
            file=loaded.path,
            line=loaded.suite_line(suite.name, "system", key),
            key=f"system.{key}",
        )
        for key, value in named
        if _missing(root, value)
    ]


def pythonpath_problems(loaded: LoadedConfig, root: Path) -> list[InputError]:
    problems = []
    for index, entry in enumerate(loaded.config.sandbox.pythonpath):
        path = (root / entry).resolve()
        if not (path.is_relative_to(root.resolve()) and path.is_dir()):
            problems.append(
                InputError(
                    f"{entry!r} is not a folder of the checkout {root}",
                    file=loaded.path,
                    line=loaded.locator.line(("sandbox", "pythonpath", index))
                    if loaded.locator
                    else None,
                    key="sandbox.pythonpath",
                )
            )
    return problems


def target_problem(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> InputError | None:
    """A `python` system's target, imported in a fresh interpreter in the checkout."""
    if not isinstance(suite.system, PythonSystem):
        return None
    argv = [sys.executable, "-P", "-c", IMPORT_PROBE, str(root.resolve()), suite.system.target]
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, text=True, timeout=IMPORT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        reason = f"importing it took more than {IMPORT_TIMEOUT_S:g} s"
    else:
        if done.returncode == 0:
            return None
        lines = [line for line in done.stderr.strip().splitlines() if line.strip()]
        reason = lines[-1] if lines else f"exit {done.returncode}"
    return InputError(
        f"suite {suite.name!r}: target {suite.system.target!r} does not import from {root}: "
        f"{reason}",
        file=loaded.path,
        line=loaded.suite_line(suite.name, "system", "target"),
        key="system.target",
    )


def _module_found(module: str, folders: list[Path]) -> bool:
    parts = module.split(".")
    for folder in folders:
        path = folder.joinpath(*parts)
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return True
    return False


def python_check_problems(loaded: LoadedConfig, root: Path, cases: list[Case]) -> list[InputError]:
    """`expect.python` checks whose module the sandbox would not find, each named at the
    first case that uses it."""
    folders = [(root / entry).resolve() for entry in loaded.config.sandbox.pythonpath]
    folders.append(root.resolve())
    first: dict[str, Case] = {}
    for case in cases:
        inline = case.assertions.python_sources if case.assertions else {}
        for target in case.python_targets:
            if target.partition(":")[0] not in inline:
                first.setdefault(target, case)
    return [
        InputError(
            f"case {case.id!r}: the module of {target!r} is in neither sandbox.pythonpath nor "
            f"the checkout {root}",
            file=case.file,
            line=case.line,
            key="expect.python",
        )
        for target, case in first.items()
        if not _module_found(target.partition(":")[0], folders)
    ]


def unchecked_cases(cases: list[Case]) -> list[Case]:
    """Cases without a single check: whatever the system answers, they pass."""
    return [case for case in cases if plan_case(case).empty]


def promptfoo_problems(system: PromptfooSystem, root: Path, cases: list[Case]) -> list[InputError]:
    """A promptfoo pair's prompt compiled, then rendered with every case's vars."""
    from gate.systems.promptfoo import Pair

    try:
        pair = Pair(system, root)
    except InputError as exc:
        return [exc]
    return render_problems(cases, pair.messages, "vars")


def render_problems(cases: list[Case], render: Callable[[Any], Any], key: str) -> list[InputError]:
    """Each case whose input the prompt does not render for, named at the case."""
    problems = []
    for case in cases:
        try:
            render(case.system_input())
        except GateError as exc:
            problems.append(
                InputError(
                    f"case {case.id!r}: the prompt does not render for its {key}: {exc}",
                    file=case.file,
                    line=case.line,
                    key=key,
                )
            )
    return problems


def prompt_problems(suite: SuiteConfig, root: Path, cases: list[Case]) -> list[InputError]:
    """The chat prompt compiled, then rendered with every case's input (first failure each);
    on an Anthropic side, the model config's tools converted."""
    system = suite.system
    if isinstance(system, PromptfooSystem):
        return promptfoo_problems(system, root, cases)
    if not isinstance(system, OpenAISystem | AnthropicSystem):
        return []
    from gate.providers.prompts import ChatPrompt  # jinja2: only for chat systems
    from gate.systems.anthropic import tools_problem
    from gate.systems.chat_provider import chat_config

    try:
        prompt = ChatPrompt(root, system.model_config_file, system.prompt, "system")
    except InputError as exc:
        return [exc]
    problems = []
    if chat_config(system, root).kind == "anthropic":
        problem = tools_problem(prompt, system.model_config_file)
        problems += [problem] if problem else []
    return problems + render_problems(cases, prompt.render, "input")


def preflight(
    own: LoadedConfig, suite: SuiteConfig, root: Path, cases: list[Case]
) -> list[InputError]:
    """What a run of `suite` (as `own`, the side's config, defines it) on `root` would reject."""
    found = system_files_problems(own, suite, root) + pythonpath_problems(own, root)
    if found:
        return found
    target = target_problem(own, suite, root)
    checks = python_check_problems(own, root, cases)
    return ([target] if target else []) + prompt_problems(suite, root, cases) + checks
