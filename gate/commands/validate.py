"""`gate validate`: lint the config and suites, find what `gate run` would reject (missing
system files, prompts that do not render for a case, a pythonpath that is not a folder, a
target that does not import, a python check's missing module, comment templates that do not
compile), warn about cases with no expectation (they always pass), and check every case's
`reference` (`gate.run.validation`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gate.errors import InputError
from gate.flow.plan import comment_templates
from gate.inputs.config import LoadedConfig, load_config
from gate.render import check_templates
from gate.run.validation import SuiteReferences, check_references, rejected


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "validate",
        help="lint config and suites; run each case's reference through its own checks",
        description=(
            "Check, without calling a model, what `gate run` would refuse: the config, the "
            "case files, the files each system names (prompts, model configs, a python "
            "target, the sandbox's pythonpath) and the comment templates, each problem with "
            "its file, line and key. Then run each case's `reference` through the case's own "
            "checks: a case whose reference fails is broken. Exit 0 ok, 1 broken cases, 2 bad "
            "input."
        ),
    )
    p.add_argument("-c", "--config", default="gate.yml", help="config file (default: gate.yml)")
    p.add_argument("--suite", help="only this suite")
    p.add_argument(
        "--root",
        default=".",
        help="the checkout whose prompts, model configs, code and pythonpath are used (default: .)",
    )
    p.add_argument(
        "--format",
        choices=["text", "json"],
        default="text",
        help="text for a person, json for a script (default: text)",
    )
    p.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    loaded = load_config(args.config)
    names = [args.suite] if args.suite else [s.name for s in loaded.config.suites]
    root = Path(args.root).resolve()
    problems = rejected(loaded, names, root) + template_problems(loaded, root)
    if problems:
        for problem in problems:
            print(f"gate: error: {problem}", file=sys.stderr)
        return InputError.exit_code
    suites = [check_references(loaded, name, root) for name in names]
    for suite in suites:
        for case in suite.unchecked:
            print(
                f"gate: warning: {case.where}: case {case.id!r} has no expectation: it passes "
                "whatever the system answers",
                file=sys.stderr,
            )
    broken = sum(len(suite.broken) for suite in suites)
    if args.format == "json":
        report = {"config": str(loaded.path), "suites": [s.model_dump() for s in suites]}
        print(json.dumps(report, indent=2))
    else:
        print_text(suites)
    return 1 if broken else 0


def template_problems(loaded: LoadedConfig, root: Path) -> list[InputError]:
    """The comment templates read from the checkout as the flow reads them, and compiled."""
    try:
        templates = comment_templates(loaded, root)
        if templates is not None:
            check_templates(templates)
    except InputError as exc:
        return [exc]
    return []


def print_text(suites: list[SuiteReferences]) -> None:
    for suite in suites:
        without = len(suite.unchecked)
        print(
            f"{suite.name}: {suite.cases} cases, {suite.with_reference} with a "
            f"reference, {len(suite.broken)} broken"
            + (f", {without} without an expectation" if without else "")
        )
        for item in suite.broken:
            print(f"  {item.where}: {item.id}: reference {item.status}: {item.detail}")
    broken = sum(len(suite.broken) for suite in suites)
    print(
        "ok" if not broken else f"{broken} broken case(s): their reference fails their own checks"
    )
