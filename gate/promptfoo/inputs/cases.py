"""A promptfoo config's tests as the gate's cases: the test's `vars` are the input, its
assertions (with `defaultTest`'s) the checks, run with promptfoo's semantics.

**Case ids.** A test's `description` is its id when no other case has it. A description
several cases share (several tests, or one that var expansion made into several) is followed
by 8 hex digits of a hash of the case's own variables: `capital [3f2a91c0]`. A test without a
description gets an id derived from its own variables as written (not those `defaultTest`
adds, unless expansion made several tests of one): a readable part (their values in the
order of their names, lowercased, at most 40 characters) and the same 8 hex digits, like
`what-is-the-capital-of-france-3f2a91c0`. An id depends on nothing else, so inserting,
removing or moving other tests never changes it; tests with the very same description and
variables get `#2`, `#3`, ... in file order.

The case's `task` is the name of the file the test is written in, `severity` and `heldout`
come from the test's `metadata` (`severity: blocker`), and `file`/`line` say where it is.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any

from gate.errors import InputError
from gate.inputs.cases import Case
from gate.inputs.policy import SEVERITIES
from gate.promptfoo.inputs.assertion_values import parse_assertions, transform_target
from gate.promptfoo.inputs.assertions import AssertionContext, AssertionSet
from gate.promptfoo.inputs.config import PromptfooConfig
from gate.promptfoo.inputs.files import read
from gate.promptfoo.inputs.prompts import Prompt
from gate.promptfoo.inputs.providers import ProviderSpec, allowed_ref
from gate.promptfoo.inputs.scenarios import scenario_tests
from gate.promptfoo.inputs.tests import (
    RawTest,
    check_test,
    default_test,
    expansions,
    loaded_vars,
    merged,
    raw_tests,
)

SLUG_CHARS = 40


def vars_digest(vars_: dict[str, Any]) -> str:
    canonical = json.dumps(vars_, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:8]


def vars_id(vars_: dict[str, Any]) -> str:
    """The id of a test derived from its variables (see the module's docstring)."""
    digest = vars_digest(vars_)
    values = [vars_[k] for k in sorted(vars_)]
    words = " ".join(str(v) for v in values if v is not None and not isinstance(v, dict))
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:SLUG_CHARS].strip("-")
    return f"{slug}-{digest}" if slug else f"vars-{digest}"


def case_ids(descriptions: list[str | None], variables: list[dict[str, Any]]) -> list[str]:
    """Each case's id, from its test's description and its variables as written."""
    counts = Counter(d for d in descriptions if d)
    ids: list[str] = []
    seen: Counter[str] = Counter()
    for description, vars_ in zip(descriptions, variables, strict=True):
        if description and counts[description] == 1:
            base = description
        elif description:
            base = f"{description} [{vars_digest(vars_)}]"
        else:
            base = vars_id(vars_)
        seen[base] += 1
        ids.append(base if seen[base] == 1 else f"{base}#{seen[base]}")
    return ids


def _applies(test: dict[str, Any], prompt: Prompt | None, provider: ProviderSpec | None) -> bool:
    """A test's `prompts:` and `providers:` filters."""
    prompts, providers = test.get("prompts"), test.get("providers")
    if (
        prompt is not None
        and isinstance(prompts, list)
        and not any(allowed_ref(str(ref), prompt.names) for ref in prompts)
    ):
        return False
    if provider is not None and isinstance(providers, list):
        names = (provider.id, *((provider.label,) if provider.label else ()))
        return any(allowed_ref(str(ref), names) for ref in providers)
    return True


def _severity(metadata: dict[str, Any], where: str) -> str:
    severity = metadata.get("severity", "major")
    if severity not in SEVERITIES:
        raise InputError(
            f"`metadata.severity` {severity!r} is not one of {', '.join(SEVERITIES)}", file=where
        )
    return str(severity)


def promptfoo_cases(
    config: PromptfooConfig, prompt: Prompt | None = None, provider: ProviderSpec | None = None
) -> list[Case]:
    """The cases of the config's tests (those `prompt` and `provider` run, when given)."""
    default = default_test(config)
    if default:
        check_test(default, config.where("defaultTest"))
    rows: list[tuple[RawTest, dict[str, Any], dict[str, Any]]] = []
    named: list[dict[str, Any]] = []  # the variables each id is derived from
    tests = [(f"test {index + 1}", raw) for index, raw in enumerate(raw_tests(config))]
    for name, raw in [*tests, *scenario_tests(config, default)]:
        check_test(raw.data, raw.where)
        test = merged(raw.data, default)
        if not _applies(test, prompt, provider):
            continue
        options = test["options"]
        combos = [test["vars"]] if options.get("disableVarExpansion") else None
        own = set(raw.data.get("vars") or {})
        for vars_ in combos or expansions(config, test["vars"], raw.where):
            rows.append((raw, {**test, "_name": name}, vars_))
            expanded = {k for k, v in test["vars"].items() if isinstance(v, list)}
            named.append({k: v for k, v in vars_.items() if k in own or k in expanded})
    descriptions = [
        t.get("description") if isinstance(t.get("description"), str) else None for _, t, _ in rows
    ]
    ids = case_ids(descriptions, named)
    return [
        _case(config, raw, test, vars_, case_id)
        for (raw, test, vars_), case_id in zip(rows, ids, strict=True)
    ]


def _case(
    config: PromptfooConfig, raw: RawTest, test: dict[str, Any], vars_: dict[str, Any], case_id: str
) -> Case:
    where = raw.where
    values = loaded_vars(config, vars_, where)
    description = test.get("description")
    name = test["_name"] + (f" ({description})" if description else "")
    ctx = AssertionContext(
        where=where,
        test=name,
        vars=values,
        env=config.env,
        options=test["options"],
        base=config.base,
        read=lambda path: read(config.files, path, where),
    )
    threshold = test.get("threshold")
    if threshold is not None and (
        isinstance(threshold, bool) or not isinstance(threshold, int | float)
    ):
        raise InputError(f"{name}: `threshold` must be a number", file=where)
    options = test["options"]
    key = "transform" if options.get("transform") else "postprocess"  # promptfoo's `||`
    transform = options.get(key) or None
    assertions = AssertionSet(
        assertions=parse_assertions(test.get("assert"), ctx),
        threshold=float(threshold) if threshold is not None else None,
        transform=None if transform is None else transform_target(transform, f"options.{key}", ctx),
    )
    metadata: dict[str, Any] = dict(test.get("metadata") or {})
    if isinstance(description, str):
        metadata = {"description": description, **metadata}
    agent = None
    if test.get("provider") is not None:  # promptfoo's simulated user (check_test)
        from gate.promptfoo.inputs.simulated import simulated_agent

        agent = simulated_agent(test["provider"], ctx)
    return Case(
        id=case_id,
        task=raw.file.rsplit("/", 1)[-1].rsplit(".", 1)[0],
        severity=_severity(metadata, where),  # type: ignore[arg-type]
        heldout=metadata.get("heldout") is True,
        input=values,
        metadata=metadata,
        assertions=assertions,
        input_is_vars=True,
        agent=agent,
        file=raw.file,
        line=raw.line,
    )
