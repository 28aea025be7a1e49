"""`gate validate`: lint the config and suites, find what `gate run` would reject (missing
system files, prompts that do not render for a case, a pythonpath that is not a folder, a
target that does not import) and comment templates that do not compile, and check every
case's `reference`."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from gate.checks import CheckContext, CheckPlan, plan_checks
from gate.errors import CheckInfraError, InputError
from gate.flow.plan import comment_templates
from gate.inputs.cases import Case
from gate.inputs.config import LoadedConfig, load_config
from gate.render import check_templates
from gate.report.output import SystemOutput
from gate.run.preflight import preflight
from gate.run.runner import status_of
from gate.run.side import suite_cases


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "validate",
        help="lint config and suites; run each case's reference through its own checks",
    )
    p.add_argument("-c", "--config", default="gate.yml", help="config file (default: gate.yml)")
    p.add_argument("--suite", help="only this suite")
    p.add_argument(
        "--root",
        default=".",
        help="the checkout whose prompts, model configs, code and pythonpath are used (default: .)",
    )
    p.add_argument("--format", choices=["text", "json"], default="text")
    p.set_defaults(handler=handle)


def check_reference(case: Case, ctx: CheckContext) -> tuple[str, str]:
    """(status, detail) of the case's reference run through its deterministic checks."""
    plan = plan_checks(case.expect)
    deterministic = CheckPlan(deterministic=plan.deterministic)
    try:
        results = deterministic.run(SystemOutput(text=case.reference or ""), case, ctx)
    except CheckInfraError as exc:
        return "error", str(exc)
    failed = [r for r in results if r.passed is False]
    detail = "; ".join(f"{r.name}: {r.detail}" if r.detail else r.name for r in failed)
    return status_of(results), detail


def rejected(loaded: LoadedConfig, names: list[str], root: Path) -> list[InputError]:
    """Every suite's problems that would stop `gate run`, each naming its file and line."""
    problems: list[InputError] = []
    for name in names:
        suite = loaded.config.suite(name)
        problems += preflight(loaded, suite, root, suite_cases(loaded, suite))
    try:  # the comment templates: read from the checkout, compiled
        templates = comment_templates(loaded, root)
        if templates is not None:
            check_templates(templates)
    except InputError as exc:
        problems.append(exc)
    return list({str(p): p for p in problems}.values())  # a shared pythonpath once


def handle(args: argparse.Namespace) -> int:
    loaded = load_config(args.config)
    names = [args.suite] if args.suite else [s.name for s in loaded.config.suites]
    problems = rejected(loaded, names, Path(args.root).resolve())
    if problems:
        for problem in problems:
            print(f"gate: error: {problem}", file=sys.stderr)
        return InputError.exit_code
    report: dict[str, Any] = {"config": str(loaded.path), "suites": []}
    broken = 0
    for name in names:
        cases = suite_cases(loaded, loaded.config.suite(name))
        with ExitStack() as stack:
            ctx = CheckContext()
            with_ref = [c for c in cases if c.reference is not None]
            if any(c.expect.has_code_checks for c in with_ref):
                from gate.sandbox import open_sandbox

                ctx.sandbox = stack.enter_context(
                    open_sandbox(loaded.config.sandbox, Path(args.root).resolve())
                )
            failures = []
            for case in with_ref:
                status, detail = check_reference(case, ctx)
                if status != "pass":
                    failures.append(
                        {"id": case.id, "where": case.where, "status": status, "detail": detail}
                    )
        broken += len(failures)
        report["suites"].append(
            {
                "name": name,
                "cases": len(cases),
                "with_reference": len(with_ref),
                "broken": failures,
            }
        )
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        for suite in report["suites"]:
            print(
                f"{suite['name']}: {suite['cases']} cases, {suite['with_reference']} with a "
                f"reference, {len(suite['broken'])} broken"
            )
            for item in suite["broken"]:
                print(
                    f"  {item['where']}: {item['id']}: reference {item['status']}: {item['detail']}"
                )
        print(
            "ok"
            if not broken
            else f"{broken} broken case(s): their reference fails their own checks"
        )
    return 1 if broken else 0
