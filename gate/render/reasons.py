"""The verdict in words: one sentence per `Finding` of the comparison.

The comparison decides with numbers (`gate.compare.verdict`); this is where they become the
reasons and notes that the comment, the summary, the terminal and the JSON format show.
"""

from __future__ import annotations

from collections.abc import Callable

from gate.compare.models import Comparison, Finding

SHOWN_IDS = 5


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}".replace("-", "\N{MINUS SIGN}")


def _ids(ids: list[str]) -> str:
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return ", ".join(ids[:SHOWN_IDS]) + more


def _drop(f: Finding) -> str:
    shown = _fmt(f.value)
    if f.value is not None and f.limit is not None and round(f.value, 1) <= f.limit:
        shown = f"{f.value:.2f}"  # 3.03 points, not "3.0, more than the threshold of 3"
    return f"the pass rate dropped {shown} points, more than the threshold of {f.limit:g}"


def _p(f: Finding) -> str:
    return "n/a" if f.p_value is None else f"{f.p_value:.3g}"


def _blocker_state(f: Finding, i: str, new: set[str]) -> str:
    runs = f.runs.get(i)
    if runs is None:
        return "new" if i in new else "already failing on base"
    base_passes, base_runs, head_passes, head_runs = runs
    flaky = 0 < head_passes < head_runs or 0 < base_passes < base_runs
    where = (
        "passed every run on base"
        if base_runs and base_passes == base_runs
        else "failed on base too"
        if base_runs
        else "new"
    )
    return (
        f"{'flaky, ' if flaky else ''}runs passed {base_passes}/{base_runs} on base → "
        f"{head_passes}/{head_runs} on head; {where}"
    )


def _blockers(f: Finding) -> str:
    new = set(f.new_ids)
    shown = ", ".join(f"{i} ({_blocker_state(f, i, new)})" for i in f.ids[:SHOWN_IDS])
    more = f" and {len(f.ids) - SHOWN_IDS} more" if len(f.ids) > SHOWN_IDS else ""
    noun = "case does" if len(f.ids) == 1 else "cases do"
    return f"{len(f.ids)} blocking {noun} not pass on head: {shown}{more}"


def _old_blockers(f: Finding) -> str:
    shown = ", ".join(f"{i} ({_blocker_state(f, i, set())})" for i in f.ids[:SHOWN_IDS])
    more = f" and {len(f.ids) - SHOWN_IDS} more" if len(f.ids) > SHOWN_IDS else ""
    noun = "case fails" if len(f.ids) == 1 else "cases fail"
    return (
        f"{len(f.ids)} blocking {noun} on head but did not pass every run on base, so with "
        f"`blockers: new` {'it does' if len(f.ids) == 1 else 'they do'} not block: {shown}{more}"
    )


BUDGET_NAMES = {"cost": "cost", "tokens": "total tokens", "latency_p95": "p95 latency"}


def _budget(f: Finding) -> str:
    name = BUDGET_NAMES.get(f.names[0], f.names[0]) if f.names else "usage"
    return (
        f"{name} rose {_fmt(f.value)}% over the cases both sides ran, more than the budget of "
        f"{f.limit:g}% (`budgets.{f.names[0] if f.names else ''}_pct`)"
    )


def _within(f: Finding) -> str:
    sign = "+" if (f.value or 0.0) >= 0 else ""
    return (
        f"the pass rate changed by {sign}{_fmt(f.value)} points "
        f"(a drop of more than {f.limit:g} blocks)"
    )


WORDS: dict[str, Callable[[Finding], str]] = {
    "no_head_results": lambda f: "the head report has no case results",
    "error_rate": lambda f: (
        f"{f.count} of {f.n} {f.side} cases ended in an error "
        f"({_fmt(f.value)}%, the limit is {f.limit:g}%)"
    ),
    "blocking_error": lambda f: (
        f"blocking {'case' if len(f.ids) == 1 else 'cases'} {_ids(f.ids)} "
        f"ended in an error on {f.side}"
    ),
    "drop": _drop,
    "significant_drop": lambda f: (
        f"{_drop(f)}, and the drop is significant (p = {_p(f)} < {f.alpha:g})"
    ),
    "insignificant_drop": lambda f: (
        f"{_drop(f)}, but the drop is not significant (p = {_p(f)}, alpha {f.alpha:g}); "
        "require_significance is on, so it does not block"
    ),
    "blockers": _blockers,
    "nothing_compared": lambda f: (
        f"no case ran on both sides ({f.count} on base, {f.n} on head, none of them paired), "
        "so nothing was compared"
    ),
    "no_baseline": lambda f: (
        "this suite is new: the base has no such suite, so there is no baseline and the "
        "threshold rule does not apply; the head's own blocking cases and errors still count"
    ),
    "head_policy_changes": lambda f: (
        "this PR changes the policy in gate.yml ("
        + "; ".join(f.names)
        + "): the base's policy judges it, the head's takes effect after merge"
    ),
    "head_policy_applies": lambda f: (
        "the base has no gate.yml, so the head's policy judges this PR"
    ),
    "old_blockers": _old_blockers,
    "budget": _budget,
    "budget_from_zero": lambda f: (
        f"{BUDGET_NAMES.get(f.names[0], f.names[0])} was 0 on base and is not on head, "
        "which no percentage budget allows"
    ),
    "budget_unmeasured": lambda f: (
        f"the {BUDGET_NAMES.get(f.names[0], f.names[0])} budget was not checked: a side did "
        f"not report its {BUDGET_NAMES.get(f.names[0], f.names[0])} "
        + ("(e.g. no price for the model)" if f.names[0] == "cost" else "(e.g. no usage)")
    ),
    "within_threshold": _within,
    "no_blocker_fails": lambda f: "no blocking case fails on head",
    "coarse_suite": lambda f: (
        f"this suite cannot enforce a {f.limit:g}-point threshold: with {f.n} cases one case "
        f"is {(f.count or 0) / 100:.1f} points, so a single regression decides, and the "
        f"smallest drop it would catch with 80% power is {_fmt(f.value)} points"
    ),
    "underpowered": lambda f: (
        f"the threshold of {f.limit:g} points is below what this suite can resolve: the "
        f"smallest drop it would catch with 80% power (α {f.alpha:g}) is {_fmt(f.value)} "
        "points; more cases or repeats narrow it"
    ),
    "other_suite": lambda f: (
        f"the base report is of suite {f.names[0]!r}, the head's of {f.names[1]!r}"
    ),
    "unpaired": lambda f: (
        f"{f.count} added and {f.n} removed cases are not in the pass-rate delta, "
        "which is over the cases both sides ran"
    ),
}


def sentence(finding: Finding) -> str:
    return WORDS[finding.kind](finding)


def explain(comparison: Comparison) -> Comparison:
    """The comparison with its findings worded as `reasons` and `notes`. A comparison that has
    reasons already (worded before, or made by the flow for a side that could not run) keeps
    its words. Failures listed under an error verdict read "also: …"."""
    if comparison.reasons or not comparison.findings:
        return comparison
    reasons, notes = [], []
    for finding in comparison.findings:
        words = sentence(finding)
        if finding.outcome == "note":
            notes.append(words)
        elif finding.outcome == "fail" and comparison.verdict == "error":
            reasons.append(f"also: {words}")
        else:
            reasons.append(words)
    return comparison.model_copy(update={"reasons": reasons, "notes": notes})
