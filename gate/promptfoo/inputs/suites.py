"""gate.yml's `promptfoo:` suites, made ordinary suites where the config is read: one per
prompt and provider of the promptfoo config, named `<name>/<prompt>/<provider>` (a config
with one prompt and one provider keeps `<name>`), each with a `promptfoo` system naming its
pair. The flow, change detection, reports and the comment then see ordinary suites.

The suite keeps `promptfoo:` (where its cases come from: the tests of the measuring side's
config) and its system names the pair (what runs: each side reads its own config's prompt
and provider of that name). A prompt's name is its `label`, else its file, else its text; a
provider's is its `label`, else its id (`gate.promptfoo.inputs.prompts`, `.providers`).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, Protocol

from gate.errors import InputError
from gate.inputs.cases import Case
from gate.inputs.paths import checkout_root, relative_posix
from gate.inputs.sourcemap import Locator
from gate.promptfoo.inputs.cases import promptfoo_cases
from gate.promptfoo.inputs.config import read_promptfoo
from gate.promptfoo.inputs.files import Checkout, DiskFiles, load_ref, resolve


class NamedSuite(Protocol):
    """A suite of gate.yml (`gate.inputs.config.SuiteConfig`, which imports this module)."""

    @property
    def promptfoo(self) -> str | None: ...

    @property
    def system(self) -> Any: ...


ENTRY_KEYS = {"name", "promptfoo", "watch"}


def default_checkout(path: Path) -> Checkout:
    folder = path.resolve().parent
    root = checkout_root(folder)
    return Checkout(DiskFiles(root), relative_posix(folder, root) or "")


def suite_names(name: str, pairs: list[tuple[str, str]]) -> list[str]:
    if len(pairs) == 1:
        return [name]
    return [f"{name}/{prompt}/{provider}" for prompt, provider in pairs]


def _entry_error(
    message: str, path: Path, locator: Locator, at: tuple[str | int, ...], key: str
) -> InputError:
    return InputError(message, file=path, line=locator.line((*at, key)), key=key)


def _expand(
    entry: dict[str, Any],
    at: tuple[str | int, ...],
    path: Path,
    locator: Locator,
    checkout: Checkout,
) -> list[dict[str, Any]]:
    for key in entry:
        if key not in ENTRY_KEYS:
            why = (
                "the promptfoo config is the system and the cases: remove it"
                if key in ("system", "cases")
                else "unknown key next to `promptfoo` (it takes name, promptfoo, watch)"
            )
            raise _entry_error(why, path, locator, at, key)
    ref = entry["promptfoo"]
    if not isinstance(ref, str) or not ref:
        raise _entry_error(
            "`promptfoo` names a promptfoo config file", path, locator, at, "promptfoo"
        )
    relative = resolve(checkout.folder, ref, str(path))
    if checkout.files.text(relative) is None:
        raise _entry_error(f"promptfoo config {ref!r} not found", path, locator, at, "promptfoo")
    config = read_promptfoo(checkout.files, relative)
    pairs = config.matrix()
    if not pairs:
        raise _entry_error(
            "the promptfoo config runs no prompt with any provider", path, locator, at, "promptfoo"
        )
    name = entry.get("name", "default")
    absolute = str((path.resolve().parent / ref).resolve())
    out = []
    for suite, (prompt, provider) in zip(
        suite_names(str(name), [(p.name, q.name) for p, q in pairs]), pairs, strict=True
    ):
        system = {
            "kind": "promptfoo",
            "config": absolute,
            "prompt": prompt.name,
            "provider": provider.name,
        }
        out.append({**entry, "name": suite, "system": system})
    return out


def expand_suites(
    data: dict[str, Any], locator: Locator, path: Path, checkout: Checkout | None, shorthand: bool
) -> tuple[dict[str, Any], dict[str, int]]:
    """gate.yml's data with each `promptfoo:` suite replaced by its suites, and where each of
    those is in the file (`suites[i]`); a promptfoo system's `config` made absolute."""
    suites = data.get("suites")
    if not isinstance(suites, list):
        return data, {}
    checkout = checkout or default_checkout(path)
    expanded: list[Any] = []
    origins: dict[str, int] = {}
    for index, entry in enumerate(suites):
        at: tuple[str | int, ...] = () if shorthand else ("suites", index)
        if isinstance(entry, dict) and "promptfoo" in entry:
            made = _expand(entry, at, path, locator, checkout)
            origins.update({suite["name"]: index for suite in made})
            expanded += made
        else:
            expanded.append(_absolute_system(entry, path))
    return {**data, "suites": expanded}, origins


def _absolute_system(entry: Any, path: Path) -> Any:
    system = entry.get("system") if isinstance(entry, dict) else None
    if isinstance(system, dict) and system.get("kind") == "promptfoo":
        ref = system.get("config")
        if isinstance(ref, str):
            system = {**system, "config": str((path.resolve().parent / ref).resolve())}
            return {**entry, "system": system}
    return entry


def suite_cases(gate_path: Path, suite: NamedSuite) -> list[Case]:
    """A `promptfoo:` suite's cases: the tests of the config `gate_path` names (the
    measuring side's), those its prompt and provider run when the config has them."""
    checkout = default_checkout(gate_path)
    relative = resolve(checkout.folder, suite.promptfoo or "", str(gate_path))
    config = read_promptfoo(checkout.files, relative, str(gate_path))
    system = suite.system
    prompt = provider = None
    if system.kind == "promptfoo":  # a pair this config lacks (the other side's): every test
        with contextlib.suppress(InputError):
            prompt, provider = config.pair(system.prompt, system.provider)
    return promptfoo_cases(config, prompt, provider)


def referenced_files(config_path: Path, root: Path) -> tuple[list[str], list[str]]:
    """What a promptfoo config reads, relative to `root`: (the config and the files of its
    prompts and providers, the files of its tests and variables and python checks). A config
    that cannot be read watches everything (`**`): the run then names the problem."""
    relative = relative_posix(config_path, root)
    if relative is None:
        return [], []
    files = DiskFiles(root)
    try:
        config = read_promptfoo(files, relative)
        for _, provider in config.matrix():  # and the tools files they offer
            load_ref(files, config.base, provider.config.get("tools"), config.path)
        system = list(dict.fromkeys(files.seen))
        cases = promptfoo_cases(config)
    except InputError:
        return ["**"], []
    tests = [f for f in dict.fromkeys(files.seen[len(system) :]) if f not in system]
    if any(case.heldout and case.file == relative for case in cases):
        tests.insert(0, relative)  # its held-out tests: the comment shows no diff of it
    python = [
        target.partition(":")[0].replace(".", "/") + ".py"
        for case in cases
        for target in (case.assertions.python_targets if case.assertions else [])
        if not target.startswith("_promptfoo_inline_")
    ]
    return system, list(dict.fromkeys(tests + python))


def config_pairs(root: Path, path: str) -> list[tuple[str, str, str]]:
    """The prompt and provider pairs the config at `path` (relative to the checkout `root`)
    runs: (the prompt's name, the provider's name, the variable its key is read from)."""
    config = read_promptfoo(DiskFiles(root), path)
    return [(p.name, q.name, q.key_env) for p, q in config.matrix()]
