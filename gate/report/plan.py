"""`repeats: auto`: how the gate spends calls, case by case, in rounds.

Round 0 runs every case `first` times on both sides. The next `uniform` rounds add one run to
every case. Later rounds add `step` runs, on both sides, to each case whose outcome is still
uncertain (`continues`), until the flow stops: the decision is clear, no case is uncertain, or
a budget is reached (`max_repeats` per case and side, the flow's call budget). The plan, the
rounds and why they stopped are recorded in both reports (`AutoRecord`, `auto` in the metadata
line) so that the comparison can follow the plan (`gate.compare.estimates`): its rule depends
on a case's own counts at round boundaries only.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

StopReason = Literal["clear", "settled", "budget", "failed"]


class Plan(BaseModel):
    """How `repeats: auto` spends calls; recorded in the reports so the estimate can follow it."""

    model_config = ConfigDict(frozen=True)

    first: int = Field(2, ge=1, description="runs of every case on both sides in round 0")
    uniform: int = Field(1, ge=0, description="rounds after round 0 that add one run to every case")
    step: int = Field(2, ge=1, description="runs added to each uncertain case in later rounds")
    max_repeats: int = Field(10, ge=1, description="most runs of one case on one side")
    minority: float = Field(
        0.15, ge=0, le=0.5, description="a case continues while its rarer outcome is this share"
    )

    def size(self, round_index: int) -> int:
        """Runs added to a case that takes part in round `round_index`."""
        if round_index == 0:
            return self.first
        return 1 if round_index <= self.uniform else self.step


class AutoRecord(BaseModel):
    """`auto` in a report's metadata line: the plan the runs followed and what the flow did
    with it. `gate run` writes the plan alone (round 0); the flow adds the rest at its end."""

    model_config = ConfigDict(frozen=True)

    plan: Plan = Field(default_factory=Plan)
    rounds: int = Field(0, ge=0, description="rounds run after round 0")
    stop: StopReason | None = Field(
        None,
        description="why the flow stopped spending calls: the decision was clear, no case was "
        "uncertain, the call budget was reached, a side failed; None: round 0 only",
    )
    calls: int | None = Field(None, ge=0, description="the calls this report holds")


def continues(plan: Plan, own: int, other: int, runs: int, round_index: int) -> bool:
    """The per-case rule: after round `round_index`, with `runs` runs on each side and `own` and
    `other` passes, does the case get more? In the uniform rounds every case does; later, a case
    does while its outcome is uncertain: its rarer outcome, over both sides, is at least
    `minority` of its runs (with few runs, any case whose runs differ; later a single
    differing run no longer is enough: 5/5 against 4/5 stops at the default 15%)."""
    if runs >= plan.max_repeats:
        return False
    if round_index < plan.uniform:
        return True
    total, passed = 2 * runs, own + other
    rare = min(passed, total - passed)
    if rare == 0:
        return False
    return rare >= plan.minority * total


def boundaries(plan: Plan, runs: int) -> list[int]:
    """A case's run counts at the end of each round it took part in, up to `runs`."""
    marks = [min(plan.first, plan.max_repeats)]
    while marks[-1] < runs:
        marks.append(min(marks[-1] + plan.size(len(marks)), plan.max_repeats))
    if marks[-1] != runs:
        raise ValueError(f"{runs} runs do not end a round of this plan")
    return marks
