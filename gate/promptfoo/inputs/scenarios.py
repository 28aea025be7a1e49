"""promptfoo's `scenarios`: each scenario's `config` entries (sets of variables, and
assertions, metadata and options for them) run through each of its `tests`, after the
config's own tests, as promptfoo's evaluator builds them.

A scenario is written inline or in `file://` files (globs too; a file may hold one scenario
or a list). Its `tests` are read as `tests:` is (inline, files, globs, CSV; `file://` paths
relative to the config's folder; without any, its config entries run alone); its `config`
entries are mappings, or `$values` (also `$expand`) naming a file of them. A test of a
scenario is promptfoo's merge of the two: the entry's and the test's keys (the test's win),
their `vars`, `options` and `metadata` merged, the entry's `assert` before the test's,
`defaultTest`'s description when neither has one; `defaultTest` is merged into it
afterwards like into any test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gate.errors import InputError
from gate.inputs.sourcemap import Locator
from gate.promptfoo.inputs.config import PromptfooConfig
from gate.promptfoo.inputs.files import FILE, expand, load_ref, read
from gate.promptfoo.inputs.tests import Place, RawTest, check_test, read_tests
from gate.promptfoo.inputs.yaml12 import load_yaml12

SCENARIO_KEYS = {"description", "config", "tests"}
VALUES = ("$values", "$expand")


@dataclass
class Scenario:
    """One scenario, and where it is written (its file, and its keys' path in that file)."""

    data: dict[str, Any]
    file: str
    locator: Locator
    at: tuple[str | int, ...]

    def line(self, *keys: str | int) -> int:
        return self.locator.line((*self.at, *keys)) or 0

    def where(self, *keys: str | int) -> str:
        line = self.line(*keys)
        return f"{self.file}:{line}" if line else self.file


def scenarios(config: PromptfooConfig) -> list[Scenario]:
    """The config's scenarios, those of its files in order."""
    value = config.data.get("scenarios")
    if value is None:
        return []
    entries = value if isinstance(value, list) else [value]
    found: list[Scenario] = []
    for index, entry in enumerate(entries):
        where = config.where("scenarios", index) if isinstance(value, list) else config.path
        if isinstance(entry, str) and entry.startswith(FILE):
            found += _from_files(config, entry, where)
        elif isinstance(entry, dict):
            at = ("scenarios", index) if isinstance(value, list) else ("scenarios",)
            found.append(Scenario(entry, config.path, config.locator, at))
        else:
            raise InputError(
                f"a scenario must be a mapping or a `file://` file, got {entry!r}", file=where
            )
    return found


def _from_files(config: PromptfooConfig, ref: str, where: str) -> list[Scenario]:
    found: list[Scenario] = []
    for path in expand(config.files, config.base, ref, where):
        data, locator = load_yaml12(read(config.files, path, where), path)
        items = data if isinstance(data, list) else [data]
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise InputError(f"a scenario must be a mapping, got {item!r}", file=path)
            at: tuple[str | int, ...] = (index,) if isinstance(data, list) else ()
            found.append(Scenario(item, path, locator, at))
    return found


def scenario_tests(config: PromptfooConfig, default: dict[str, Any]) -> list[tuple[str, RawTest]]:
    """Each test of each scenario with each of its config entries, named for errors."""
    out: list[tuple[str, RawTest]] = []
    for number, scenario in enumerate(scenarios(config), start=1):
        _check(scenario)
        tests = _tests(config, scenario)
        for entry, data in enumerate(_entries(config, scenario), start=1):
            for index, test in enumerate(tests, start=1):
                check_test(test.data, test.where)
                name = f"scenario {number}, config {entry}, test {index}"
                out.append((name, _merged(test, data, default)))
    return out


def _check(scenario: Scenario) -> None:
    for key in scenario.data:
        if key not in SCENARIO_KEYS:
            raise InputError(
                f"unknown key of a scenario (it takes {', '.join(sorted(SCENARIO_KEYS))})",
                file=scenario.where(key),
                key=key,
            )
    if not isinstance(scenario.data.get("config"), list):
        raise InputError("a scenario's `config` must be a list", file=scenario.where("config"))


def _tests(config: PromptfooConfig, scenario: Scenario) -> list[RawTest]:
    """The scenario's tests; without any, one empty test (promptfoo runs the config entries
    alone then)."""
    if scenario.data.get("tests") is None:
        return [RawTest({}, scenario.file, scenario.line(), config.base)]
    place = Place(scenario.file, lambda index: scenario.line("tests", index))
    return read_tests(config, scenario.data["tests"], place, scenario.where("tests"))


def _entries(config: PromptfooConfig, scenario: Scenario) -> list[dict[str, Any]]:
    """The scenario's config entries, those `$values` names read from their files."""
    found: list[dict[str, Any]] = []
    for index, entry in enumerate(scenario.data["config"]):
        where = scenario.where("config", index)
        if isinstance(entry, dict) and any(key in entry for key in VALUES):
            ref = next(entry[key] for key in VALUES if key in entry)
            loaded = load_ref(config.files, config.base, ref, where)
            items = loaded if isinstance(loaded, list) else [loaded]
        else:
            items = [entry]
        for item in items:
            if not isinstance(item, dict):
                raise InputError(
                    f"a scenario's config entry must be a mapping: {item!r}", file=where
                )
            check_test(item, where)
            found.append(item)
    return found


def _merged(test: RawTest, data: dict[str, Any], default: dict[str, Any]) -> RawTest:
    """promptfoo's `mergeScenarioTest`, but for what merging `defaultTest` adds again."""
    own = test.data
    out: dict[str, Any] = {**data, **own}
    if "description" not in out and isinstance(default.get("description"), str):
        out["description"] = default["description"]
    out["vars"] = {**(data.get("vars") or {}), **(own.get("vars") or {})}
    out["options"] = {**(data.get("options") or {}), **(own.get("options") or {})}
    out["metadata"] = {**(data.get("metadata") or {}), **(own.get("metadata") or {})}
    out["assert"] = [*(data.get("assert") or []), *(own.get("assert") or [])]
    return RawTest(out, test.file, test.line, test.base)
