"""`gate init` in a repository that already has evals of another framework: each inspect_ai
task (a function decorated with inspect's `@task` in a file that imports inspect_ai) becomes an
`inspect:` suite, each eval test folder (a folder named `evals`, `eval` or `llm_evals` holding
`test_*.py` files) a `pytest:` suite. Found by reading the code with `ast`, never by running it.
"""

from __future__ import annotations

import ast
from pathlib import Path, PurePosixPath

from gate.init.detect import Findings, read_text, repository_files
from gate.init.plan import Plan, Suite, suite_name, watch_globs
from gate.init.promptfoo import promptfoo_plan

EVAL_FOLDERS = {"evals", "eval", "llm_evals"}


def _is_task_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Name):
        return target.id == "task"
    return isinstance(target, ast.Attribute) and target.attr == "task"


def inspect_tasks(path: str, text: str) -> list[str]:
    """`FILE.py@name` of each inspect task the file defines."""
    if "inspect_ai" not in text:
        return []
    try:
        tree = ast.parse(text, path)
    except (SyntaxError, ValueError):
        return []
    return [
        f"{path}@{node.name}"
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any(_is_task_decorator(d) for d in node.decorator_list)
    ]


def eval_test_folders(files: list[str]) -> list[str]:
    """The topmost folders named like eval folders that hold pytest test files."""
    found: list[str] = []
    for path in files:
        pure = PurePosixPath(path)
        if not (pure.name.startswith("test_") or pure.name.endswith("_test.py")):
            continue
        if pure.suffix != ".py":
            continue
        for depth, part in enumerate(pure.parts[:-1]):
            if part in EVAL_FOLDERS:
                folder = "/".join(pure.parts[: depth + 1])
                if not any(folder == f or folder.startswith(f + "/") for f in found):
                    found.append(folder)
                break
    return found


def framework_suites(
    root: Path, files: list[str], taken: set[str]
) -> tuple[list[Suite], list[str]]:
    """The suites of the repository's inspect tasks and eval test folders, and one line of
    why per suite."""
    suites: list[Suite] = []
    why: list[str] = []
    names = set(taken)
    for path in files:
        text = read_text(root / path) if path.endswith(".py") else None
        for spec in inspect_tasks(path, text) if text else []:
            name = suite_name(spec.partition("@")[2], names)
            names.add(name)
            suites.append(Suite(name, {}, (), framework={"inspect": {"task": spec}}))
            why.append(
                f"suite {name}: the inspect task {spec} (set inspect.model, or "
                "INSPECT_EVAL_MODEL in the workflow; every sample needs an id)"
            )
    for folder in eval_test_folders(files):
        name = suite_name(folder.replace("/", "-"), names)
        names.add(name)
        suites.append(Suite(name, {}, (), framework={"pytest": {"args": [folder]}}))
        why.append(f"suite {name}: the tests in {folder}/ (pytest, each test a case)")
    return suites, why


def existing_evals_plan(root: Path, found: Findings, promptfoo: list[str]) -> Plan | None:
    """The suites of the evals the repository has (promptfoo configs, inspect tasks, eval test
    folders), watching the prompts and model configs found; None when it has none."""
    plan = promptfoo_plan(root, promptfoo) if promptfoo else Plan(suites=[])
    taken = {s.name for s in plan.suites}
    suites, why = framework_suites(root, repository_files(root), taken)
    if not plan.suites and not suites:
        return None
    plan.suites += suites
    plan.why += why
    if suites:
        plan.watch = watch_globs(found)
    return plan
