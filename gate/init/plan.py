"""What `gate init` will write, decided from the findings: the suites (which system, which
prompt and model config, the input keys of the example cases), the `watch` globs and the
provider keys the workflow passes, with one line of why per decision."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from gate.errors import InputError
from gate.init.detect import PROMPT_FOLDERS, Findings, Shape, nearest
from gate.init.entry_points import PythonTarget

PROMPT_SUFFIXES = re.compile(r"(\.(j2|jinja2?|prompt|md|txt))+$")


@dataclass
class Suite:
    name: str
    system: dict[str, Any]
    input_keys: tuple[str, ...]
    cases: str = ""
    shapes: dict[str, Shape] = field(default_factory=dict)
    promptfoo: str | None = None  # a promptfoo config: the suite's cases and system
    tools: tuple[str, ...] = ()  # the tools its model config offers: an agent example case
    framework: dict[str, Any] | None = None  # `inspect:` or `pytest:`: cases and system


@dataclass
class Plan:
    suites: list[Suite]
    watch: list[str] = field(default_factory=list)
    why: list[str] = field(default_factory=list)  # one line per decision, printed by init
    key_envs: tuple[str, ...] = ("OPENAI_API_KEY",)
    prompt_files: dict[str, str] = field(default_factory=dict)  # the prompts of `---` files


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
        kind, tools = findings.models[config].kind, findings.models[config].tools
        system = {"kind": kind, "model_config": config, "prompt": prompt.path}
        suites.append(Suite(name, system, prompt.variables, shapes=prompt.shapes, tools=tools))
        why.append(f"suite {name}: {kind} system, prompt {prompt.path}, model config {config}")
        if tools:
            why.append(
                f"  {config} offers tools ({', '.join(tools)}): the examples include an agent "
                "case, whose tool results, second turn and path checks to fill in (docs/agents.md)"
            )
        if prompt.source is not None:
            why.append(f"  ({prompt.path} is one of the prompts of {prompt.source}, split at ---)")
    used = {s.system["model_config"] for s in suites}
    keys = sorted({findings.models[c].key_env for c in used}, key=_openai_first)
    parts = {p.path: p.text for p in findings.prompts if p.text is not None}
    return Plan(
        suites=suites,
        watch=watch_globs(findings),
        why=why,
        key_envs=tuple(keys),
        prompt_files=parts,
    )


def make_plan(findings: Findings) -> Plan:
    """A Python entry point wins: evaluating the app's own code covers what it does around
    the prompt. Otherwise one suite per prompt template, with the nearest model config."""
    if findings.targets:
        target = findings.targets[0]  # ranked: one that takes the input dict comes first
        if target.problem is not None:
            module = target.target.partition(":")[0]
            then = f"; then `gate init --target {module}:answer`"
            raise InputError(target.problem + then, file=target.path, line=target.line)
        return python_plan(target, findings)
    if findings.prompts:
        return prompt_plan(findings)
    raise InputError(
        "found no prompt template (.j2/.jinja/.prompt, or .md/.txt under prompts/), no model "
        "config (YAML with `model:`) and no Python entry point; pass --prompt FILE "
        "--model-config FILE, or --target module:function"
    )
