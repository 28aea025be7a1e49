"""What a flow would run, without running it (`gate check --plan`): per suite, whether it runs
and why, each side's checkout and where its instrument and its system come from, the cases
and the budget."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from gate.compare.findings import Finding
from gate.flow.instrument import SuiteInstrument, suite_instrument
from gate.flow.plan import FlowPlan, SuitePlan
from gate.inputs.policy import Policy


class SidePreview(BaseModel):
    side: Literal["base", "head"]
    checkout: str  # a commit, or "working tree"
    system: str  # the system's kind and what it names


class BudgetPreview(BaseModel):
    repeats: int | Literal["auto"]
    first_round: int  # runs of every case in round 0
    max_calls_per_case: float | None = None  # repeats: auto
    max_calls: int | None = None
    max_cost_usd: float | None = None


class SuitePreview(BaseModel):
    name: str
    runs: bool
    why: str  # the changes that make it run, or why it does not
    instrument: str  # where what measures comes from
    # measured cases (the base's, and the ones the PR adds that are asked); None: an inspect or
    # pytest suite, whose runner lists its framework's
    cases: int | None = 0
    added: int = 0
    sides: list[SidePreview] = []
    budget: BudgetPreview | None = None
    instrument_changes: list[Finding] = []
    problem: Finding | None = None  # why the base cannot measure it


class FlowPreview(BaseModel):
    base: str
    head: str
    config: str | None  # gate.yml's path in the repository, as named
    cache: str
    threshold: float
    suites: list[SuitePreview]


def preview(plan: FlowPlan) -> FlowPreview:
    """The plan as a reader wants it; the instrument of each suite that runs is read from a
    checkout of the base (nothing runs)."""
    revisions = plan.request.revisions
    runnable = plan.runnable
    found: dict[str, SuiteInstrument] = {}
    if runnable:
        with revisions.repo.worktree(revisions.base_sha, plan.base_root) as base_root:
            found = {s.name: suite_instrument(plan, s, base_root) for s in runnable}
    return FlowPreview(
        base=revisions.base_sha,
        head=revisions.head_sha or f"{revisions.repo.head_sha()} (working tree)",
        config=plan.request.config_at,
        cache=str(plan.cache),
        threshold=plan.policy.threshold,
        suites=[_suite(plan, s, found.get(s.name)) for s in plan.suites],
    )


def _suite(plan: FlowPlan, suite: SuitePlan, inst: SuiteInstrument | None) -> SuitePreview:
    revisions = plan.request.revisions
    base = revisions.base_sha[:12]
    head = revisions.head_sha[:12] if revisions.head_sha else "working tree"
    from_base = suite.baseline and plan.baseline.loaded is not None
    whose = f"the base's ({base})" if from_base else f"the head's ({head})"
    if suite.removed:
        why = "the head's gate.yml removes it: it fails"
    elif not suite.runs:
        why = suite.skip_reason or "skipped"
    else:
        why = "changed: " + ", ".join(str(c) for c in suite.changes[:6])
    shown = SuitePreview(name=suite.name, runs=suite.runs, why=why, instrument=whose)
    if inst is None or inst.measure is None:
        shown.problem = inst.problem if inst is not None else None
        return shown
    measure = inst.measure
    shown.cases = None if measure.framework is not None else len(measure.cases)
    shown.added = sum(c.added for c in measure.cases)
    if inst.base_own is not None:
        shown.sides.append(SidePreview(side="base", checkout=base, system=_system(inst, "base")))
    shown.sides.append(SidePreview(side="head", checkout=head, system=_system(inst, "head")))
    shown.budget = _budget(plan.policy, measure.repeats, inst.auto)
    shown.instrument_changes = list(inst.changes)
    return shown


def _system(inst: SuiteInstrument, side: str) -> str:
    own = inst.base_own if side == "base" else inst.head_own
    assert own is not None
    system = own.system
    named = [str(v) for k, v in system.model_dump(by_alias=True).items() if k != "kind" and v]
    return f"{system.kind}: {', '.join(named[:3])}" if named else system.kind


def _budget(policy: Policy, first: int, auto: bool) -> BudgetPreview:
    if not auto:
        return BudgetPreview(repeats=first, first_round=first)
    return BudgetPreview(
        repeats="auto",
        first_round=first,
        max_calls_per_case=policy.max_calls_per_case,
        max_calls=policy.max_calls,
        max_cost_usd=policy.max_cost_usd,
    )
