"""`repeats: auto` in the PR flow: spend calls where the decision needs them, stop once it is
made.

After round 0 (every case `first` times on both sides, the ordinary `gate run`), each look:
1. estimate each paired case on both sides (`gate.compare.estimates`: unbiased although the
   runs were allocated by the outcomes) and the delta, its standard error and degrees of
   freedom;
2. the drop test's look (`gate.compare.droptest`): the suite **fails** when the estimate is
   past −threshold and the look's p-value reaches its boundary (the suite's share of the PR's
   false-block rate, spent over the looks by the information they reached);
3. it **passes** when a drop of the design's size (`detect`, default 1.5 × threshold) is ruled
   out (Wald's likelihood ratio of that drop against no change is below 1/10, and the
   estimate is within the threshold), or when the standard error reached the design's
   precision (`precise`) without a fail;
4. otherwise the next round gets the cases whose runs are fewer than the round's target
   times their spread (`gate.report.plan.continues`): the target is the Neyman constant that
   reaches the design's precision if every case gets runs in proportion to its spread. It
   stops when no case goes on (`settled`) or at the budget (`max_calls_per_case`, `max_calls`,
   `max_cost_usd`: paid calls only, so answers the response cache already holds, e.g. an
   unchanged base sampled by main's runs, cost nothing; when a whole round does not fit, a
   last round takes as many of its cases as fit, in an order by id hash), undecided;
5. ask both sides' runners (the same two processes as round 0) for the next round's runs of
   just those cases, and go to 1.
After a decision the open blocking cases keep running (a flaky blocker decides alone). Both
reports then record the plan, every round's target, every look, the calls and why it stopped,
and each case whether its own rule or the flow's stop ended its runs: what the comparison
needs to follow them.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gate.compare.droptest import sequential_test
from gate.compare.estimates import DeltaEstimate, delta_estimate, rao_blackwell
from gate.compare.sequential import design_se
from gate.flow.plan import FlowPlan
from gate.flow.sides import SideProcess, run_round
from gate.inputs.policy import Policy
from gate.render.values import STOPPED
from gate.report.models import CaseResult, Report
from gate.report.plan import AutoRecord, Look, Plan, StopReason, continues, spread
from gate.run.protocol import RunMore
from gate.run.spec import auto_plan

PLAN_MARGIN = 1.1  # the rounds aim this far below the design's standard error: the spreads of
# cases that never failed yet are estimated from few runs and run low
MIN_INFO_STEP = 0.01  # a look whose information grew less than this is not a look
FUTILITY = 0.1  # pass once the likelihood ratio of the design's drop is below this
MAX_TARGET = 1e6

Pairs = list[tuple[CaseResult, CaseResult]]


def _paired(base: Report, head: Report) -> Pairs:
    by_id = {r.id: r for r in base.results}
    return [(by_id[h.id], h) for h in head.results if h.id in by_id and not h.added]


def _calls(report: Report) -> int:
    return sum(r.repeats for r in report.results)


def paid(result: CaseResult) -> tuple[int, float]:
    """The calls of a case that the response cache did not answer, and what they cost."""
    if not result.attempts:
        return (0, 0.0) if result.cached else (1, result.cost_usd or 0.0)
    fresh = [a for a in result.attempts if not a.cached]
    return len(fresh), sum(a.cost_usd or 0.0 for a in fresh)


@dataclass(frozen=True)
class Budget:
    """What a suite's rounds may pay for: calls of both sides, and USD (None: no limit)."""

    calls: int
    usd: float | None = None

    @classmethod
    def of(cls, policy: Policy, cases: int) -> Budget:
        per_side = policy.max_calls_per_case * cases
        if policy.max_calls is not None:
            per_side = min(per_side, policy.max_calls)
        return cls(calls=int(2 * per_side), usd=policy.max_cost_usd)

    def left(self, pairs: Pairs) -> float:
        """The calls (both sides) the budget can still pay for: of `calls`, and of `usd` at
        the price per call so far (as if none of the next calls were cached)."""
        spent_calls, spent_usd, all_calls, all_usd = 0, 0.0, 0, 0.0
        for b, h in pairs:
            for result in (b, h):
                n, usd = paid(result)
                spent_calls, spent_usd = spent_calls + n, spent_usd + usd
                all_calls += result.repeats
                all_usd += result.cost_usd or 0.0
        left = float(self.calls - spent_calls)
        if self.usd is not None and all_usd > 0:
            left = min(left, (self.usd - spent_usd) / (all_usd / all_calls))
        return max(left, 0.0)

    def room(self, pairs: Pairs, calls: int) -> int:
        """How many cases a round of `calls` calls per case and side can still take."""
        return math.floor(self.left(pairs) / (2 * calls) + 1e-9)  # 0.4 / 0.01 is 39.99…


def _allocated(plan: Plan, spreads: Sequence[tuple[float, int]], k: float) -> float:
    return sum(min(max(r, k * s), plan.max_repeats) for s, r in spreads)


def round_target(
    plan: Plan,
    counts: Sequence[tuple[int, int, int]],
    se_target: float,
    runs_left: float = math.inf,
) -> float:
    """The Neyman constant K: with each case at max(its runs, K × its spread) runs (at most
    `max_repeats`), the delta's standard error is `se_target` points; or, where the budget
    cannot pay for that (`runs_left` more runs per side), the K the budget pays for, so the
    calls it has still go to the cases whose runs disagree most."""
    spreads = [(spread(plan, b, h, r), r) for b, h, r in counts]
    goal = (se_target / 100.0 * len(counts)) ** 2

    def variance(k: float) -> float:
        return sum(s * s / min(max(r, k * s), plan.max_repeats) for s, r in spreads)

    precise = MAX_TARGET if variance(MAX_TARGET) > goal else _bisect(lambda k: variance(k) > goal)
    have = sum(r for _, r in spreads)
    if _allocated(plan, spreads, precise) - have <= runs_left:
        return round(precise, 4)
    return round(_bisect(lambda k: _allocated(plan, spreads, k) - have <= runs_left), 4)


def _bisect(below: Callable[[float], bool]) -> float:
    """The K in [0, MAX_TARGET] where `below` (true at 0, monotone) turns false."""
    low, high = 0.0, MAX_TARGET
    for _ in range(80):
        middle = 0.5 * (low + high)
        if below(middle):
            low = middle
        else:
            high = middle
    return high


@dataclass
class Round:
    """The state of the rounds of one suite (or shard): which cases are still open, each
    round's target and each look of the drop test."""

    plan: Plan
    policy: Policy
    level: float  # the drop test's: the suite's share of the PR's false-block rate
    se_target: float  # points
    budget: Budget
    active: set[str]
    rounds: int = 0
    stop: StopReason | None = None
    targets: list[float | None] = field(default_factory=list)
    looks: list[Look] = field(default_factory=list)
    estimate: DeltaEstimate | None = None
    last: set[str] | None = None  # the cases of a last, partial round (the budget ran out)
    only: set[str] | None = None  # after the decision: the open blocking cases still running

    def next(self, base: Report, head: Report) -> tuple[list[str], int]:
        """After a round: set this round's target, close the cases whose rule says so, look,
        then either stop (`stop` is set) or name the cases of the next round and the runs each
        gets on both sides."""
        plan, pairs = self.plan, _paired(base, head)
        counts = {h.id: (sum(b.run_passes()), sum(h.run_passes()), h.repeats) for b, h in pairs}
        if len(self.targets) == self.rounds:
            uniform = self.rounds < plan.uniform
            left = self.budget.left(pairs) / 2
            target = (
                None if uniform else round_target(plan, list(counts.values()), self.se_target, left)
            )
            self.targets.append(target)
        ran = self.last if self.last is not None else self.only or self.active
        goes_on = {i: continues(plan, *counts[i], self.rounds, self.targets[-1]) for i in counts}
        self.active = {i for i in self.active if i in counts and (i not in ran or goes_on[i])}
        self.estimate = self._estimate(pairs)
        if self.only is None and self.stop is None:
            decided = self._look(pairs)
            if decided is not None:
                self.stop = decided
        if self.stop is not None:
            return self._blockers(pairs, counts)
        if not self.active:
            self.stop = "settled"
        elif self.last is not None:
            self.stop = "budget"
        else:
            return self._round(sorted(self.active), counts, pairs)
        return [], 0

    def _estimate(self, pairs: Pairs) -> DeltaEstimate | None:
        moments = []
        for b, h in pairs:
            own, other = b.run_passes(), h.run_passes()
            by_rule = h.id not in self.active
            moments.append(
                (
                    rao_blackwell(
                        self.plan, own, other, stopped_by_rule=by_rule, targets=self.targets
                    ),
                    rao_blackwell(
                        self.plan, other, own, stopped_by_rule=by_rule, targets=self.targets
                    ),
                )
            )
        return delta_estimate(moments)

    def _final(self, pairs: Pairs) -> bool:
        """This look is the last: the precision is reached, no case goes on, or the budget
        leaves no room for another round."""
        if self.estimate is None or self.estimate.se_points <= self.se_target:
            return True
        if not self.active or self.last is not None:
            return True
        return self.budget.room(pairs, self.plan.size(self.rounds + 1)) <= 0

    def _look(self, pairs: Pairs) -> StopReason | None:
        """The drop test's look after this round: fail, pass, precise, or go on (None)."""
        estimate, threshold = self.estimate, self.policy.threshold
        if estimate is None:
            return "precise"
        final = self._final(pairs)
        info = 1.0 if final else min(1.0, (self.se_target / max(estimate.se_points, 1e-12)) ** 2)
        previous = self.looks[-1].info if self.looks else 0.0
        if info >= previous + MIN_INFO_STEP:
            self.looks.append(
                Look(
                    round=self.rounds,
                    info=round(info, 6),
                    delta_points=estimate.delta_points,
                    se_points=estimate.se_points,
                    df=estimate.df,
                )
            )
            if sequential_test(self.looks, threshold, self.level).significant:
                return "fail"
        if estimate.se_points <= self.se_target:
            return "precise"
        if estimate.delta_points > -threshold and self._drop_ruled_out(estimate):
            return "pass"
        return None

    def _drop_ruled_out(self, estimate: DeltaEstimate) -> bool:
        """Wald's likelihood ratio of a drop of `detect` points against no change is below
        `FUTILITY`."""
        drop, info = self.policy.detect_points, 1.0 / max(estimate.se_points, 1e-12) ** 2
        log_ratio = -drop * estimate.delta_points * info - drop * drop * info / 2
        return log_ratio <= math.log(FUTILITY)

    def _blockers(
        self, pairs: Pairs, counts: dict[str, tuple[int, int, int]]
    ) -> tuple[list[str], int]:
        """The threshold rule is decided, but a blocking case decides on its own: the blocking
        cases whose own rule goes on keep running (chosen by severity, never by outcome), so a
        flaky blocker is not judged on its first two runs. The others end by the flow's stop."""
        if self.last is not None:  # a last, partial round ran: the budget is spent
            self.stop = "budget"
            return [], 0
        blocking = {h.id for _, h in pairs if h.severity in self.policy.block_severities}
        self.only = self.active & blocking
        if not self.only:
            return [], 0
        return self._round(sorted(self.only), counts, pairs)

    def _round(
        self, ids: list[str], counts: dict[str, tuple[int, int, int]], pairs: Pairs
    ) -> tuple[list[str], int]:
        """The next round of `ids` within the budget: all of them, or a last round of as many
        as it allows, in an order that depends on no outcome (a hash of the id)."""
        plan = self.plan
        runs = max(counts[i][2] for i in ids)
        size = min(plan.size(self.rounds + 1), plan.max_repeats - runs)
        room = self.budget.room(pairs, size) if size > 0 else 0
        if room >= len(ids):
            return ids, size
        if room <= 0:
            self.stop = self.stop or "budget"
            return [], 0
        order = sorted(ids, key=lambda i: hashlib.sha256(i.encode()).digest())
        self.last = set(order[:room])
        return sorted(self.last), size


def start(policy: Policy, level: float, base: Report, head: Report, *, shards: int = 1) -> Round:
    """The rounds' state after round 0, for a drop test at `level` (the suite's share of the
    PR's false-block rate). The budget and the calls spent are over the paired cases, the only
    ones the rounds extend (and the ones the comment counts): a case only one side has must
    not use up the other cases' budget. A shard aims at its share of the suite's precision
    (√shards times the suite's standard error)."""
    pairs = _paired(base, head)
    se_target = design_se(policy.threshold, policy.detect_points, level) / PLAN_MARGIN
    return Round(
        plan=auto_plan(policy),
        policy=policy,
        level=level,
        se_target=se_target * math.sqrt(shards),
        budget=Budget.of(policy, len(pairs)),
        active={h.id for _, h in pairs},
    )


def _progress(state: Round, ids: list[str], size: int) -> str:
    shown = state.estimate
    where = (
        ""
        if shown is None
        else f"; delta {shown.delta_points:+.1f}, standard error {shown.se_points:.2f} "
        f"(target {state.se_target:.2f})"
    )
    return (
        f"round {state.rounds + 1}: {len(ids)} cases, {size} more run{'s' if size > 1 else ''} "
        f"each on both sides{where}"
    )


def spend(plan: FlowPlan, sides: Sequence[SideProcess]) -> None:
    """Run the rounds after round 0 for the suite (or the shard of it) of `sides`, judged by
    the flow's policy (the base's: its budgets, `max_repeats` and false-block rate); see the
    module doc. The sides' reports, in memory, record the plan and why the rounds stopped."""
    stream = plan.request.io.stream
    spec = sides[0].spec
    by_side = {side.name: side for side in sides}
    base, head = by_side["base"].report(), by_side["head"].report()
    shards = spec.shard_of.total if spec.shard_of else 1
    state = start(plan.policy, plan.drop_level, base, head, shards=shards)
    while True:
        ids, size = state.next(base, head)
        if not ids:
            break
        print(f"[gate] suite {spec.suite}: {_progress(state, ids, size)}", file=stream, flush=True)
        run_round(sides, RunMore(ids=ids, repeats=size))
        if not all(side.alive for side in sides):
            state.stop = "failed"
            break
        state.rounds += 1
        base, head = by_side["base"].report(), by_side["head"].report()
    record(state, base, head)
    by_side["base"].meta, by_side["head"].meta = base.meta, head.meta
    stopped = f"{STOPPED[state.stop]} after {state.rounds} rounds"
    print(f"[gate] suite {spec.suite}: repeats auto: {stopped}", file=stream, flush=True)


def auto_record(state: Round, base: Report, head: Report, report: Report) -> AutoRecord:
    """What the rounds did, as `report` records it (its own calls; the rest is the suite's)."""
    pairs = _paired(base, head)
    fresh = [paid(r) for pair in pairs for r in pair]
    return AutoRecord(
        plan=state.plan,
        rounds=state.rounds,
        stop=state.stop,
        calls=_calls(report),
        targets=state.targets,
        level=state.level,
        se_target_points=round(state.se_target, 6),
        looks=state.looks,
        paid_calls=sum(n for n, _ in fresh),
        paid_usd=round(sum(usd for _, usd in fresh), 8),
    )


def record(state: Round, base: Report, head: Report) -> None:
    """The plan, the rounds and why they stopped, in both reports; each case whether its own
    rule or the flow's stop ended its runs."""
    for report in (base, head):
        auto = auto_record(state, base, head, report)
        report.meta = report.meta.model_copy(update={"auto": auto})
        for result in report.results:
            result.auto_end = "flow" if result.id in state.active else "rule"
