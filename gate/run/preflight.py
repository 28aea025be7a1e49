"""What `gate run` would reject, found before anything runs: `gate validate` reports all of it.

- the files a system names (model config, system prompt, prompt template, replay file; an
  inspect suite's task file, a pytest suite's test paths) are missing from the checkout: the
  error names `gate.yml:LINE` and the suite;
- a prompt template that does not compile, or does not render for some case's input (an
  undefined variable): the error names the template or the case's file and line;
- a `sandbox.pythonpath` entry that is not a folder of the checkout;
- a `python` system whose `target` does not import from the checkout (tried in a worker
  process of its own, so the gate's own process never imports the team's code), or cannot
  take the case's input dict (its signature, as that worker read it: `gate.inputs.signature`);
- an `expect.python` check whose module is in neither `sandbox.pythonpath` nor the checkout
  (looked up as files: the check's code runs only in the sandbox);
- tools in a model config that Anthropic has no equivalent for, on an Anthropic side;
- an API key (or a header's `${VAR}`) a system or the judge reads from the environment and
  the environment lacks (`gate.run.endpoint_keys`);
- a promptfoo suite's prompt that does not compile or render for some test's vars.

`unchecked_cases` finds the cases with no expectation at all (they always pass): `gate
validate` warns about them.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path

from gate.checks import plan_case
from gate.errors import GateError, InputError
from gate.inputs.cases import Case, resolve_case_paths
from gate.inputs.config import (
    AnthropicSystem,
    LoadedConfig,
    OpenAISystem,
    PromptfooSystem,
    PythonSystem,
    ReplaySystem,
    SuiteConfig,
)
from gate.run.endpoint_keys import judge_key_problem, system_key_problem


def _problem(root: Path, name: str) -> str | None:
    """Why the checkout's file `name` cannot be read: it leads out of the checkout (a `..`,
    an absolute path, a symlink: never read from the host), or it is not there."""
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        return (
            f"file {name!r} is outside the checkout (a `..` or a symlink leads out of it): not read"
        )
    return None if path.is_file() else f"file {name!r} not found in checkout {root}"


def system_files_problems(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[InputError]:
    """Files the suite's system names that the checkout lacks, each named at its gate.yml line."""
    if suite.framework is not None:
        return framework_files_problems(loaded, suite, root)
    system = suite.system
    named: list[tuple[str, str]] = []
    if isinstance(system, OpenAISystem | AnthropicSystem):
        named = [("model_config", system.model_config_file), ("prompt", system.prompt)]
    elif isinstance(system, ReplaySystem):
        named = [("file", system.file)]
    found = [(key, _problem(root, value)) for key, value in named]
    return [
        InputError(
            f"suite {suite.name!r}: {problem}",
            file=loaded.path,
            line=loaded.suite_line(suite.name, "system", key),
            key=f"system.{key}",
        )
        for key, problem in found
        if problem is not None
    ]


def framework_files_problems(
    loaded: LoadedConfig, suite: SuiteConfig, root: Path
) -> list[InputError]:
    """An inspect suite's task file, a pytest suite's test paths: missing from the checkout."""
    named = [("inspect", "task", suite.inspect.file)] if suite.inspect else []
    named += [("pytest", "args", p) for p in (suite.pytest.paths if suite.pytest else [])]
    return [
        InputError(
            f"suite {suite.name!r}: {path!r} not found in {root}",
            file=loaded.path,
            line=loaded.suite_line(suite.name, block, key),
            key=f"{block}.{key}",
        )
        for block, key, path in named
        if not (root / path).exists()
    ]


def case_files_problems(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[InputError]:
    """Case files of the suite (a glob's matches, each resolved) that lie outside the checkout:
    a pull request's `cases:` never reads a file of the host."""
    if suite.promptfoo is not None or not suite.cases:
        return []
    try:
        paths = resolve_case_paths(suite.cases, loaded.base_dir)
    except InputError:
        return []  # not there at all: the reading names it
    outside = [p for p in paths if not p.is_relative_to(root.resolve())]
    return [
        InputError(
            f"suite {suite.name!r}: case file {str(path)!r} is outside the checkout (a `..` or "
            "a symlink leads out of it): not read",
            file=loaded.path,
            line=loaded.suite_line(suite.name, "cases"),
            key="cases",
        )
        for path in outside[:1]
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
    """A `python` system's target, imported in a worker process of its own, as a run imports
    it (`gate.systems.worker`: as root, an unprivileged uid), never in the gate's process."""
    if not isinstance(suite.system, PythonSystem):
        return None
    from gate.systems.python_system import signature_problem
    from gate.systems.worker import SystemWorker

    spec = {"kind": "python", "target": suite.system.target}
    line = loaded.suite_line(suite.name, "system", "target")
    try:
        worker = SystemWorker(spec, root, os.environ, 1, "system.target")
    except InputError as exc:
        problem: str | None = (
            f"target {suite.system.target!r} does not import from {root}: {exc.message}"
        )
    else:
        try:
            problem = signature_problem(worker, suite.system.target)
        finally:
            worker.close()
    if problem is None:
        return None
    return InputError(
        f"suite {suite.name!r}: {problem}", file=loaded.path, line=line, key="system.target"
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
    from gate.promptfoo.systems import prompt_renderer

    try:
        render = prompt_renderer(system, root)
    except InputError as exc:
        return [exc]
    return render_problems(cases, render, "vars")


SHOWN_IDS = 10


def render_problems(
    cases: list[Case], render: Callable[[dict[str, object]], object], key: str
) -> list[InputError]:
    """The cases whose input the prompt does not render for, one error per reason (an
    undefined variable is one reason however many cases lack it), named at its first case
    with the ids of the others."""
    failing: dict[str, list[Case]] = {}
    for case in cases:
        try:
            render(case.system_input())
        except GateError as exc:
            failing.setdefault(str(exc), []).append(case)
    problems = []
    for reason, alike in failing.items():
        first = alike[0]
        if len(alike) == 1:
            said = f"case {first.id!r}: the prompt does not render for its {key}: {reason}"
        else:
            ids = ", ".join(c.id for c in alike[:SHOWN_IDS])
            more = f" and {len(alike) - SHOWN_IDS} more" if len(alike) > SHOWN_IDS else ""
            said = (
                f"the prompt does not render for the {key} of {len(alike)} cases ({ids}{more}): "
                f"{reason}"
            )
        problems.append(InputError(said, file=first.file, line=first.line, key=key))
    return problems


def prompt_problems(suite: SuiteConfig, root: Path, cases: list[Case]) -> list[InputError]:
    """The chat prompt compiled, then rendered with every case's input (first failure each);
    on an Anthropic side, the model config's tools converted."""
    system = suite.system
    if isinstance(system, PromptfooSystem):
        return promptfoo_problems(system, root, cases)
    if not isinstance(system, OpenAISystem | AnthropicSystem):
        return []
    from gate.providers.prompts import ChatPrompt, provider_problem  # jinja2: chat systems
    from gate.systems.anthropic import tools_problem
    from gate.systems.chat_provider import chat_config

    try:
        prompt = ChatPrompt(root, system.model_config_file, system.prompt, "system")
    except InputError as exc:
        return [exc]
    kind = chat_config(system, root).kind
    found = provider_problem(prompt.settings, prompt.locator, kind, system.model_config_file)
    if kind == "anthropic" and found is None:
        found = tools_problem(prompt, system.model_config_file)
    return ([found] if found else []) + render_problems(cases, prompt.render, "input")


def preflight(
    own: LoadedConfig,
    suite: SuiteConfig,
    root: Path,
    cases: list[Case],
    environ: Mapping[str, str] | None = None,
) -> list[InputError]:
    """What a run of `suite` (as `own`, the side's config, defines it) on `root`, in
    `environ` (default: this process's), would reject."""
    found = system_files_problems(own, suite, root) + pythonpath_problems(own, root)
    if found:
        return found
    environ = os.environ if environ is None else environ
    keys = [system_key_problem(own, suite, root, environ), judge_key_problem(own, cases, environ)]
    target = target_problem(own, suite, root)
    checks = python_check_problems(own, root, cases)
    return (
        [p for p in (*keys, target) if p is not None] + prompt_problems(suite, root, cases) + checks
    )
