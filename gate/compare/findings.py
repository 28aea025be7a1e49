"""The findings of a comparison: each rule that decided the verdict, held, or is worth a note.

Pure data, one model per kind, told apart by `kind` (a discriminated union, so the `json`
format reads back into the right model). Every finding says what it does in `outcome`:
`error` and `fail` decide the verdict, `pass` is a rule that held, `note` decides nothing,
`skip` says why nothing ran. The words are `gate.render.reasons`'s, made only where output is
rendered; a finding holds numbers, ids and names, never a sentence (a side's own error
message, a skip reason and a shard problem are quoted as they came).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, JsonValue

from gate.compare.error_findings import (
    BaseUnreadable,
    BlockingError,
    ErrorRate,
    NoBaseResults,
    NoHeadResults,
    NothingCompared,
    ShardsIncomplete,
    ShardsMissing,
    ShardsStale,
    ShardsUnmerged,
    SideFailed,
)
from gate.compare.error_findings import ShardFile as ShardFile  # a field's model, for readers
from gate.compare.finding_base import (
    Advice,
    BudgetMetric,
    FailFinding,
    FindingBase,
    InconclusiveFinding,
    NoteFinding,
    PassFinding,
)
from gate.compare.instrument_findings import (
    AnswersReplayed,
    CaseFilesChanged,
    CasesAdded,
    CasesEdited,
    CasesRemoved,
    CheckCodeChanged,
    HeadInstrumentUnknown,
    HeldoutChanged,
    InstrumentFilesChanged,
    JudgeChanged,
    PricesChanged,
    SandboxLimitsChanged,
    SeveritiesChanged,
    SimulatedUserChanged,
    SuiteRemoved,
    SystemChanged,
    TemplatesChanged,
    WatchNarrowed,
)

# --- the threshold rule ------------------------------------------------------------------


class Drop(FailFinding):
    """The pass rate dropped by more than the threshold; where the drop test decides
    (`repeats: auto`, `require_significance`), the drop is also significant against no change
    at the suite's share of the PR's false-block rate (its numbers are set)."""

    kind: Literal["drop"] = "drop"
    drop_points: float
    threshold: float
    p_value: float | None = Field(
        None,
        description="the drop test's, one-sided (None: fixed repeats, the test did not decide)",
    )
    bar: float | None = Field(
        None, description="the p-value it had to reach (its look's, if sequential)"
    )
    level: float | None = Field(None, description="the suite's share of the PR's false-block rate")
    method: str | None = Field(None, description="the drop test (gate.compare.droptest.METHODS)")


class Inconclusive(InconclusiveFinding):
    """The threshold rule could not decide: a drop past the threshold that is not significant
    (`not_significant`), or repeats: auto spent its budget with the interval still reaching
    past −threshold (`budget`). `more_runs` runs per side of the `cases` cases whose runs
    disagree would decide it if the estimate stayed where it is (None: more runs of these
    cases cannot)."""

    kind: Literal["inconclusive"] = "inconclusive"
    why: Literal["not_significant", "budget"]
    delta_points: float
    threshold: float
    ci_low_points: float | None
    ci_high_points: float | None
    confidence: float
    p_value: float | None
    bar: float | None
    level: float
    more_runs: int | None = None
    cases: int | None = None
    single_runs: bool = Field(False, description="one run per case: no case's noise is known")


class WithinThreshold(PassFinding):
    kind: Literal["within_threshold"] = "within_threshold"
    delta_points: float
    threshold: float


class NoBaseline(PassFinding):
    """A new suite: the threshold rule does not apply, the head is judged alone."""

    kind: Literal["no_baseline"] = "no_baseline"
    head_cases: int


# --- blocking cases ----------------------------------------------------------------------


class Runs(BaseModel):
    """With repeats: a case's runs that passed, of its runs, on both sides."""

    base_passes: int
    base_runs: int
    head_passes: int
    head_runs: int


class Blockers(FailFinding):
    """Cases of a blocking severity that do not pass on head."""

    kind: Literal["blockers"] = "blockers"
    ids: list[str]
    new_ids: list[str] = Field(default_factory=list, description="passed on base, or new")
    runs: dict[str, Runs] = Field(default_factory=dict, description="the repeated ones")


class OldBlockers(NoteFinding):
    """`blockers: new`: failing blocking cases that did not pass every run on base."""

    kind: Literal["old_blockers"] = "old_blockers"
    ids: list[str]
    runs: dict[str, Runs] = Field(default_factory=dict, description="the repeated ones")


class NoBlockerFails(PassFinding):
    kind: Literal["no_blocker_fails"] = "no_blocker_fails"


# --- budgets -----------------------------------------------------------------------------


class BudgetExceeded(FailFinding):
    """A usage metric rose by more than its budget (percent of the base)."""

    kind: Literal["budget"] = "budget"
    metric: BudgetMetric
    rise_pct: float
    limit_pct: float


class BudgetFromZero(FailFinding):
    kind: Literal["budget_from_zero"] = "budget_from_zero"
    metric: BudgetMetric


class BudgetUnmeasured(NoteFinding):
    """A side did not report the metric, so its budget was not checked."""

    kind: Literal["budget_unmeasured"] = "budget_unmeasured"
    metric: BudgetMetric


# --- notes -------------------------------------------------------------------------------


class PolicyChange(BaseModel):
    """One policy key the head's gate.yml changes: its value on base and on head."""

    key: str
    base: JsonValue
    head: JsonValue


class HeadPolicyChanges(NoteFinding):
    """The head's gate.yml changes the policy: the base's judges this PR."""

    kind: Literal["head_policy_changes"] = "head_policy_changes"
    changes: list[PolicyChange]


class HeadPolicyApplies(NoteFinding):
    """The base has no gate.yml, so the head's policy judges the PR. `config`: the path the
    head's config has, when it is not `gate.yml` (a PR may point the gate at a new file)."""

    kind: Literal["head_policy_applies"] = "head_policy_applies"
    config: str | None = None


class OverrideIgnored(NoteFinding):
    """An override (an Action input, a command-line flag) that would loosen the policy: on a
    pull request the workflow file is the PR's own, so it may only tighten it. `applied` is
    what judges instead (the base's value, with the override's tightening part)."""

    kind: Literal["override_ignored"] = "override_ignored"
    key: str
    asked: JsonValue
    base: JsonValue
    applied: JsonValue


class NotEnforced(NoteFinding):
    """The workflow does not let a fail block the merge (`fail-on-regression: false`)."""

    kind: Literal["not_enforced"] = "not_enforced"
    setting: str = "fail-on-regression: false"


class _Resolution(NoteFinding):
    cases: int
    case_weight_points: float = Field(description="what one case moves the pass rate")
    detectable_points: float = Field(description="the drop caught 9 times in 10")
    threshold: float
    level: float = Field(description="the drop test's level (the suite's share)")
    se_points: float | None = Field(None, description="the delta's standard error")
    noise_blocks: float | None = Field(
        None, description="the chance that noise alone takes a no-op PR past the threshold"
    )
    advice: Advice = Field("tested", description="what resolves it (see the sentence)")


class CoarseSuite(_Resolution):
    """The threshold is below one case's weight: a single regression decides."""

    kind: Literal["coarse_suite"] = "coarse_suite"


class Underpowered(_Resolution):
    """The suite cannot enforce the threshold as the gate applies it: with the threshold rule
    alone, noise crosses it in more no-op PRs than `false_block_rate`; where the drop test
    decides, the drop it catches 9 times in 10 is more than 1.5 times the threshold."""

    kind: Literal["underpowered"] = "underpowered"


class OtherSuite(NoteFinding):
    kind: Literal["other_suite"] = "other_suite"
    base_suite: str
    head_suite: str


class Unpaired(NoteFinding):
    """Cases in one report only: not in the pass-rate delta."""

    kind: Literal["unpaired"] = "unpaired"
    added: int
    removed: int


class HeadInstrument(NoteFinding):
    """What the head's own instrument (its cases, checks, judge, prices, policy) says of the
    same answers: the verdict once the PR is merged. Both sides' recorded answers re-judged,
    so no system is called; `left_out` are cases whose input the PR changes (their answers
    to the new input were never asked)."""

    kind: Literal["head_instrument"] = "head_instrument"
    verdict: Literal["pass", "fail", "error"]
    delta_points: float | None = None
    base_pass_rate: float | None = None
    head_pass_rate: float | None = None
    paired: int = 0
    decisive: list[Finding] = Field(
        default_factory=list, description="the error and fail findings of that verdict"
    )
    left_out: list[str] = Field(default_factory=list)
    judge_calls: int = Field(0, description="judge calls of the re-judging, cached or not")
    judge_cached: int = 0


class Accepted(PassFinding):
    """A `fail` turned into a pass by the PR label the base's policy names (`accept_label`);
    `overruled` are the findings that failed it."""

    kind: Literal["accepted"] = "accepted"
    label: str
    overruled: list[Finding]


class Skipped(FindingBase):
    """Nothing ran (the verdict is skipped); `reason` as the change detection gave it."""

    kind: Literal["skipped"] = "skipped"
    outcome: Literal["skip"] = "skip"
    reason: str


Finding = Annotated[
    NoHeadResults
    | ErrorRate
    | BlockingError
    | NothingCompared
    | SideFailed
    | NoBaseResults
    | BaseUnreadable
    | ShardsMissing
    | ShardsStale
    | ShardsIncomplete
    | ShardsUnmerged
    | Drop
    | Inconclusive
    | WithinThreshold
    | NoBaseline
    | Blockers
    | OldBlockers
    | NoBlockerFails
    | BudgetExceeded
    | BudgetFromZero
    | BudgetUnmeasured
    | HeadPolicyChanges
    | HeadPolicyApplies
    | OverrideIgnored
    | NotEnforced
    | CoarseSuite
    | Underpowered
    | OtherSuite
    | Unpaired
    | HeadInstrument
    | Accepted
    | SuiteRemoved
    | CasesRemoved
    | CasesAdded
    | CasesEdited
    | SeveritiesChanged
    | HeldoutChanged
    | CaseFilesChanged
    | WatchNarrowed
    | PricesChanged
    | JudgeChanged
    | SimulatedUserChanged
    | SandboxLimitsChanged
    | TemplatesChanged
    | CheckCodeChanged
    | InstrumentFilesChanged
    | SystemChanged
    | AnswersReplayed
    | HeadInstrumentUnknown
    | Skipped,
    Field(discriminator="kind"),
]

HeadInstrument.model_rebuild()
Accepted.model_rebuild()
