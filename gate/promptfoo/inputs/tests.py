"""A promptfoo config's tests, read as promptfoo reads them (`readTests`): inline, `file://`
YAML, JSON, JSONL and CSV files and globs of them, `vars` from `file://` YAML files, each
file's own `$ref`s resolved; then `defaultTest` merged into each (promptfoo's
`prepareTestCaseForEval`): its `vars` under the test's, its `assert` before the test's (unless
`options.disableDefaultAsserts`), `options` and `metadata` merged, `threshold` when the test
has none. A variable holding a list of strings makes one test per value (promptfoo's var
expansion), a `file://` variable holds the file's text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gate.errors import InputError
from gate.inputs.sourcemap import suggest
from gate.promptfoo.inputs.config import PromptfooConfig, dereference
from gate.promptfoo.inputs.files import (
    FILE,
    expand,
    folder_of,
    is_glob,
    load_ref,
    load_refs,
    read,
    resolve,
)
from gate.promptfoo.inputs.js import js_json_loads, js_string, js_stringify
from gate.promptfoo.inputs.yaml12 import load_yaml12

TEST_KEYS = {"description", "vars", "providers", "prompts", "assert", "options", "threshold",
             "metadata"}  # fmt: skip
NOT_RUN = {
    "provider": "a provider of its own for one test",
    "providerOutput": "a fixed output instead of the provider's",
    "assertScoringFunction": "a scoring function (JavaScript or Python run by promptfoo)",
}
OPTIONS_NOT_RUN = {
    "prefix": "text added to the prompt: put it in the prompt",
    "suffix": "text added to the prompt: put it in the prompt",
    "transformVars": "a transform of the variables (JavaScript)",
    "storeOutputAs": "outputs passed between tests",
}
VAR_FILES_NOT_READ = (".py", ".js", ".cjs", ".mjs", ".ts", ".pdf", ".png", ".jpg", ".jpeg",
                      ".gif", ".webp", ".mp3", ".wav", ".mp4")  # fmt: skip
_VAR_REF = re.compile(r"\{\{\s*(\w+)\s*\}\}")


@dataclass
class RawTest:
    """A test as written, with where it is."""

    data: dict[str, Any]
    file: str  # the file it is written in (relative to the checkout)
    line: int
    base: str  # the folder of that file

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Place:
    """Where a list of tests is written: the file, and the line of its i-th item (0: unknown)."""

    file: str
    line: Callable[[int], int]


def raw_tests(config: PromptfooConfig) -> list[RawTest]:
    """Every test of `tests:`, in order."""
    place = Place(config.path, lambda index: config.line("tests", index) or 0)
    return read_tests(config, config.data.get("tests"), place, config.where("tests"))


def read_tests(config: PromptfooConfig, value: Any, place: Place, where: str) -> list[RawTest]:
    """promptfoo's `readTests`: a list of tests, test files and globs of them, or one file or
    glob; `file://` paths are relative to the config's folder."""
    if value is None:
        return []
    if isinstance(value, str):
        return _from_files(config, value, where)
    if isinstance(value, dict) and isinstance(value.get("path"), str):
        return _from_files(config, value["path"], where)
    if not isinstance(value, list):
        raise InputError("`tests` must be a list, a file or a glob", file=where)
    found: list[RawTest] = []
    for index, item in enumerate(value):
        line = place.line(index)
        at = f"{place.file}:{line}" if line else place.file
        if isinstance(item, str):
            found += _from_files(config, item, at)
        elif isinstance(item, dict) and isinstance(item.get("path"), str) and "vars" not in item:
            found += _from_files(config, item["path"], at)
        elif isinstance(item, dict):
            found.append(_with_vars(config, RawTest(item, place.file, line, config.base)))
        else:
            raise InputError(f"a test must be a mapping or a file, got {item!r}", file=at)
    return found


def _from_files(config: PromptfooConfig, ref: str, where: str) -> list[RawTest]:
    ref = ref.removeprefix(FILE)
    if re.search(r"\.(py|js|cjs|mjs|ts)(:\w+)?$", ref) or "://" in ref:
        raise InputError(
            f"tests {ref!r}: tests made by a script or fetched do not run here", file=where
        )
    found: list[RawTest] = []
    for path in expand(config.files, config.base, ref, where):
        found += [_with_vars(config, test) for test in _file_tests(config, path, where)]
    return found


def _file_tests(config: PromptfooConfig, path: str, where: str) -> list[RawTest]:
    text = read(config.files, path, where)
    base = folder_of(path)
    if path.endswith(".csv"):
        from gate.promptfoo.inputs.csv_tests import csv_tests

        return [RawTest(row.test(), path, at.row.line, base) for row, at in csv_tests(text, path)]
    if path.endswith((".yaml", ".yml")):
        data, locator = load_yaml12(text, path)
        items, lines = _items(data), None
        if isinstance(data, list) and locator.root is not None:
            lines = [node.start_mark.line + 1 for node in locator.root.value]
    elif path.endswith(".jsonl"):
        items, lines = [], []
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                items.append(_json(line, path, number))
                lines.append(number)
    elif path.endswith(".json"):
        items, lines = _items(_json(text, path, None)), None
    else:
        raise InputError(f"tests file {path!r}: unsupported type", file=where)
    items = load_refs(config.files, base, dereference(items, path), path)
    return [
        _read_test(config, item, path, lines[i] if lines else 0, base)
        for i, item in enumerate(items)
    ]


def _json(text: str, path: str, line: int | None) -> Any:
    try:
        return js_json_loads(text)
    except ValueError as exc:
        raise InputError(f"malformed JSON: {exc}", file=path, line=line) from None


def _items(data: Any) -> list[Any]:
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


def _read_test(config: PromptfooConfig, item: Any, path: str, line: int, base: str) -> RawTest:
    """promptfoo's `readTest`: a string is a file holding one test."""
    if isinstance(item, str):
        file = resolve(base, item, f"{path}:{line}")
        data = load_refs(
            config.files, folder_of(file), load_yaml12(read(config.files, file), file)[0], file
        )
        return RawTest(data if isinstance(data, dict) else {}, file, 1, folder_of(file))
    if not isinstance(item, dict):
        raise InputError(f"a test must be a mapping, got {item!r}", file=path, line=line or None)
    return RawTest(item, path, line, base)


def _with_vars(config: PromptfooConfig, test: RawTest) -> RawTest:
    """promptfoo's `loadTestWithVars`: `vars` naming YAML files are those files, merged."""
    vars_ = test.data.get("vars")
    if isinstance(vars_, str | list) and not isinstance(vars_, dict):
        merged: dict[str, Any] = {}
        for ref in [vars_] if isinstance(vars_, str) else vars_:
            for path in expand(config.files, test.base, str(ref), test.where):
                loaded = load_refs(
                    config.files,
                    folder_of(path),
                    load_yaml12(read(config.files, path), path)[0],
                    path,
                )
                merged.update(loaded if isinstance(loaded, dict) else {})
        test = RawTest({**test.data, "vars": merged}, test.file, test.line, test.base)
    return test


def default_test(config: PromptfooConfig) -> dict[str, Any]:
    """`defaultTest` (inline or a file); the config's top-level `metadata` is its `metadata`
    when it has none, as promptfoo makes it."""
    value = config.data.get("defaultTest")
    where = config.where("defaultTest")
    if isinstance(value, str):
        value = load_ref(config.files, config.base, value, where)
    if value is not None and not isinstance(value, dict):
        raise InputError("`defaultTest` must be a mapping", file=where)
    value = dict(value or {})
    if "metadata" not in value and config.data.get("metadata") is not None:
        value["metadata"] = config.data["metadata"]
    if not value:
        return {}
    line = config.line("defaultTest") or config.line("metadata") or 0
    return _with_vars(config, RawTest(value, config.path, line, config.base)).data


SIMULATED_USER = "promptfoo:simulated-user"


def simulated_user_provider(value: Any) -> bool:
    """A test's `provider` that is promptfoo's simulated user (the gate holds the dialogue)."""
    provider_id = value.get("id") if isinstance(value, dict) else value
    return provider_id == SIMULATED_USER


def check_test(data: dict[str, Any], where: str) -> None:
    for key in data:
        if key == "provider" and simulated_user_provider(data[key]):
            continue
        if key in NOT_RUN:
            more = f" (but `{SIMULATED_USER}`)" if key == "provider" else ""
            raise InputError(
                f"`{key}` ({NOT_RUN[key]}) is not supported{more}", file=where, key=key
            )
        if key not in TEST_KEYS:
            raise InputError(f"unknown key{suggest(key, sorted(TEST_KEYS))}", file=where, key=key)
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise InputError("`options` must be a mapping", file=where, key="options")
    for key, why in OPTIONS_NOT_RUN.items():
        if options.get(key) not in (None, ""):
            raise InputError(
                f"`options.{key}` ({why}) is not supported", file=where, key=f"options.{key}"
            )
    if options.get("repeat") not in (None, 1):
        raise InputError(
            "`options.repeat`: use gate.yml's `repeats`", file=where, key="options.repeat"
        )
    for key in ("vars", "metadata"):
        if data.get(key) is not None and not isinstance(data[key], dict):
            raise InputError(f"`{key}` must be a mapping", file=where, key=key)


def merged(test: dict[str, Any], default: dict[str, Any]) -> dict[str, Any]:
    """`defaultTest` merged into a test, as promptfoo merges it."""
    options = {**(default.get("options") or {}), **(test.get("options") or {})}
    asserts = (
        [] if options.get("disableDefaultAsserts") is True else list(default.get("assert") or [])
    )
    out = dict(test)
    out["vars"] = {**(default.get("vars") or {}), **(test.get("vars") or {})}
    out["assert"] = asserts + list(test.get("assert") or [])
    out["options"] = options
    out["metadata"] = {**(default.get("metadata") or {}), **(test.get("metadata") or {})}
    if test.get("threshold") is None and default.get("threshold") is not None:
        out["threshold"] = default["threshold"]
    for key in ("prompts", "providers", "provider"):
        if test.get(key) is None and default.get(key) is not None:
            out[key] = default[key]
    return out


def expansions(config: PromptfooConfig, vars_: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """promptfoo's `generateVarCombinations`: a list of strings (or a `file://` glob) is one
    test per value; a list of anything else is one value."""
    combinations: list[dict[str, Any]] = [{}]
    for key, value in vars_.items():
        if isinstance(value, str) and value.startswith(FILE) and is_glob(value):
            values: list[Any] = [FILE + p for p in expand(config.files, config.base, value, where)]
        elif isinstance(value, list) and value and isinstance(value[0], str):
            values = value
        else:
            values = [value]
        combinations = [{**c, key: v} for c in combinations for v in values]
    return combinations


def loaded_vars(config: PromptfooConfig, vars_: dict[str, Any], where: str) -> dict[str, Any]:
    """The variables a prompt is rendered with (promptfoo's `renderPrompt`): a `file://`
    variable is its file's text (YAML as JSON), one trailing newline is dropped, and
    `{{ other }}` naming another variable is replaced by it."""
    out: dict[str, Any] = {}
    for key, value in vars_.items():
        if isinstance(value, str) and value.startswith(FILE):
            path = resolve(config.base, value, where)
            if path.endswith(VAR_FILES_NOT_READ):
                raise InputError(
                    f"variable `{key}`: {value!r} is not read here (a script or media file)",
                    file=where,
                )
            text = read(config.files, path, where)
            value = (
                js_stringify(load_yaml12(text, path)[0])
                if path.endswith((".yaml", ".yml"))
                else text.strip()
            )
        out[key] = value.removesuffix("\n") if isinstance(value, str) else value
    return _resolve_references(out)


def _resolve_references(vars_: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's `resolveVariables`: up to five rounds of `{{ name }}` substitution."""
    for _ in range(5):
        changed = False
        for key, value in vars_.items():
            if not isinstance(value, str):
                continue
            found = _VAR_REF.search(value)
            if found and found.group(1) in vars_:
                vars_[key] = value.replace(found.group(0), js_string(vars_[found.group(1)]), 1)
                changed = True
        if not changed:
            break
    return vars_
