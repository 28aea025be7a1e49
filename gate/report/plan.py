"""`repeats: auto`: how the gate spends calls, case by case, in rounds.

Round 0 runs every case `first` times on both sides. The next `uniform` rounds add one run to
every case. Later rounds add `step` runs, on both sides, to each case whose rule says so
(`continues`), until the flow stops (`gate.flow.adaptive`): the drop test decided, a drop past
the threshold was ruled out, the precision the design needs was reached, no case goes on, or a
budget is reached (`max_repeats` per case and side, the policy's calls and cost). The rule
(`spread`) runs a case while its runs are fewer than the round's target times its spread, so
the calls go to the cases whose runs disagree, in proportion to how much they disagree (Neyman
allocation; `minority` is the rule of reports written before it). The plan, each round's
target, each look of the drop test and why the rounds stopped are recorded in both reports
(`AutoRecord`, `auto` in the metadata line) so that the comparison can follow them
(`gate.compare.estimates`, `gate.compare.droptest`): the rule depends on a case's own counts
at round boundaries (and the other side's of the same case) only.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# "clear" is the stop of reports written before the drop test (the interval was clear)
StopReason = Literal["fail", "pass", "precise", "clear", "settled", "budget", "failed"]
Rule = Literal["minority", "spread"]


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
    rule: Rule = Field(
        "minority", description="which rule decides a case's next run (spread: since version 3)"
    )
    prior: float = Field(
        0.1, gt=0, description="pseudo-runs of each outcome in a case's spread (rule spread)"
    )

    def size(self, round_index: int) -> int:
        """Runs added to a case that takes part in round `round_index`."""
        if round_index == 0:
            return self.first
        return 1 if round_index <= self.uniform else self.step


class Look(BaseModel):
    """One look of the drop test after a round: the estimate, its standard error (both in
    points) and degrees of freedom, and the information fraction (the design's variance over
    this look's; 1 at the last look, which spends what is left of the level)."""

    model_config = ConfigDict(frozen=True)

    round: int = Field(ge=0, description="the round after which the look was taken")
    info: float = Field(gt=0)
    delta_points: float
    se_points: float = Field(ge=0)
    df: float = Field(gt=0)


class AutoRecord(BaseModel):
    """`auto` in a report's metadata line: the plan the runs followed and what the flow did
    with it. `gate run` writes the plan alone (round 0); the flow adds the rest at its end."""

    model_config = ConfigDict(frozen=True)

    plan: Plan = Field(default_factory=Plan)
    rounds: int = Field(0, ge=0, description="rounds run after round 0")
    stop: StopReason | None = Field(
        None,
        description="why the flow stopped spending calls: the drop test failed the suite (fail), "
        "a drop of the design's size was ruled out (pass), the design's precision was reached "
        "(precise), no case went on (settled), a budget was reached (budget), a side failed "
        "(failed); None: round 0 only",
    )
    calls: int | None = Field(None, ge=0, description="the calls this report holds")
    targets: list[float | None] = Field(
        default_factory=list,
        description="rule spread: after round i, a case went on while its runs were fewer than "
        "targets[i] times its spread (None: a uniform round, every case went on)",
    )
    level: float | None = Field(
        None, description="the drop test's one-sided level: the suite's share of the PR's rate"
    )
    se_target_points: float | None = Field(
        None, description="the standard error the rounds aimed at (the design's precision)"
    )
    looks: list[Look] = Field(default_factory=list, description="the drop test after each round")
    shard_targets: dict[str, list[float | None]] = Field(
        default_factory=dict,
        description="a merged report of shards: each shard's targets by I/N (each shard ran its "
        "own rounds; the merged comparison tests the merged estimate at one look)",
    )
    paid_calls: int | None = Field(
        None, ge=0, description="calls of both sides that the response cache did not answer"
    )
    paid_usd: float | None = Field(None, ge=0, description="what those calls cost, both sides")


def spread(plan: Plan, own: int, other: int, runs: int) -> float:
    """How much a case's runs disagree: the standard deviation of one run's difference between
    the sides, with `prior` pseudo-runs of each outcome on each side (a case that always passed
    so far is not taken for one that always will: 3/3 on both sides is 0.25, 1/2 on both 0.71)."""
    shrunk = [(passes + plan.prior) / (runs + 2 * plan.prior) for passes in (own, other)]
    return math.sqrt(sum(p * (1 - p) for p in shrunk))


def continues(
    plan: Plan, own: int, other: int, runs: int, round_index: int, target: float | None = None
) -> bool:
    """The per-case rule: after round `round_index`, with `runs` runs on each side and `own` and
    `other` passes, does the case get more? In the uniform rounds every case does. Later, under
    the `spread` rule, a case does while its runs are fewer than the round's `target` times its
    `spread` (None: every case does); under the `minority` rule of earlier reports, while its
    rarer outcome, over both sides, is at least `minority` of its runs."""
    if runs >= plan.max_repeats:
        return False
    if round_index < plan.uniform:
        return True
    if plan.rule == "spread":
        return target is None or runs < target * spread(plan, own, other, runs)
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


def merged_record(records: list[tuple[str, AutoRecord]]) -> AutoRecord:
    """The record of a report merged from shards (`gate merge`): the first shard's plan and
    level, the rounds and calls added up, each shard's targets by its I/N, no looks (the
    shards looked at themselves), and the stop of a shard that ended undecided if one did."""
    first = records[0][1]
    undecided = [r.stop for _, r in records if r.stop in ("budget", "settled", "failed")]
    paid = [r.paid_calls for _, r in records if r.paid_calls is not None]
    usd = [r.paid_usd for _, r in records if r.paid_usd is not None]
    return first.model_copy(
        update={
            "rounds": max(r.rounds for _, r in records),
            "stop": undecided[0] if undecided else first.stop,
            "calls": sum(r.calls or 0 for _, r in records),
            "targets": [],
            "looks": [],
            "shard_targets": {shard: r.targets for shard, r in records},
            "paid_calls": sum(p for p in paid if p is not None)
            if any(p is not None for p in paid)
            else None,
            "paid_usd": round(sum(u for u in usd if u is not None), 8)
            if any(u is not None for u in usd)
            else None,
        }
    )
