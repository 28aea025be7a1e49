"""What the command line names instead of what `gate init` detects: `--prompt`,
`--model-config`, `--target`; each replaces the findings of its kind only."""

from __future__ import annotations

from pathlib import Path

from gate.errors import InputError
from gate.init.detect import Findings, Prompt, model_of, template_inputs, template_problem
from gate.init.entry_points import PythonTarget, signature_problem


def relative(root: Path, name: str, flag: str) -> str:
    path = (root / name).resolve()
    if not path.is_file():
        raise InputError(f"{name}: no such file", key=flag)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        raise InputError(f"{name} is outside the repository {root}", key=flag) from None


def apply_overrides(
    found: Findings,
    root: Path,
    *,
    prompts: list[str] | None = None,
    model_config: str | None = None,
    target: str | None = None,
) -> Findings:
    """What the flags name replaces what was detected, for that kind of file only."""
    if target:
        module, _, func = target.partition(":")
        if not module or not func:
            raise InputError(f"must look like module:function, got {target!r}", key="--target")
        found.targets = [named_target(root, target)]
    if prompts:
        found.prompts = [named_prompt(root, name) for name in prompts]
        if not target:
            found.targets = []  # naming prompts asks for a model system
    if model_config:
        path = relative(root, model_config, "--model-config")
        model = model_of((root / path).read_text(encoding="utf-8"))
        if not model:
            raise InputError("needs a string `model:` key", file=path, key="--model-config")
        found.model_configs, found.models = [path], {path: model}
    return found


def named_target(root: Path, target: str) -> PythonTarget:
    """`--target module:function`, its signature read from the module's file when it is in
    the repository (`signature_problem`)."""
    module = target.partition(":")[0].replace(".", "/")
    for path in (f"{module}.py", f"{module}/__init__.py"):
        if (root / path).is_file():
            text = (root / path).read_text(encoding="utf-8", errors="replace")
            problem, line = signature_problem(text, target)
            return PythonTarget(target, path, (), problem=problem, line=line)
    return PythonTarget(target, f"{module}.py", ())


def named_prompt(root: Path, name: str) -> Prompt:
    path = relative(root, name, "--prompt")
    text = (root / path).read_text(encoding="utf-8")
    problem = template_problem(text)
    inputs = template_inputs(text)
    if problem is not None or inputs is None:
        raise InputError(f"not a jinja2 template: {problem}", file=path, key="--prompt")
    return Prompt(path, tuple(inputs), inputs)
