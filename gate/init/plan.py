"""The files `gate init` writes: gate.yml, starter cases and the PR workflow, from the findings."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import PurePosixPath
from typing import Any

import yaml

from gate.errors import InputError
from gate.init.detect import PROMPT_FOLDERS, Findings, PythonTarget, Shape, nearest

CONFIG = "gate.yml"
WORKFLOW = ".github/workflows/eval-gate.yml"
CASES_DIR = "evals"
EXAMPLE_MARK = "written by `gate init`: replace with a real case"
PROMPT_SUFFIXES = re.compile(r"(\.(j2|jinja2?|prompt|md|txt))+$")


@dataclass
class Suite:
    name: str
    system: dict[str, Any]
    input_keys: tuple[str, ...]
    cases: str = ""
    shapes: dict[str, Shape] = field(default_factory=dict)


@dataclass
class Plan:
    suites: list[Suite]
    watch: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)  # one line per decision, printed by init
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)


def suite_name(path: str, taken: set[str]) -> str:
    stem = PROMPT_SUFFIXES.sub("", PurePosixPath(path).name)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", stem).strip("-.").lower() or "default"
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    return candidate


def watch_globs(findings: Findings) -> list[str]:
    """Prompt folders as `folder/**` (a new prompt there counts too), model configs as files."""
    globs: list[str] = []
    for prompt in findings.prompts:
        pure = PurePosixPath(prompt.path)
        folder = pure.parent
        in_prompt_folder = folder.name.lower() in PROMPT_FOLDERS
        glob = f"{folder.as_posix()}/**" if in_prompt_folder else prompt.path
        if glob not in globs:
            globs.append(glob)
    return globs + [c for c in findings.model_configs if c not in globs]


def python_plan(target: PythonTarget, findings: Findings) -> Plan:
    prompt = next((p for p in findings.prompts if p.variables), None)
    keys = target.input_keys or (prompt.variables if prompt else ())
    shapes = prompt.shapes if prompt and not target.input_keys else {}
    name = target.target.partition(":")[0].split(".")[-1]
    why = [f"system: python `{target.target}` ({target.path})"]
    if findings.prompts or findings.model_configs:
        why.append("its prompts and model configs are watched: the function reads them itself")
    return Plan(
        suites=[Suite(name, {"kind": "python", "target": target.target}, keys, shapes=shapes)],
        watch=watch_globs(findings),
        why=why,
        key_envs=python_key_envs(target, findings),
    )


def python_key_envs(target: PythonTarget, findings: Findings) -> tuple[str, ...]:
    """The keys of the SDKs the module imports (openai, anthropic), else of the model configs
    found, else OPENAI_API_KEY."""
    keys = [
        f"{kind.upper()}_API_KEY"
        for kind in ("openai", "anthropic")
        if {kind, f"langchain_{kind}"} & set(target.sdks)
    ]
    if not keys:
        keys = sorted({m.key_env for m in findings.models.values()}, key=_openai_first)
    return tuple(keys) or ("OPENAI_API_KEY",)


def _openai_first(key: str) -> tuple[bool, str]:
    return key != "OPENAI_API_KEY", key


def prompt_plan(findings: Findings) -> Plan:
    if not findings.model_configs:
        raise InputError(
            f"found prompt templates ({', '.join(p.path for p in findings.prompts)}) but no "
            "model config (a YAML file with a `model:` key); write one or pass "
            "--model-config FILE"
        )
    suites: list[Suite] = []
    why = []
    for prompt in findings.prompts:
        config = nearest(prompt.path, findings.model_configs)
        name = suite_name(prompt.path, {s.name for s in suites})
        kind = findings.models[config].kind
        system = {"kind": kind, "model_config": config, "prompt": prompt.path}
        suites.append(Suite(name, system, prompt.variables, shapes=prompt.shapes))
        why.append(f"suite {name}: {kind} system, prompt {prompt.path}, model config {config}")
    used = {s.system["model_config"] for s in suites}
    keys = sorted({findings.models[c].key_env for c in used}, key=_openai_first)
    return Plan(suites=suites, watch=watch_globs(findings), why=why, key_envs=tuple(keys))


def make_plan(findings: Findings) -> Plan:
    """A Python entry point wins: evaluating the app's own code covers what it does around
    the prompt. Otherwise one suite per prompt template, with the nearest model config."""
    if findings.targets:
        return python_plan(findings.targets[0], findings)
    if findings.prompts:
        return prompt_plan(findings)
    raise InputError(
        "found no prompt template (.j2/.jinja/.prompt, or .md/.txt under prompts/), no model "
        "config (YAML with `model:`) and no Python entry point; pass --prompt FILE "
        "--model-config FILE, or --target module:function"
    )


def config_text(plan: Plan) -> str:
    data: dict[str, Any] = {}
    if plan.watch:
        data["watch"] = plan.watch
    data["threshold"] = 3
    data["block_severities"] = ["blocker"]
    data["suites"] = [{"name": s.name, "cases": s.cases, "system": s.system} for s in plan.suites]
    header = (
        "# Eval Gate configuration, written by `gate init`. Every key is explained in the\n"
        "# README's Configuration section; `gate schema config` prints the JSON Schema.\n"
        "# A pull request that changes none of `watch`, this file, the cases or a system's\n"
        "# own files (prompt, model config, Python module) is skipped.\n"
    )
    return header + yaml.safe_dump(data, sort_keys=False, width=100)


def example_value(key: str, n: int, shape: Shape) -> Any:
    if shape == "list":
        return []
    if isinstance(shape, tuple):
        return {k: f"example {k} {n}" for k in shape}
    return f"example {key} {n}"


def example_input(suite: Suite, n: int) -> dict[str, Any]:
    if not suite.input_keys:
        return {"question": f"example question {n}"}
    return {k: example_value(k, n, suite.shapes.get(k, "text")) for k in suite.input_keys}


def cases_text(suite: Suite) -> str:
    """Three example cases in the published JSONL format (format A), one per check family."""
    mark = {"example": EXAMPLE_MARK}
    cases = [
        {
            "id": "example-1",
            "task": "example",
            "input": example_input(suite, 1),
            "expect": {"min_chars": 1},
            "metadata": mark,
        },
        {
            "id": "example-2",
            "task": "example",
            "input": example_input(suite, 2),
            "expect": {"max_chars": 4000, "must_not_include": ["as an AI language model"]},
            "metadata": mark,
        },
        {
            "id": "example-3",
            "task": "example",
            "severity": "minor",
            "input": example_input(suite, 3),
            "expect": {"not_regex": ["(?i)traceback \\(most recent call last\\)"]},
            "reference": "A good answer to example 3, as you would want it.",
            "metadata": mark,
        },
    ]
    return "".join(json.dumps(case) + "\n" for case in cases)


def workflow_text(key_envs: tuple[str, ...]) -> str:
    """examples/pr-gate.yml, shipped in the package, with the provider keys the suites need."""
    text = resources.files("gate.examples").joinpath("pr-gate.yml").read_text(encoding="utf-8")
    line = "          OPENAI_API_KEY: ${{ secrets.OPENAI_API_KEY }}\n"
    keys = "".join(line.replace("OPENAI_API_KEY", key) for key in key_envs)
    return text.replace(line, keys)


def files_for(plan: Plan) -> dict[str, str]:
    """Relative path -> content of every file `gate init` writes."""
    single = len(plan.suites) == 1
    for suite in plan.suites:
        suite.cases = f"{CASES_DIR}/{'cases' if single else suite.name}.jsonl"
    files = {CONFIG: config_text(plan)}
    files.update({suite.cases: cases_text(suite) for suite in plan.suites})
    files[WORKFLOW] = workflow_text(plan.key_envs)
    return files
