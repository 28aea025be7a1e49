"""A suite's cases as a run measures them: read from the measuring config's checkout, and
refused when a case needs a service (a judge, a grader, a simulated user) the config does not
name."""

from __future__ import annotations

from pathlib import Path

from gate.errors import InputError
from gate.inputs.cases import Case, load_cases
from gate.inputs.config import LoadedConfig, SuiteConfig
from gate.inputs.paths import display_path
from gate.run.preflight import python_check_problems
from gate.run.provenance import find_repo_root


def checked_cases(loaded: LoadedConfig, suite: SuiteConfig) -> list[Case]:
    """The suite's cases, read from the config's checkout (the base's, in the PR flow); none
    for an inspect or pytest suite (its runner lists its framework's)."""
    if suite.framework is not None:
        return []
    cases = read_suite_cases(loaded, suite)
    if not cases:
        raise InputError(f"suite {suite.name!r} has no cases", file=loaded.path, key="cases")
    require_services(loaded, cases)
    return cases


def read_suite_cases(loaded: LoadedConfig, suite: SuiteConfig) -> list[Case]:
    """The cases of `suite` (its case files, or its promptfoo config's tests), shown by their
    path in the config's repository; none for an inspect or pytest suite."""
    if suite.framework is not None:
        return []
    display_root = find_repo_root(loaded.base_dir) or loaded.base_dir
    if suite.promptfoo is not None:
        from gate.promptfoo.inputs.suites import suite_cases as promptfoo_suite_cases

        return promptfoo_suite_cases(loaded.path, suite)
    try:
        return load_cases(suite.cases or [], loaded.base_dir, display_root)
    except InputError as exc:
        if exc.key != "cases" or exc.line is not None:
            raise
        raise InputError(  # no file matched: named at the suite's `cases:` line
            f"suite {suite.name!r}: {exc.message}",
            file=display_path(loaded.path, display_root),
            line=loaded.suite_line(suite.name, "cases"),
            key="cases",
        ) from None


def added_cases(
    new: list[Case], measuring: LoadedConfig, checks_root: Path
) -> tuple[list[Case], list[Case]]:
    """Cases the measuring suite lacks, marked `added`: those the measuring instrument can
    judge, and those left out because it cannot (their `expect.python` code is not in
    `checks_root`, their `expect.rubric` needs a judge the measuring gate.yml lacks, or their
    `user` a simulated user it lacks)."""
    marked = [c.model_copy(update={"added": True}) for c in new]
    no_judge = measuring.config.judge is None
    no_user = measuring.config.simulated_user is None

    def judgeable(case: Case) -> bool:
        if no_judge and (case.expect.rubric or any(a.grader is None for a in case.graded)):
            return False
        if no_user and case.simulated:
            return False
        return not python_check_problems(measuring, checks_root, [case])

    judged = [c for c in marked if judgeable(c)]
    return judged, [c for c in marked if c not in judged]


def require_services(loaded: LoadedConfig, cases: list[Case]) -> None:
    """A case that asks the judge (or a grader), or has a model play its user, when gate.yml
    names none is bad input."""
    simulated = [c for c in cases if c.simulated]
    if simulated and loaded.config.simulated_user is None:
        raise InputError(
            f"case {simulated[0].id!r} has a simulated `user` but gate.yml has no "
            "`simulated_user` (a model, shaped as `judge`)",
            file=simulated[0].file,
            line=simulated[0].line,
            key="user",
        )
    if loaded.config.judge is not None:
        return
    needing = [c for c in cases if c.expect.rubric]
    if needing:
        raise InputError(
            f"case {needing[0].id!r} has `expect.rubric` but gate.yml has no `judge`",
            file=needing[0].file,
            line=needing[0].line,
            key="expect.rubric",
        )
    ungraded = [c for c in cases if any(a.grader is None for a in c.graded)]
    if ungraded:
        raise InputError(
            f"case {ungraded[0].id!r} has an `llm-rubric` assertion but no grader: name one "
            "in the promptfoo config (`defaultTest.options.provider`) or set `judge` in "
            "gate.yml",
            file=ungraded[0].file,
            line=ungraded[0].line,
            key="assert",
        )
