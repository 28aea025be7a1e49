"""Every top-level key of a promptfoo config (promptfoo's `config-schema.json`, and the
`assertionTemplates` its guide documents) and what the gate does with it. Pure.

A key is honoured (`HONOURED`: it decides what runs or what passes, as in promptfoo), holds
what `$ref`s point at (`REFERENCED`), shapes only promptfoo's own output (`NO_EFFECT`: the gate
writes its own report and comment), or is refused: exit 2 naming the key, what it does in
promptfoo and what to write instead (`REFUSED`). `evaluateOptions` and `commandLineOptions`
are looked at key by key: those that would change which tests run, how often, with which
grader or on which prompt text are refused the same way; the rest change nothing here.
A key promptfoo does not know is an error with the closest known key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from gate.errors import InputError
from gate.inputs.sourcemap import suggest

HONOURED = {
    "prompts": "each prompt is a suite's system, with each provider",
    "providers": "each provider is a suite's system, with each prompt",
    "targets": "promptfoo's other name for `providers`",
    "tests": "each test is a case",
    "scenarios": "each scenario's config entry × its tests is a case",
    "defaultTest": "merged into every test",
    "env": "rendered into `{{ env.NAME }}` in the config and given to prompts as `env`",
    "metadata": "every test's metadata when `defaultTest` has none (as promptfoo does)",
}
REFERENCED = {"assertionTemplates", "definitions", "$defs", "$schema"}
NO_EFFECT = {"description", "tags", "outputPath", "sharing", "writeLatestResults",
             "derivedMetrics", "tracing"}  # fmt: skip
OPTION_KEYS = {"evaluateOptions", "commandLineOptions"}
_RED_TEAM = (
    "red-teaming generates attacks and grades them with promptfoo's red-team graders, which "
    "the gate does not run: red-team with promptfoo, and gate a config of ordinary tests"
)
REFUSED = {
    "nunjucksFilters": "custom nunjucks filters are JavaScript, which does not run here: use "
    "the built-in filters in the prompt, or put the value into the tests' `vars`",
    "extensions": "extension hooks (beforeAll, beforeEach, ...) are code promptfoo runs around "
    "the eval: put what they prepare into the tests' `vars`",
    "redteam": _RED_TEAM,
    "plugins": _RED_TEAM,
    "strategies": _RED_TEAM,
    "vars": "promptfoo does nothing with a top-level `vars`: shared variables go in "
    "`defaultTest.vars`",
}
_EVERY_TEST = "the gate runs every test (its statistics need them all): remove it"
EVALUATE_REFUSED = {
    "repeat": "use gate.yml's `repeats` (the gate's repeats feed its statistics)",
    "filterRange": _EVERY_TEST,
}
_FILTERS = ("filterFirstN", "filterPattern", "filterSample", "filterSampleSeed", "filterMetadata",
            "filterFailing", "filterFailingOnly", "filterErrorsOnly", "filterPrompts",
            "filterProviders", "filterTargets")  # fmt: skip
COMMAND_LINE_REFUSED = {
    **EVALUATE_REFUSED,
    **dict.fromkeys(_FILTERS, _EVERY_TEST),
    "vars": "name the tests file in `tests`",
    "tests": "name the tests file in `tests`",
    "prompts": "name the prompts in `prompts`",
    "providers": "name the providers in `providers`",
    "var": "put the variables in `defaultTest.vars`",
    "grader": "name the grader in `defaultTest.options.provider`",
    "promptPrefix": "put the text in the prompt",
    "promptSuffix": "put the text in the prompt",
    "assertions": "put the assertions in `defaultTest.assert`",
    "modelOutputs": "the gate asks the providers (`gate run --record` keeps their answers)",
    "config": "name one config in gate.yml's `promptfoo:`",
    "extension": REFUSED["extensions"],
}
KNOWN = sorted({*HONOURED, *REFERENCED, *NO_EFFECT, *OPTION_KEYS, *REFUSED})

Line = Callable[..., int | None]


def check_keys(data: Mapping[str, Any], path: str, line: Line) -> None:
    """Exit 2 at the first key (or option) of the config the gate refuses or does not know;
    `line(*keys)` says where a key is written."""
    for key in data:
        if key in REFUSED:
            raise InputError(
                f"not supported here: {REFUSED[key]}", file=path, line=line(key), key=key
            )
        if key not in KNOWN:
            raise InputError(
                f"unknown key{suggest(key, KNOWN)}", file=path, line=line(key), key=key
            )
    for key, refused in (
        ("evaluateOptions", EVALUATE_REFUSED),
        ("commandLineOptions", COMMAND_LINE_REFUSED),
    ):
        options = data.get(key)
        if options is None:
            continue
        if not isinstance(options, dict):
            raise InputError(f"`{key}` must be a mapping", file=path, line=line(key), key=key)
        for name in options:
            if name in refused and not (name == "repeat" and options[name] in (None, 1)):
                raise InputError(
                    f"not supported here: {refused[name]}",
                    file=path,
                    line=line(key, name),
                    key=f"{key}.{name}",
                )
