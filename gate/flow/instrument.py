"""What measures a suite in the PR flow: the base's instrument, whatever the head says.

The instrument is the base commit's: its gate.yml's suite (parsed once, by the plan), the
cases its case files hold (by id, read from the base's checkout), the checks and their code
(the base's checkout judges), the judge, `prices`, the sandbox's limits. Both sides are
measured with it (`Measure`); each runs its own system (`OwnSystem`: the head's from the
head's gate.yml, the base's from the base's). Cases the PR adds are asked of both sides and
kept apart in the comparison. A suite the base lacks is new: the head measures itself, alone.
Without a base gate.yml (the first PR) the head's instrument is all there is; a base whose
gate.yml or case files cannot be read measures nothing (an error), and the head's never takes
its place.

An inspect or pytest suite's instrument is the base's framework block and the files its
`instrument:` globs name in the base's checkout: each side's runner lays them over its own
checkout (`gate.frameworks`), and a PR's edit to them is listed (`gate.flow.framework_changes`).

`suite_instrument` decides all that for one suite, with what the PR changes in the instrument
(`gate.flow.instrument_diff`) and what the head's own instrument is asked (`Rejudge`, see
`gate.flow.rejudge`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gate.compare.findings import BaseUnreadable, Finding
from gate.errors import InputError
from gate.flow.framework_changes import framework_findings
from gate.flow.instrument_diff import SuiteDefinition, changes_judging, instrument_changes
from gate.flow.plan import FlowPlan, SuitePlan
from gate.inputs.cases import Case, resolve_case_paths
from gate.inputs.config import LoadedConfig
from gate.run.cases import added_cases, checked_cases, read_suite_cases
from gate.run.endpoint_keys import judge_key_problem, system_key_problem
from gate.run.preflight import (
    framework_files_problems,
    python_check_problems,
    pythonpath_problems,
    system_files_problems,
)
from gate.run.spec import Measure, OwnSystem, first_repeats, measure_of, own_of


@dataclass(frozen=True)
class Rejudge:
    """The head's own instrument asked about the same answers: its cases whose answers both
    sides gave (`measure`, judged in the head's checkout), those whose input the PR changes or
    that were never asked (`left_out`), and the runs of each, as round 0 of the sides ran
    them (`measure.repeats`). `problem`: why the head's instrument cannot be asked."""

    measure: Measure | None
    left_out: tuple[str, ...]
    problem: str | None = None


@dataclass(frozen=True)
class SuiteInstrument:
    """How one suite is measured: the instrument of both sides, each side's own system (the
    base's None: a new suite, the head runs alone), what the PR changes, what the head's
    instrument is asked (None: nothing that judges changed), and why the base cannot run
    (`base_problem`: its own system's files) or cannot measure at all (`problem`)."""

    measure: Measure | None
    head_own: OwnSystem | None
    base_own: OwnSystem | None = None
    auto: bool = False  # `repeats: auto` by the measuring gate.yml
    changes: tuple[Finding, ...] = ()
    rejudge: Rejudge | None = None
    base_problem: str | None = None
    problem: Finding | None = None


def head_cases(loaded: LoadedConfig, name: str) -> list[Case]:
    """The head's cases of the suite: none when its `cases:` names no file any more (every
    base case is then removed by the PR, and still measured); a file it names that cannot be
    read or holds a bad case is the PR's bad input."""
    suite = next((s for s in loaded.config.suites if s.name == name), None)
    if suite is None:
        return []
    if suite.promptfoo is None:
        try:
            resolve_case_paths(suite.cases or [], loaded.base_dir)
        except InputError:
            return []
    return read_suite_cases(loaded, suite)


def suite_instrument(plan: FlowPlan, suite: SuitePlan, base_root: Path) -> SuiteInstrument:
    baseline, head = plan.baseline, plan.request.config
    if baseline.problem is not None:  # nothing measures: never the head's instead
        return SuiteInstrument(None, None, problem=BaseUnreadable(problem=baseline.problem))
    if baseline.shared:  # one config outside the repository measures both: the base's code
        return _own_instrument(head, suite.name, base_root, baseline=True)
    if not suite.baseline or baseline.loaded is None:  # a new suite, or the first gate.yml
        return _own_instrument(head, suite.name, plan.request.revisions.repo.root)
    return _base_instrument(plan, suite.name, baseline.loaded, base_root)


def _own_instrument(
    loaded: LoadedConfig, name: str, checks_root: Path, *, baseline: bool = False
) -> SuiteInstrument:
    """One config measures and runs: a new suite (the head alone), or a config outside the
    repository that both sides share (`baseline`)."""
    suite = loaded.config.suite(name)
    own = own_of(loaded, suite)
    measure = measure_of(loaded, suite, checked_cases(loaded, suite), checks_root)
    auto = loaded.config.repeats == "auto"
    return SuiteInstrument(measure, own, own if baseline else None, auto=auto)


def _base_instrument(
    plan: FlowPlan, name: str, base: LoadedConfig, base_root: Path
) -> SuiteInstrument:
    head, head_root = plan.request.config, plan.request.revisions.repo.root
    base_suite = base.config.suite(name)
    if base_suite.framework is not None:
        return _framework_instrument(plan, name, base, base_root)
    try:
        base_cases = checked_cases(base, base_suite)
        problems = python_check_problems(base, base_root, base_cases)
        if problems:
            raise problems[0]
    except InputError as exc:
        return SuiteInstrument(None, None, problem=BaseUnreadable(problem=str(exc)))
    judge_key = judge_key_problem(base, base_cases, plan.request.io.environ)
    if judge_key is not None:  # neither side can be judged: the job's to fix (exit 2)
        raise judge_key
    new = head_cases(head, name)
    known = {c.id for c in base_cases}
    judged, unjudged = added_cases([c for c in new if c.id not in known], base, base_root)
    head_suite = head.config.suite(name)
    changes = instrument_changes(
        SuiteDefinition(base, base_suite, base_cases, base_root),
        SuiteDefinition(head, head_suite, new, head_root),
        [c.id for c in unjudged],
    )
    measure = measure_of(base, base_suite, [*base_cases, *judged], base_root)
    rejudge = None
    if changes_judging(changes):
        asked = (base_cases, new, judged)
        same_user = base.config.simulated_user == head.config.simulated_user
        rejudge = _rejudge(head, name, asked, head_root, first_repeats(base.config), same_user)
    return SuiteInstrument(
        measure=measure,
        head_own=own_of(head, head_suite),
        base_own=own_of(base, base_suite),
        auto=base.config.repeats == "auto",
        changes=tuple(changes),
        rejudge=rejudge,
        base_problem=_base_problem(base, base_suite.name, base_root, plan.request.io.environ),
    )


def _framework_instrument(
    plan: FlowPlan, name: str, base: LoadedConfig, base_root: Path
) -> SuiteInstrument:
    """An inspect or pytest suite: the base's framework block and instrument files measure
    both sides, each side runs its own code (and model); what the PR changes in them and in
    gate.yml is listed. The head's own instrument is not asked: a framework's answers cannot
    be judged again without running it."""
    head, head_root = plan.request.config, plan.request.revisions.repo.root
    base_suite, head_suite = base.config.suite(name), head.config.suite(name)
    missing = framework_files_problems(base, base_suite, base_root)
    if missing:  # the base's task or tests are what measures: nothing can
        return SuiteInstrument(None, None, problem=BaseUnreadable(problem=str(missing[0])))
    definitions = (
        SuiteDefinition(base, base_suite, [], base_root),
        SuiteDefinition(head, head_suite, [], head_root),
    )
    changes = [
        *instrument_changes(*definitions),
        *framework_findings(base_root, head_root, base_suite, head_suite),
    ]
    return SuiteInstrument(
        measure=measure_of(base, base_suite, [], base_root),
        head_own=own_of(head, head_suite),
        base_own=own_of(base, base_suite),
        auto=base.config.repeats == "auto",
        changes=tuple(changes),
        base_problem=_base_problem(base, name, base_root, plan.request.io.environ),
    )


def _base_problem(
    base: LoadedConfig, name: str, root: Path, environ: Mapping[str, str]
) -> str | None:
    """Why the base's own system cannot run in its checkout (a file it names is missing, the
    key it needs is not set)."""
    suite = base.config.suite(name)
    problems = system_files_problems(base, suite, root) + pythonpath_problems(base, root)
    key = system_key_problem(base, suite, root, environ)
    problems += [key] if key is not None else []
    return str(problems[0]) if problems else None


def _rejudge(
    head: LoadedConfig,
    name: str,
    asked_cases: tuple[list[Case], list[Case], list[Case]],
    head_root: Path,
    repeats: int,
    same_user: bool = True,
) -> Rejudge:
    """The head's cases whose answers both sides gave (of the base's cases, the head's and
    the added ones asked): the ones the base has with the same input (and, for an agent, the
    same tools, turns and simulated user: else its conversation would have gone otherwise),
    and the added ones that were asked; measured by the head's instrument, its code judging
    in the head's checkout."""
    base_cases, new, judged = asked_cases
    before = {c.id: c for c in base_cases}
    asked = {c.id for c in judged}

    def same_conversation(case: Case) -> bool:
        old = before.get(case.id)
        if old is None or (old.input, old.agent) != (case.input, case.agent):
            return False
        return same_user or not case.simulated

    answered = [c for c in new if same_conversation(c) or c.id in asked]
    left = tuple(c.id for c in new if c not in answered)
    if not answered:
        return Rejudge(None, left, problem="none of the head's cases was answered by both sides")
    suite = head.config.suite(name)
    try:
        cases = checked_cases(head, suite)  # its judge and graders are there for its cases
    except InputError as exc:
        return Rejudge(None, left, problem=str(exc))
    ids = {c.id for c in answered}
    chosen = [c for c in cases if c.id in ids]
    measure = measure_of(head, suite, chosen, head_root)
    return Rejudge(measure.model_copy(update={"repeats": repeats}), left)
