"""What `gate validate` checks: first what `gate run` would reject in every suite (the
preflight), then each case's `reference` through the case's own deterministic checks, in the
sandbox when one of them is a code check. A reference that fails them marks a broken case; a
case with no expectation at all (it always passes) is listed as unchecked."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from pydantic import BaseModel

from gate.checks import CheckContext, CheckPlan, plan_checks
from gate.errors import CheckInfraError, InputError
from gate.inputs.cases import Case
from gate.inputs.config import LoadedConfig
from gate.report.models import Status
from gate.report.output import SystemOutput
from gate.run.cases import checked_cases
from gate.run.preflight import preflight, unchecked_cases
from gate.run.runner import status_of


class BrokenCase(BaseModel):
    """A case whose reference does not pass its own checks."""

    id: str
    where: str  # file:line
    status: Status  # fail, error or needs_review
    detail: str


class UncheckedCase(BaseModel):
    """A case without a single check: it passes whatever the system answers."""

    id: str
    where: str  # file:line


class SuiteReferences(BaseModel):
    name: str
    cases: int
    with_reference: int
    broken: list[BrokenCase]
    unchecked: list[UncheckedCase] = []


def rejected(loaded: LoadedConfig, names: list[str], root: Path) -> list[InputError]:
    """Every suite's problems that would stop `gate run`, each naming its file and line."""
    problems: list[InputError] = []
    for name in names:
        suite = loaded.config.suite(name)
        problems += preflight(loaded, suite, root, checked_cases(loaded, suite))
    return list({str(p): p for p in problems}.values())  # a shared pythonpath once


def check_reference(case: Case, ctx: CheckContext) -> tuple[str, str]:
    """(status, detail) of the case's reference run through its deterministic checks (and
    its promptfoo assertions that need no sandbox, judge or call)."""
    plan = plan_checks(case.expect)
    deterministic = CheckPlan(deterministic=plan.deterministic)
    if case.assertions is not None:
        deterministic.assertions = case.assertions.offline()
    try:
        results = deterministic.run(SystemOutput(text=case.reference or ""), case, ctx)
    except CheckInfraError as exc:
        return "error", str(exc)
    failed = [r for r in results if r.passed is False]
    detail = "; ".join(f"{r.name}: {r.detail}" if r.detail else r.name for r in failed)
    return status_of(results), detail


def check_references(loaded: LoadedConfig, name: str, root: Path) -> SuiteReferences:
    """The suite's cases with a reference, each run through its own checks."""
    cases = checked_cases(loaded, loaded.config.suite(name))
    with_ref = [c for c in cases if c.reference is not None]
    broken = []
    with ExitStack() as stack:
        ctx = CheckContext()
        if any(c.expect.has_code_checks for c in with_ref):
            from gate.sandbox import open_sandbox

            ctx.sandbox = stack.enter_context(open_sandbox(loaded.config.sandbox, root))
        for case in with_ref:
            status, detail = check_reference(case, ctx)
            if status != "pass":
                broken.append(
                    BrokenCase(id=case.id, where=case.where, status=status, detail=detail)
                )
    unchecked = [UncheckedCase(id=c.id, where=c.where) for c in unchecked_cases(cases)]
    return SuiteReferences(
        name=name,
        cases=len(cases),
        with_reference=len(with_ref),
        broken=broken,
        unchecked=unchecked,
    )
