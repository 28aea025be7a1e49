"""Suites of a noisy model through the PR flow's own rules, in memory: fast to rerun.

Each trial is one PR of one or more suites. Every case of a suite passes on a side with its
own probability; a side's runs are drawn from a seeded generator. The rounds are the flow's
(`gate.flow.adaptive.Round`: the rule, the targets, the looks, the budget), the comparison is
`gate compare`'s (`gate.compare.pairing.compare`, at the suite's share of the PR's
false-block rate) and the split over the suites is the flow's (Holm,
`gate.compare.droptest.split_levels`); only the `gate run` processes are replaced by appending
drawn attempts to the reports in memory. `benchmarks/trust.py` measures the same scenarios
through the real commands.

Scenarios: `4x100` (four suites of 100 cases, 70 at p = .97, 20 at .5, 10 at .05; the drop:
10 easy cases of one suite fall to .5, a true −4.7 points), `issue` (one suite of 200 cases in
the same proportions; 20 easy cases fall to .5, −4.7 points) and `steady` (300 cases: 200
always pass, 40 never, 45 at .85, 15 at .3; 30 of the .85 fall to .35, −5.0 points).

    python benchmarks/suites_sim.py [--trials 200] [--scenarios 4x100,issue,steady]
        [--inconclusive pass,block] [--seed 1] [--set key=value ...]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from gate.inputs.policy import Policy, PolicyKeys

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # for helpers
from helpers.noisy_suites import Suite, run_pr, scenarios


@dataclass
class Row:
    blocked: float
    inconclusive: float
    calls: float
    mean_delta: float


def measure(policy: Policy, suites: list[Suite], trials: int, seed: int) -> Row:
    rng = random.Random(seed)
    blocked = inconclusive = 0
    calls = deltas = 0.0
    for _ in range(trials):
        judged = run_pr(policy, suites, rng)
        verdicts = [c.verdict for c in judged]
        blocked += "fail" in verdicts or (
            "inconclusive" in verdicts and policy.inconclusive == "block"
        )
        inconclusive += "inconclusive" in verdicts
        cases = sum(c.paired for c in judged)
        calls += sum(c.base_usage.calls + c.head_usage.calls for c in judged) / (2 * cases)
        deltas += judged[0].delta_points or 0.0
    return Row(blocked / trials, inconclusive / trials, calls / trials, deltas / trials)


def oracle(suites: list[Suite], calls: float, threshold: float) -> float:
    """The chance that a PR of these suites is blocked by the estimate alone (below
    −threshold) when every suite's runs follow the Neyman allocation of `calls` per case and
    side for the base's known probabilities (normal approximation)."""
    normal = NormalDist()
    clear = 1.0
    for base, head in suites:
        n, spreads = len(base), [math.sqrt(p * (1 - p)) for p in base]
        runs = [calls * n * s / sum(spreads) for s in spreads]
        variance = sum(
            (p * (1 - p) + q * (1 - q)) / r for p, q, r in zip(base, head, runs, strict=True)
        )
        mean = (sum(head) - sum(base)) / n
        clear *= 1 - normal.cdf((-threshold / 100 - mean) / (math.sqrt(variance) / n))
    return 1 - clear


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=200, help="PRs per row (default 200)")
    parser.add_argument("--scenarios", default="4x100,issue,steady")
    parser.add_argument("--inconclusive", default="pass,block")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], help="a policy key, key=value")
    args = parser.parse_args()
    overrides = dict(item.split("=", 1) for item in args.set)
    print(f"{args.trials} PRs per row; policy overrides: {overrides or 'none'}\n")
    header = (
        f"{'scenario':9} {'inconclusive':13} {'no-op blocked':>14} {'drop caught':>12} "
        f"{'calls (no-op, drop)':>22} {'inconclusive PRs (no-op, drop)':>32}"
    )
    print(header)
    print("-" * len(header))
    for name in args.scenarios.split(","):
        noop, drop = scenarios()[name]
        for setting in args.inconclusive.split(","):
            policy = Policy.from_config(
                PolicyKeys.model_validate({**overrides, "inconclusive": setting})
            )
            started = time.perf_counter()
            a = measure(policy, noop, args.trials, args.seed)
            b = measure(policy, drop, args.trials, args.seed + 1)
            print(
                f"{name:9} {setting:13} {a.blocked:>14.1%} {b.blocked:>12.1%} "
                f"{a.calls:>12.2f}, {b.calls:<8.2f} {a.inconclusive:>20.1%}, "
                f"{b.inconclusive:<10.1%} [{time.perf_counter() - started:.0f} s]",
                flush=True,
            )
        threshold = Policy.from_config().threshold
        for calls in (3.0, 8.6):
            print(
                f"{name:9} {'oracle':13} {oracle(noop, calls, threshold):>14.1%} "
                f"{oracle(drop, calls, threshold):>12.1%} {calls:>12.2f}, {calls:<8.2f}"
                "   (Neyman allocation, p known; the estimate alone blocks)"
            )


if __name__ == "__main__":
    main()
