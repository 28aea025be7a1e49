"""What measures a suite in the PR flow: the base's instrument, whatever the head says.

The instrument is the base commit's: its gate.yml's suite, the cases its case files hold (by
id), the checks and their code (the base's checkout judges, `--checks-root`), the judge,
`prices`, the sandbox's limits. Both sides run `gate run` with the base's gate.yml; the head's
gate.yml is the head side's `--system-config` (its `system` and its SDK run). Cases the PR adds
are asked of both sides (`--added-cases`, the head's gate.yml) and kept apart in the
comparison. A suite the base lacks is new: the head measures itself, alone. Without a base
gate.yml (the first PR) the head's instrument is all there is; a base whose gate.yml or case
files cannot be read measures nothing (an error), and the head's never takes its place.

`suite_instrument` decides all that for one suite in the base's checkout, with what the PR
changes in the instrument (`gate.flow.instrument_diff`) and what the head's own instrument is
asked (`Rejudge`, see `gate.flow.rejudge`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gate.compare.findings import BaseUnreadable, Finding
from gate.errors import InputError
from gate.flow.framework_changes import framework_findings
from gate.flow.instrument_diff import Side, changes_judging, instrument_changes
from gate.flow.plan import FlowPlan, SuitePlan
from gate.inputs.cases import Case, resolve_case_paths
from gate.inputs.config import GateConfig, LoadedConfig, SuiteConfig, load_config
from gate.run.side import added_cases, first_repeats, read_suite_cases, suite_cases


@dataclass(frozen=True)
class Rejudge:
    """The head's own instrument asked about the same answers: its cases whose answers both
    sides gave (`ids`), those whose input the PR changes or that were never asked
    (`left_out`), and the runs of each, as round 0 of the sides ran them."""

    ids: tuple[str, ...]
    left_out: tuple[str, ...]
    repeats: int


@dataclass(frozen=True)
class SuiteInstrument:
    """How one suite is measured: the gate.yml whose cases and checks measure both sides,
    the checkout whose code judges, the head side's own gate.yml (None: the measuring one is
    its own), whether the PR adds cases, what it changes, and what the head's instrument is
    asked (None: nothing that judges changed). `problem`: the base cannot measure."""

    measuring: Path
    config: GateConfig  # the measuring gate.yml's (its repeats, for the rounds of auto)
    checks_root: Path
    head_own: Path | None = None
    adds_cases: bool = False
    changes: tuple[Finding, ...] = ()
    rejudge: Rejudge | None = None
    problem: Finding | None = field(default=None)


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
    request, baseline = plan.request, plan.baseline
    head, head_root = request.config, request.revisions.repo.root
    if baseline.problem is not None:  # nothing measures: never the head's instead
        problem = BaseUnreadable(problem=baseline.problem)
        return SuiteInstrument(head.path, head.config, base_root, problem=problem)
    if baseline.shared:  # one config outside the repository measures both: the base's code
        return SuiteInstrument(measuring=head.path, config=head.config, checks_root=base_root)
    if not suite.baseline or baseline.loaded is None:  # a new suite, or the first gate.yml
        return SuiteInstrument(measuring=head.path, config=head.config, checks_root=head_root)
    measuring = baseline.config_in(base_root)
    assert measuring is not None
    try:
        base = load_config(measuring)
        base_suite = base.config.suite(suite.name)
        base_cases = [] if base_suite.framework else suite_cases(base, base_suite)
    except InputError as exc:
        return SuiteInstrument(
            measuring=measuring,
            config=baseline.loaded.config,
            checks_root=base_root,
            problem=BaseUnreadable(problem=str(exc)),
        )
    if base_suite.framework is not None:  # an inspect or pytest suite: no case files
        return _framework_instrument(base, base_suite, head, base_root, head_root, measuring)
    new = head_cases(head, suite.name)
    known = {c.id for c in base_cases}
    judged, unjudged = added_cases([c for c in new if c.id not in known], base_root, base)
    changes = instrument_changes(
        Side(base, base_suite, base_cases, base_root),
        Side(head, head.config.suite(suite.name), new, head_root),
        [c.id for c in unjudged],
    )
    return SuiteInstrument(
        measuring=measuring,
        config=base.config,
        checks_root=base_root,
        head_own=head.path,
        adds_cases=bool(judged),
        changes=tuple(changes),
        rejudge=_rejudge(base, base_cases, new, judged) if changes_judging(changes) else None,
    )


def _framework_instrument(
    base: LoadedConfig,
    base_suite: SuiteConfig,
    head: LoadedConfig,
    base_root: Path,
    head_root: Path,
    measuring: Path,
) -> SuiteInstrument:
    """An inspect or pytest suite: the base's instrument files measure both sides (`gate run`
    lays them over each side's checkout); what the PR changes in them and in gate.yml is
    listed. The head's own instrument is not asked (its answers cannot be judged again)."""
    own = next((s for s in head.config.suites if s.name == base_suite.name), None)
    sides = Side(base, base_suite, [], base_root), Side(head, own or base_suite, [], head_root)
    changes = [
        *instrument_changes(*sides),
        *framework_findings(base_root, head_root, base_suite, own),
    ]
    return SuiteInstrument(
        measuring=measuring,
        config=base.config,
        checks_root=base_root,
        head_own=head.path,
        changes=tuple(changes),
    )


def _rejudge(
    base: LoadedConfig, base_cases: list[Case], new: list[Case], judged: list[Case]
) -> Rejudge:
    """The head's cases whose answers both sides gave: the ones the base has with the same
    input, and the added ones that were asked."""
    before = {c.id: c for c in base_cases}
    asked = {c.id for c in judged}
    answered = [
        c.id for c in new if (c.id in before and before[c.id].input == c.input) or c.id in asked
    ]
    left = [c.id for c in new if c.id not in set(answered)]
    return Rejudge(tuple(answered), tuple(left), first_repeats(base.config))
