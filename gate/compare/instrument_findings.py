"""What a PR changes in the instrument that measures it, as findings.

The instrument (the suites, their cases by id, the checks and their code, the judge, the
simulated user, `prices`,
the sandbox's limits, the comment templates, `watch`) is the base's in the PR flow: a PR is
measured with what it cannot edit. These findings name each change the head makes to it, so
the comment shows what takes effect after merge. They are notes (they decide nothing), except
a suite the head removes or renames, which fails (its cases would go unmeasured), and a head
that replays recorded answers where the base asks its system, which fails too (the answers
are the PR's own).

Pure data, like every finding (`gate.compare.findings` holds the union of all kinds).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, JsonValue

from gate.compare.finding_base import FailFinding, NoteFinding

CaseField = Literal["expect", "input", "task", "agent"]  # agent: tools, turns, user, max_steps


class KeyChange(BaseModel):
    """One key of a block of gate.yml (the judge, the sandbox's limits) on base and on head."""

    key: str
    base: JsonValue
    head: JsonValue


class SuiteRemoved(FailFinding):
    """A suite of the base's gate.yml that the head's lacks: removed, or renamed."""

    kind: Literal["suite_removed"] = "suite_removed"
    suite: str
    head_suites: list[str] = Field(
        default_factory=list, description="the head's suites the base lacks (a rename's new name)"
    )


class CasesRemoved(NoteFinding):
    """Cases of the base that the head's case files lack: still asked and judged on both sides."""

    kind: Literal["cases_removed"] = "cases_removed"
    ids: list[str]


class CasesAdded(NoteFinding):
    """Cases the head's case files add: asked of both sides, kept out of the delta."""

    kind: Literal["cases_added"] = "cases_added"
    ids: list[str]
    unjudged: list[str] = Field(
        default_factory=list,
        description="added cases whose `expect.python` code or rubric judge the base lacks: "
        "not asked",
    )


class CasesEdited(NoteFinding):
    """Cases whose `field` the head changes: the base's definition judges them."""

    kind: Literal["cases_edited"] = "cases_edited"
    field: CaseField
    ids: list[str]


class SeverityChange(BaseModel):
    id: str
    base: str
    head: str


class SeveritiesChanged(NoteFinding):
    """Cases whose severity the head lowers or raises: the base's severities judge."""

    kind: Literal["severities_changed"] = "severities_changed"
    changes: list[SeverityChange]


class HeldoutChanged(NoteFinding):
    """Cases the head stops holding out (`shown`) or starts to (`hidden`)."""

    kind: Literal["heldout_changed"] = "heldout_changed"
    shown: list[str] = Field(default_factory=list)
    hidden: list[str] = Field(default_factory=list)


class CaseFilesChanged(NoteFinding):
    """The suite's `cases:` names other files on head."""

    kind: Literal["case_files_changed"] = "case_files_changed"
    base: list[str]
    head: list[str]


class WatchNarrowed(NoteFinding):
    """`watch` patterns the head drops, or exclusions (`!pattern`) it adds."""

    kind: Literal["watch_narrowed"] = "watch_narrowed"
    removed: list[str] = Field(default_factory=list)
    excluded: list[str] = Field(default_factory=list)


class PriceChange(BaseModel):
    """One model's price (USD per million tokens, `{input, output}`) on base and on head;
    None where that side's `prices` do not name the model."""

    model: str
    base: dict[str, float] | None
    head: dict[str, float] | None


class PricesChanged(NoteFinding):
    kind: Literal["prices_changed"] = "prices_changed"
    changes: list[PriceChange]


class JudgeChanged(NoteFinding):
    """The judge of `expect.rubric` differs (None on a side: it has no judge)."""

    kind: Literal["judge_changed"] = "judge_changed"
    changes: list[KeyChange]


class SimulatedUserChanged(NoteFinding):
    """The model that plays a case's `user` differs (None on a side: it has none)."""

    kind: Literal["simulated_user_changed"] = "simulated_user_changed"
    changes: list[KeyChange]


class SandboxLimitsChanged(NoteFinding):
    """The sandbox's limits differ (its `pythonpath` and `prelude` are each side's own)."""

    kind: Literal["sandbox_limits_changed"] = "sandbox_limits_changed"
    changes: list[KeyChange]


class TemplatesChanged(NoteFinding):
    """The comment templates differ: the folder `templates:` names, or the files in it."""

    kind: Literal["templates_changed"] = "templates_changed"
    base: str | None
    head: str | None
    files: list[str] = Field(default_factory=list, description="files that differ")


class CheckCodeChanged(NoteFinding):
    """The code of `expect.python` checks (their modules' files) differs on head."""

    kind: Literal["check_code_changed"] = "check_code_changed"
    files: list[str]


class InstrumentFilesChanged(NoteFinding):
    """An inspect or pytest suite's instrument differs on head: its files (the task, its
    dataset and scorers; the tests and their conftest.py; pytest's options) or its measuring
    settings (`inspect:`'s task, scorer and `pass`, `pytest:`'s args, `instrument:`). Both
    sides ran the base's."""

    kind: Literal["instrument_files_changed"] = "instrument_files_changed"
    files: list[str] = Field(default_factory=list)
    settings: list[KeyChange] = Field(default_factory=list)


class SystemChanged(NoteFinding):
    """The suite's `system` block differs on head: its kind, or where it points (target,
    command, prompt, model config, file, url; of headers only the names). Each side still
    runs its own; a reader sees what the head's gate measures instead."""

    kind: Literal["system_changed"] = "system_changed"
    changes: list[KeyChange]


class AnswersReplayed(FailFinding):
    """The head's system reads recorded answers (`replay`) where the base's asks a system:
    those answers are whatever the PR recorded, not its system's, so they cannot pass it."""

    kind: Literal["answers_replayed"] = "answers_replayed"
    base_kind: str
    file: str


class HeadInstrumentUnknown(NoteFinding):
    """What the head's own instrument would say could not be found out, and why."""

    kind: Literal["head_instrument_unknown"] = "head_instrument_unknown"
    reason: str


INSTRUMENT_KINDS = (
    SuiteRemoved,
    CasesRemoved,
    CasesAdded,
    CasesEdited,
    SeveritiesChanged,
    HeldoutChanged,
    CaseFilesChanged,
    WatchNarrowed,
    PricesChanged,
    JudgeChanged,
    SimulatedUserChanged,
    SandboxLimitsChanged,
    TemplatesChanged,
    CheckCodeChanged,
    InstrumentFilesChanged,
    SystemChanged,
    AnswersReplayed,
    HeadInstrumentUnknown,
)
