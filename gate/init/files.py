"""What `gate init` writes: gate.yml, the starter cases, the workflow and the prompts of a
`---`-separated prompt file, never over a file that exists unless asked to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gate.errors import InputError
from gate.init.plan import Plan, Suite
from gate.init.starter_cases import cases_text
from gate.init.workflow import workflow_text

CONFIG = "gate.yml"
WORKFLOW = ".github/workflows/eval-gate.yml"
CASES_DIR = "evals"


def config_text(plan: Plan) -> str:
    data: dict[str, Any] = {}
    if plan.watch:
        data["watch"] = plan.watch
    data["threshold"] = 3
    data["block_severities"] = ["blocker"]
    data["suites"] = [_suite(s) for s in plan.suites]
    header = (
        "# Eval Gate configuration, written by `gate init`. Every key is explained in Eval\n"
        "# Gate's docs/config.md, the cases and their checks in docs/cases.md; `gate schema\n"
        "# config` prints the JSON Schema.\n"
        "# A pull request that changes none of `watch`, this file, the cases or a system's\n"
        "# own files (prompt, model config, Python module) is skipped.\n"
    )
    return header + yaml.safe_dump(data, sort_keys=False, width=100)


def _suite(suite: Suite) -> dict[str, Any]:
    if suite.promptfoo:
        return {"name": suite.name, "promptfoo": suite.promptfoo}
    if suite.framework:
        return {"name": suite.name, **suite.framework}
    return {"name": suite.name, "cases": suite.cases, "system": suite.system}


def files_for(plan: Plan) -> dict[str, str]:
    """Relative path -> content of every file `gate init` writes."""
    single = len(plan.suites) == 1
    starters = [suite for suite in plan.suites if not (suite.promptfoo or suite.framework)]
    for suite in starters:
        suite.cases = f"{CASES_DIR}/{'cases' if single else suite.name}.jsonl"
    files = {CONFIG: config_text(plan), **plan.prompt_files}
    files.update({suite.cases: cases_text(suite) for suite in starters})
    files[WORKFLOW] = workflow_text(plan.key_envs)
    return files


def write_files(root: Path, files: dict[str, str], *, force: bool) -> list[tuple[str, str]]:
    """Write every file (none when one exists and not `force`): (verb, path) of each."""
    existing = [name for name in files if (root / name).exists()]
    if existing and not force:
        raise InputError(
            f"{', '.join(existing)} already exist(s); nothing was written (--force overwrites)"
        )
    written = []
    for name, text in files.items():
        file = root / name
        file.parent.mkdir(parents=True, exist_ok=True)
        written.append(("overwrote" if file.exists() else "wrote", name))
        file.write_text(text, encoding="utf-8")
    return written
