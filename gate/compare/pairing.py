"""Pair the base and head reports of one suite by id over the head's suite: what changed.

Pure: reports in, a `Comparison` out. Cases only in base are `removed`, cases only in
head are `added`, and pass rates and their delta are over the paired cases. A paired case
marked `added` (one the PR adds, asked of both sides) is kept apart, `added_by_pr`: it is in
no rate, delta, test or budget, and only its blocking failures and errors count, so an added
case can make the verdict stricter and never offset a drop.

`compare` goes in steps: the pairing (here), the estimates (`gate.compare.rates`), the cases
that changed and their lists (`gate.compare.changes`, `gate.compare.lists`), each side's
totals and usage (`gate.compare.totals`), and the decision (`gate.compare.decision`).
"""

from __future__ import annotations

from dataclasses import dataclass

from gate.compare.changes import changed_cases
from gate.compare.decision import Decision, Sides, decision
from gate.compare.findings import Finding, OtherSuite, Unpaired
from gate.compare.lists import CaseLists, sort_into_lists
from gate.compare.metrics import metric_rates
from gate.compare.models import CaseChange, Comparison
from gate.compare.rates import PassRates, pass_rates
from gate.compare.rubric import compare_rubric
from gate.compare.totals import task_deltas, totals, usage
from gate.inputs.policy import Policy
from gate.report.models import CaseResult, Report, RunMeta
from gate.report.plan import AutoRecord


@dataclass(frozen=True)
class Pairing:
    """The two reports' cases by id, over the head's suite."""

    base: Report
    head: Report
    baseline: bool  # False: the suite is new, and `base` an empty stand-in
    pairs: list[tuple[CaseResult, CaseResult]]  # on both sides: compared
    by_pr: list[tuple[CaseResult, CaseResult]]  # on both sides, added by the PR: kept apart
    added: list[CaseResult]  # on head only
    removed: list[CaseResult]  # on base only

    @property
    def auto(self) -> AutoRecord | None:
        """The plan `repeats: auto` ran; None: the repeats were fixed."""
        return self.head.meta.auto or self.base.meta.auto

    def findings(self) -> list[Finding]:
        """What pairing found: reports of different suites, cases on one side only."""
        base, head = self.base.meta.suite, self.head.meta.suite
        found: list[Finding] = []
        if base and head and base != head:
            found.append(OtherSuite(base_suite=base, head_suite=head))
        if self.added or self.removed:
            found.append(Unpaired(added=len(self.added), removed=len(self.removed)))
        return found


def pair(base: Report | None, head: Report) -> Pairing:
    """The head's cases with the base's by id; `base` None: the suite is new."""
    baseline = base is not None
    if base is None:
        base = Report(meta=RunMeta(label="base", suite=head.meta.suite), results=[], path=head.path)
    base_by_id = {r.id: r for r in base.results}
    head_ids = {r.id for r in head.results}
    both = [(base_by_id[r.id], r) for r in head.results if r.id in base_by_id]
    return Pairing(
        base=base,
        head=head,
        baseline=baseline,
        pairs=[(b, h) for b, h in both if not h.added],
        by_pr=[(b, h) for b, h in both if h.added],
        added=[r for r in head.results if r.id not in base_by_id],
        removed=[r for r in base.results if r.id not in head_ids],
    )


def compare(
    base: Report | None, head: Report, policy: Policy, level: float | None = None
) -> Comparison:
    """Pair the head's cases with the base's by id and decide the verdict. `base` None: the
    suite is new, there is no baseline, and the head is judged on its own (its blocking cases
    and errors); otherwise a comparison that paired no case is an error, never a pass.
    `level`: the drop test's (the suite's share of the PR's false-block rate; default: the
    share `repeats: auto` recorded, else the whole `false_block_rate`)."""
    paired = pair(base, head)
    auto = paired.auto
    if level is None:
        level = auto.level if auto and auto.level else policy.false_block_rate
    rates = pass_rates(paired.pairs, auto, policy)
    changed = changed_cases(
        paired.pairs, paired.by_pr, paired.added, paired.removed, policy, rates.fractions
    )
    lists, changes = sort_into_lists(changed, repeated=rates.repeated)
    sides = Sides(
        base=totals(paired.base.results, paired.base.meta.repeats),
        head=totals(paired.head.results, paired.head.meta.repeats),
        base_usage=usage(b for b, _ in paired.pairs),
        head_usage=usage(h for _, h in paired.pairs),
    )
    decided = decision(
        paired.pairs, auto, rates, lists, changes, sides, policy, level,
        baseline=paired.baseline, pairing=paired.findings() if paired.baseline else (),
    )  # fmt: skip
    return _comparison(paired, rates, lists, changes, sides, decided, policy)


def _comparison(
    paired: Pairing,
    rates: PassRates,
    lists: CaseLists,
    changes: dict[str, CaseChange],
    sides: Sides,
    decided: Decision,
    policy: Policy,
) -> Comparison:
    """The steps' results as the comparison's model (and its `json` format)."""
    base, head, stats = paired.base, paired.head, rates.stats
    unpaired_head = [*paired.added, *(h for _, h in paired.by_pr)]
    return Comparison(
        verdict=decided.verdict,
        findings=decided.findings,
        suite=head.meta.suite or base.meta.suite or "default",
        policy=policy,
        base_pass_rate=rates.base,
        head_pass_rate=rates.head,
        delta_points=rates.delta,
        paired=rates.table.n,
        p_value=stats.p_value,
        ci_low_points=stats.ci_low_points,
        ci_high_points=stats.ci_high_points,
        significant=stats.significant,
        statistics=stats,
        power=decided.power,
        drop_test=decided.drop_test,
        tasks=task_deltas(paired.pairs, unpaired_head, paired.removed, lists, rates.fractions),
        metrics=metric_rates(paired.pairs),
        base=sides.base,
        head=sides.head,
        base_usage=sides.base_usage,
        head_usage=sides.head_usage,
        cases=changes,
        base_meta=base.meta if paired.baseline else None,
        head_meta=head.meta,
        rubric=compare_rubric(paired.pairs),
        **lists.as_fields(),
    )
