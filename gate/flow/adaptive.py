"""`repeats: auto` in the PR flow: spend calls where the decision needs them, stop when clear.

After round 0 (every case `first` times on both sides, the ordinary `gate run`), each round:
1. estimate each paired case on both sides (`gate.compare.estimates`: unbiased although the
   runs were allocated by the outcomes) and the interval of the delta;
2. when the interval lies wholly on one side of -threshold (the threshold rule is clear), go
   on with the open blocking cases only, and stop once none is open;
3. otherwise keep the cases whose outcome is still uncertain (`gate.report.plan.continues`),
   stop when there are none, or at the call budget (when a whole round would pass it, a
   last round takes as many of them as it allows, in an order by id hash);
4. run more attempts of just those cases on both sides (`gate run --append --cases-from`),
   in the same two processes as round 0, and go to 1.
At the end both reports record the plan, the rounds, the calls and why it stopped, and each
case whether its own rule or the flow's stop ended its runs: what the comparison needs to
follow the plan. The response cache keys each attempt by its index, so an unchanged base
replays its answers and only a changed head pays.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gate.compare.estimates import decision_clear, delta_interval, unbiased_fraction
from gate.flow.plan import FlowPlan
from gate.flow.sides import MoreRuns, Side, run_sides
from gate.inputs.config import GateConfig
from gate.inputs.policy import Policy
from gate.render.values import STOPPED
from gate.report.io import dump_line, read_report, write_report
from gate.report.models import CaseResult, Report
from gate.report.plan import AutoRecord, Plan, StopReason, continues
from gate.run.side import auto_plan

CALLS_PER_CASE = 3.5  # the default call budget per side: this many calls per case on average


def budget(config: GateConfig, cases: int) -> int:
    return config.max_calls or int(CALLS_PER_CASE * cases)


def _paired(base: Report, head: Report) -> list[tuple[CaseResult, CaseResult]]:
    by_id = {r.id: r for r in base.results}
    return [(by_id[h.id], h) for h in head.results if h.id in by_id and not h.added]


def _diffs(
    plan: Plan, pairs: Sequence[tuple[CaseResult, CaseResult]], active: set[str]
) -> list[float]:
    out = []
    for b, h in pairs:
        base_runs, head_runs = b.run_passes(), h.run_passes()
        by_rule = h.id not in active  # still open: only the flow's stop would end it
        out.append(
            unbiased_fraction(plan, head_runs, base_runs, stopped_by_rule=by_rule)
            - unbiased_fraction(plan, base_runs, head_runs, stopped_by_rule=by_rule)
        )
    return out


def _calls(report: Report) -> int:
    return sum(r.repeats for r in report.results)


@dataclass
class Round:
    """The state of the rounds of one suite (or shard): which cases are still open."""

    plan: Plan
    limit: int
    active: set[str]
    rounds: int = 0
    stop: StopReason | None = None
    interval: tuple[float, float, float] | None = None
    last: set[str] | None = None  # the cases of a last, partial round (the budget ran out)
    only: set[str] | None = None  # after a clear stop: the open blocking cases still running

    def next(self, base: Report, head: Report, policy: Policy) -> tuple[list[str], int]:
        """After a round: close the cases whose rule says so, then either stop (`stop` is set)
        or name the cases of the next round and the runs each gets on both sides.

        When a whole round would pass the call budget, a last round takes as many of the open
        cases as the budget allows, in an order that does not depend on any outcome (a hash of
        the id), so that being left out is the flow's stop, not a choice by the data."""
        plan, pairs = self.plan, _paired(base, head)
        counts = {h.id: (sum(b.run_passes()), sum(h.run_passes()), h.repeats) for b, h in pairs}
        ran = self.last if self.last is not None else self.only or self.active
        self.active = {
            i
            for i in self.active
            if i in counts and (i not in ran or continues(plan, *counts[i], self.rounds))
        }
        self.interval = delta_interval(_diffs(plan, pairs, self.active), policy.alpha)
        if self.only is not None or decision_clear(self.interval, policy.threshold):
            return self._blockers(pairs, counts, policy)
        if not self.active:
            self.stop = "settled"
        elif self.last is not None:
            self.stop = "budget"
        else:
            return self._round(sorted(self.active), counts, pairs)
        return [], 0

    def _blockers(
        self,
        pairs: list[tuple[CaseResult, CaseResult]],
        counts: dict[str, tuple[int, int, int]],
        policy: Policy,
    ) -> tuple[list[str], int]:
        """The threshold rule is settled, but a blocking case decides on its own: the blocking
        cases whose own rule goes on keep running (chosen by severity, never by outcome), so a
        flaky blocker is not judged on its first two runs. The others end by the flow's stop."""
        if self.last is not None:  # a last, partial round ran: the budget is spent
            self.stop = "budget"
            return [], 0
        blocking = {h.id for _, h in pairs if h.severity in policy.block_severities}
        self.only = self.active & blocking
        if not self.only:
            self.stop = "clear"
            return [], 0
        return self._round(sorted(self.only), counts, pairs)

    def _round(
        self,
        ids: list[str],
        counts: dict[str, tuple[int, int, int]],
        pairs: list[tuple[CaseResult, CaseResult]],
    ) -> tuple[list[str], int]:
        """The next round of `ids` within the call budget: all of them, or a last round of as
        many as it allows, in an order that depends on no outcome (a hash of the id)."""
        plan = self.plan
        runs = max(counts[i][2] for i in ids)
        size = min(plan.size(self.rounds + 1), plan.max_repeats - runs)
        spent = max(sum(b.repeats for b, _ in pairs), sum(h.repeats for _, h in pairs))
        room = (self.limit - spent) // size if size > 0 else 0
        if room >= len(ids):
            return ids, size
        if room <= 0:
            self.stop = "budget"
            return [], 0
        order = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).digest())
        self.last = set(order[:room])
        return sorted(self.last), size


def start(config: GateConfig, base: Report, head: Report) -> Round:
    """The rounds' state after round 0. The call budget and the calls spent are over the paired
    cases, the only ones the rounds extend (and the ones the comment counts): a case only one
    side has must not use up the other cases' budget."""
    pairs = _paired(base, head)
    return Round(auto_plan(config), budget(config, len(pairs)), {h.id for _, h in pairs})


def spend(
    plan: FlowPlan, sides: Sequence[Side], env: Mapping[str, str], config: GateConfig
) -> None:
    """Run the rounds after round 0 for the suite (or the shard of it) of `sides`, judged by
    the flow's policy under the measuring gate.yml's plan (the base's); see the module doc."""
    policy, stream = plan.policy, plan.request.io.stream
    suite = sides[0].suite
    paths = {side.name: side.report for side in sides}
    base, head = read_report(paths["base"]), read_report(paths["head"])
    state = start(config, base, head)
    while True:
        ids, size = state.next(base, head, policy)
        if state.stop is not None:
            break
        listing = paths["head"].with_suffix(f".round-{state.rounds + 1}.txt")
        listing.write_text("".join(f"{i}\n" for i in ids), encoding="utf-8")
        shown = state.interval
        where = "" if shown is None else "; delta {:+.1f} [{:+.1f}, {:+.1f}]".format(*shown)
        print(
            f"[gate] suite {suite}: round {state.rounds + 1}: {len(ids)} uncertain cases, "
            f"{size} more run{'s' if size > 1 else ''} each on both sides{where}",
            file=stream,
            flush=True,
        )
        run_sides(sides, env, stream, MoreRuns(cases_from=listing, repeats=size))
        listing.unlink(missing_ok=True)
        if any(side.status().fatal for side in sides):
            state.stop = "failed"
            break
        state.rounds += 1
        base, head = read_report(paths["base"]), read_report(paths["head"])
    record(state, base, head, [read_report(path) for path in _detail_reports(sides)])
    done = f"[gate] suite {suite}: repeats auto: {STOPPED[state.stop]} after {state.rounds} rounds"
    print(done, file=stream, flush=True)


def _detail_reports(sides: Sequence[Side]) -> list[Path]:
    """The sides' full held-out reports (`--heldout-detail DIR`), which the rounds extend too."""
    return [p for s in sides if (p := s.detail_report) is not None and p.is_file()]


def record(state: Round, base: Report, head: Report, others: Sequence[Report] = ()) -> None:
    """Write the plan, the rounds and why they stopped into both reports (and `others`: the
    held-out detail reports, so that a comparison of them follows the plan as well)."""
    for report in (base, head, *others):
        auto = AutoRecord(
            plan=state.plan, rounds=state.rounds, stop=state.stop, calls=_calls(report)
        )
        finish(report, auto, state.active)


def finish(report: Report, auto: AutoRecord, active: set[str]) -> None:
    """Record in a report the plan it followed, the rounds, and why each case got no more
    runs."""
    meta = report.meta.model_copy(update={"auto": auto})
    for result in report.results:
        result.auto_end = "flow" if result.id in active else "rule"
    write_report(report.path, meta, (dump_line(r) for r in report.results))
