"""`gate init` in a repository that evaluates with promptfoo: its config (`promptfooconfig.yaml`,
`.yml` or `.json`, anywhere but in `node_modules`) becomes a suite that names it, and the
workflow passes the keys its providers read. Nothing runs: the config is only read."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from gate.errors import InputError
from gate.init.plan import Plan, Suite, suite_name
from gate.promptfoo.inputs.suites import config_pairs

NAMES = ("promptfooconfig.yaml", "promptfooconfig.yml", "promptfooconfig.json")


def promptfoo_configs(files: list[str]) -> list[str]:
    return [f for f in files if PurePosixPath(f).name in NAMES and "node_modules" not in f]


def promptfoo_plan(root: Path, configs: list[str]) -> Plan:
    suites: list[Suite] = []
    keys: list[str] = []
    why = []
    for path in configs:
        folder = PurePosixPath(path).parent
        name = suite_name(folder.name if folder.name else "promptfoo", {s.name for s in suites})
        try:
            pairs = config_pairs(root, path)
        except InputError as exc:
            raise InputError(f"the promptfoo config cannot be used: {exc}") from None
        for _, _, key in pairs:
            keys += [key] if key not in keys else []
        suites.append(Suite(name, {}, (), promptfoo=path))
        shown = ", ".join(f"{prompt} with {provider}" for prompt, provider, _ in pairs)
        why.append(f"suite {name}: the promptfoo config {path} ({len(pairs)} pair(s): {shown})")
    return Plan(suites=suites, why=why, key_envs=tuple(keys) or ("OPENAI_API_KEY",))
