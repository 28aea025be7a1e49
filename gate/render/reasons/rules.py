"""The sentences of the verdict's rules: one per kind of finding (`gate.compare.findings`;
the threshold rule's are `threshold`), and the helpers sentences write ids and values with."""

from __future__ import annotations

from collections.abc import Callable

from gate.compare.findings import (
    Blockers,
    BlockingError,
    BudgetExceeded,
    BudgetFromZero,
    BudgetMetric,
    BudgetUnmeasured,
    ErrorRate,
    HeadPolicyApplies,
    HeadPolicyChanges,
    NoBaseResults,
    NoBlockerFails,
    NoHeadResults,
    NotEnforced,
    NothingCompared,
    OldBlockers,
    OtherSuite,
    OverrideIgnored,
    Runs,
    ShardsIncomplete,
    ShardsMissing,
    ShardsStale,
    ShardsUnmerged,
    SideFailed,
    Skipped,
    Unpaired,
)
from gate.render.reasons.sentence import SHOWN_IDS, fmt, key_changes, listed, policy_value, sentence

BUDGET_NAMES: dict[BudgetMetric, str] = {
    "cost": "cost",
    "tokens": "total tokens",
    "latency_p95": "p95 latency",
}


def _states(ids: list[str], state: Callable[[str], str]) -> str:
    """The first ids, each with its state in brackets, and how many more there are."""
    shown = [f"{i} ({state(i)})" for i in ids[:SHOWN_IDS]]
    return listed(shown + ids[SHOWN_IDS:])  # a state only for the ids shown


def _blocker_state(i: str, runs: dict[str, Runs], new: set[str]) -> str:
    r = runs.get(i)
    if r is None:
        return "new" if i in new else "already failing on base"
    flaky = 0 < r.head_passes < r.head_runs or 0 < r.base_passes < r.base_runs
    where = (
        "passed every run on base"
        if r.base_runs and r.base_passes == r.base_runs
        else "failed on base too"
        if r.base_runs
        else "new"
    )
    return (
        f"{'flaky, ' if flaky else ''}runs passed {r.base_passes}/{r.base_runs} on base → "
        f"{r.head_passes}/{r.head_runs} on head; {where}"
    )


# --- errors ----------------------------------------------------------------------------------


@sentence.register
def _(f: NoHeadResults) -> str:
    return "the head report has no case results"


@sentence.register
def _(f: ErrorRate) -> str:
    return (
        f"{f.errors} of {f.cases} {f.side} cases ended in an error "
        f"({fmt(f.rate_pct)}%, the limit is {f.limit_pct:g}%)"
    )


@sentence.register
def _(f: BlockingError) -> str:
    noun = "case" if len(f.ids) == 1 else "cases"
    return f"blocking {noun} {listed(f.ids)} ended in an error on {f.side}"


@sentence.register
def _(f: NothingCompared) -> str:
    return (
        f"no case ran on both sides ({f.base_cases} on base, {f.head_cases} on head, none of "
        "them paired), so nothing was compared"
    )


@sentence.register
def _(f: SideFailed) -> str:
    who = f"the {f.side} side" + (f" of shard {f.shard}" if f.shard else "")
    return f"{who} could not run (exit {f.exit_code}): {f.error}"


@sentence.register
def _(f: NoBaseResults) -> str:
    return "without the base's results nothing can be compared, so this is no pass"


@sentence.register
def _(f: ShardsMissing) -> str:
    return (
        f"no shard reports of suite `{f.suite}` under `{f.folder}`: every shard job must run "
        "with `mode: shard` and upload its reports, and the final job must download them "
        "into that folder"
    )


@sentence.register
def _(f: ShardsStale) -> str:
    stale = ", ".join(f"{s.shard} ({s.path})" for s in f.stale)
    return (
        f"shard reports of other commits than base {f.base_sha[:12]} and head "
        f"{f.head_sha[:12]}: {stale}"
    )


@sentence.register
def _(f: ShardsIncomplete) -> str:
    return (
        f"{f.problem}; the verdict needs every shard exactly once (a shard is missing when "
        "its job failed, was skipped or cancelled, or its reports were not downloaded)"
    )


@sentence.register
def _(f: ShardsUnmerged) -> str:
    return f"the {f.side} shards do not merge: {f.problem}"


# --- blocking cases --------------------------------------------------------------------------


@sentence.register
def _(f: Blockers) -> str:
    new = set(f.new_ids)
    noun = "case does" if len(f.ids) == 1 else "cases do"
    shown = _states(f.ids, lambda i: _blocker_state(i, f.runs, new))
    return f"{len(f.ids)} blocking {noun} not pass on head: {shown}"


@sentence.register
def _(f: OldBlockers) -> str:
    one = len(f.ids) == 1
    shown = _states(f.ids, lambda i: _blocker_state(i, f.runs, set()))
    return (
        f"{len(f.ids)} blocking {'case fails' if one else 'cases fail'} on head but did not pass "
        f"every run on base, so with `blockers: new` {'it does' if one else 'they do'} not "
        f"block: {shown}"
    )


@sentence.register
def _(f: NoBlockerFails) -> str:
    return "no blocking case fails on head"


# --- budgets ---------------------------------------------------------------------------------


@sentence.register
def _(f: BudgetExceeded) -> str:
    return (
        f"{BUDGET_NAMES[f.metric]} rose {fmt(f.rise_pct)}% over the cases both sides ran, more "
        f"than the budget of {f.limit_pct:g}% (`budgets.{f.metric}_pct`)"
    )


@sentence.register
def _(f: BudgetFromZero) -> str:
    return (
        f"{BUDGET_NAMES[f.metric]} was 0 on base and is not on head, which no percentage "
        "budget allows"
    )


@sentence.register
def _(f: BudgetUnmeasured) -> str:
    name = BUDGET_NAMES[f.metric]
    example = "(e.g. no price for the model)" if f.metric == "cost" else "(e.g. no usage)"
    return f"the {name} budget was not checked: a side did not report its {name} {example}"


# --- notes -----------------------------------------------------------------------------------


@sentence.register
def _(f: HeadPolicyChanges) -> str:
    return (
        f"this PR changes the policy in gate.yml ({key_changes(f.changes)}): the base's policy "
        "judges it, the head's takes effect after merge"
    )


@sentence.register
def _(f: HeadPolicyApplies) -> str:
    name = f"`{f.config}`" if f.config else "gate.yml"
    return f"the base has no {name}, so the head's own instrument and policy judge this PR"


@sentence.register
def _(f: OverrideIgnored) -> str:
    return (
        f"the override {f.key}: {policy_value(f.asked)} was not applied as given: it would "
        f"loosen the policy ({policy_value(f.base)}), and an Action input or a command-line "
        f"flag may only make it stricter, so {policy_value(f.applied)} judges this PR; "
        "loosen the policy in gate.yml, where the base's counts"
    )


@sentence.register
def _(f: NotEnforced) -> str:
    return (
        f"this verdict is not enforced: the workflow sets `{f.setting}`, so a fail (or an "
        "inconclusive that the policy blocks) does not block the merge"
    )


@sentence.register
def _(f: OtherSuite) -> str:
    return f"the base report is of suite {f.base_suite!r}, the head's of {f.head_suite!r}"


@sentence.register
def _(f: Unpaired) -> str:
    return (
        f"{f.added} added and {f.removed} removed cases are not in the pass-rate delta, "
        "which is over the cases both sides ran"
    )


@sentence.register
def _(f: Skipped) -> str:
    return f.reason
