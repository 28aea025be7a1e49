"""A promptfoo config (`promptfooconfig.yaml`) read as promptfoo reads it: YAML 1.2, its `$ref`s
to its own definitions resolved, `{{ env.NAME }}` rendered from its `env:` block; then its
prompts, its providers, and the pairs of them that run (`matrix`: a provider's `prompts:`
limits it to those prompts).

What each top-level key does here, and which are refused, is `gate.promptfoo.inputs.keys`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gate.errors import InputError
from gate.inputs.sourcemap import Locator
from gate.promptfoo.inputs.files import Files, expand, folder_of, read
from gate.promptfoo.inputs.keys import check_keys
from gate.promptfoo.inputs.nunjucks import promptfoo_environment
from gate.promptfoo.inputs.prompts import Prompt, read_prompts
from gate.promptfoo.inputs.providers import ProviderSpec, parse_provider, runs_prompt
from gate.promptfoo.inputs.yaml12 import load_yaml12

DEFAULT_PROMPT = "{{prompt}}"
_ENV = re.compile(r"\{\{(?:[^}]|\}(?!\}))*\}\}")
_ENV_NAME = re.compile(r"env\.(\w+)|env\[['\"]([^'\"]+)['\"]\]")
# promptfoo keeps JSON Schema `$ref`s of tool parameters for the provider
_KEEP_REFS = (
    ("config", "tools", "*", "function", "parameters"),
    ("config", "functions", "*", "parameters"),
)


@dataclass
class PromptfooConfig:
    """One promptfoo config file and what it says."""

    path: str  # relative to the checkout
    data: dict[str, Any]
    files: Files
    locator: Locator
    env: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        """The folder its `file://` paths are relative to."""
        return folder_of(self.path)

    def line(self, *keys: str | int) -> int | None:
        return self.locator.line(keys)

    def where(self, *keys: str | int) -> str:
        line = self.line(*keys)
        return f"{self.path}:{line}" if line else self.path

    def prompts(self) -> list[Prompt]:
        value = self.data.get("prompts") or DEFAULT_PROMPT
        return read_prompts(self.files, self.base, value, self.where("prompts"))

    def providers(self) -> list[ProviderSpec]:
        key = "providers" if "providers" in self.data else "targets"
        value = self.data.get(key)
        if value is None:
            raise InputError("the config names no `providers`", file=self.path)
        entries = value if isinstance(value, list) else [value]
        found: list[ProviderSpec] = []
        for index, entry in enumerate(entries):
            where = self.where(key, index)
            if isinstance(entry, str) and entry.startswith("file://"):
                for path in expand(self.files, self.base, entry, where):
                    loaded = load_yaml12(read(self.files, path, where), path)[0]
                    items = loaded if isinstance(loaded, list) else [loaded]
                    found += [parse_provider(item, path) for item in items]
            else:
                found.append(parse_provider(entry, where))
        if not found:
            raise InputError("the config names no `providers`", file=self.path)
        return found

    def pair(self, prompt: str | None, provider: str | None) -> tuple[Prompt, ProviderSpec]:
        """The prompt and provider a suite names (either may go unnamed when it is the only
        one): the prompt by name, the provider by name or id."""
        found = [
            (p, q)
            for p, q in self.matrix()
            if prompt in (None, p.name) and provider in (None, q.name, q.id)
        ]
        if len(found) == 1:
            return found[0]
        if not found:
            what = f"prompt {prompt!r} with provider {provider!r}"
            raise InputError(f"the promptfoo config runs no {what}", file=self.path)
        raise InputError(
            "the promptfoo config runs several prompts or providers: name the prompt and the "
            "provider",
            file=self.path,
        )

    def matrix(self) -> list[tuple[Prompt, ProviderSpec]]:
        """The prompt and provider pairs promptfoo runs, providers first."""
        prompts = self.prompts()
        return [
            (prompt, provider)
            for provider in self.providers()
            for prompt in prompts
            if runs_prompt(provider, prompt.names)
        ]


def read_promptfoo(files: Files, path: str, where: str | None = None) -> PromptfooConfig:
    """The config at `path` (relative to the checkout `files` reads)."""
    text = read(files, path, where)
    data, locator = load_yaml12(text, path)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InputError("a promptfoo config must be a mapping", file=path, line=1)
    config = PromptfooConfig(path, data, files, locator)
    check_keys(data, path, config.line)
    data = _dereference(data, data, (), path, ())
    env = data.get("env") if isinstance(data.get("env"), dict) else {}
    config.env = {k: v for k, v in env.items() if v is not None}
    config.data = _render_env(data, config.env)
    return config


def _kept(at: tuple[str | int, ...]) -> bool:
    if len(at) < 2 or at[0] != "providers":
        return False
    rest = at[2:] if at[2:3] == ("config",) else at[3:]
    return any(
        len(rest) >= len(pattern)
        and all(p in ("*", r) for p, r in zip(pattern, rest, strict=False))
        for pattern in _KEEP_REFS
    )


def _pointer(root: Any, ref: str, path: str) -> Any:
    node = root
    for raw in ref.removeprefix("#").strip("/").split("/") if ref != "#" else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise InputError(f"`$ref: {ref}` points at nothing in the config", file=path)
    return node


def _dereference(
    value: Any, root: Any, at: tuple[str | int, ...], path: str, chain: tuple[str, ...]
) -> Any:
    """The config's `$ref: "#/..."` replaced by what they point at (json-schema-ref-parser's
    `dereference`): keys written beside a `$ref` win over the referenced mapping's
    (`{$ref: "#/assertionTemplates/polite", weight: 2}`); a reference to another file, or a
    cycle, is an error."""
    if _kept(at):
        return value
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                raise InputError(
                    f"`$ref: {ref}`: only references into the config itself work", file=path
                )
            if ref in chain:
                raise InputError(f"`$ref: {ref}` refers to itself", file=path)
            found = _dereference(_pointer(root, ref, path), root, at, path, (*chain, ref))
            beside = {k: v for k, v in value.items() if k != "$ref"}
            if not beside or not isinstance(found, dict):
                return found
            own = _dereference(beside, root, at, path, chain)
            return {**own, **{k: v for k, v in found.items() if k not in own}}
        return {k: _dereference(v, root, (*at, k), path, chain) for k, v in value.items()}
    if isinstance(value, list):
        return [_dereference(v, root, (*at, i), path, chain) for i, v in enumerate(value)]
    return value


def dereference(value: Any, path: str) -> Any:
    """A tests file's own `$ref`s resolved, as promptfoo does for each file of tests."""
    return _dereference(value, value, ("tests",), path, ())


def _render_env(value: Any, env: dict[str, Any]) -> Any:
    """promptfoo's `renderEnvOnlyInObject`, with the config's `env:` as the environment: an
    `{{ env.NAME }}` it does not define stays as written (the gate never reads the process's
    environment into a config or a prompt)."""
    if isinstance(value, str) and "env" in value and "{{" in value:
        environment = promptfoo_environment(env)

        def one(match: re.Match[str]) -> str:
            text = match.group(0)
            name = _ENV_NAME.search(text)
            if name is None or not re.search(r"\benv\.|env\[", text):
                return text
            if "|" not in text and (name.group(1) or name.group(2)) not in env:
                return text
            try:
                return environment.from_string(text).render()
            except Exception:
                return text

        return _ENV.sub(one, value)
    if isinstance(value, list):
        return [_render_env(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _render_env(v, env) for k, v in value.items()}
    return value
