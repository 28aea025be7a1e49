"""Findings: one model per kind, read back by `kind`, and worded once where output is rendered."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from helpers.reports import case, report
from pydantic import TypeAdapter

from gate.compare import findings as f
from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.flow.judging import failed_comparison
from gate.flow.sides import SideStatus
from gate.inputs.policy import Policy
from gate.render import RenderContext, render_comment, render_json
from gate.render.markdown import text
from gate.render.reasons import sentence, worded, words

RUNS = f.Runs(base_passes=3, base_runs=3, head_passes=1, head_runs=3)

# One example of every kind, with the sentence it must read as.
SENTENCES: list[tuple[f.Finding, str]] = [
    (f.NoHeadResults(), "the head report has no case results"),
    (
        f.ErrorRate(side="head", errors=6, cases=100, rate_pct=6.0, limit_pct=5),
        "6 of 100 head cases ended in an error (6.0%, the limit is 5%)",
    ),
    (
        f.BlockingError(side="base", ids=[f"b{i}" for i in range(7)]),
        "blocking cases b0, b1, b2, b3, b4 and 2 more ended in an error on base",
    ),
    (
        f.NothingCompared(base_cases=3, head_cases=4),
        "no case ran on both sides (3 on base, 4 on head, none of them paired), "
        "so nothing was compared",
    ),
    (
        f.SideFailed(side="head", shard="2/4", exit_code=3, error="sandbox unavailable"),
        "the head side of shard 2/4 could not run (exit 3): sandbox unavailable",
    ),
    (
        f.NoBaseResults(),
        "without the base's results nothing can be compared, so this is no pass",
    ),
    (
        f.ShardsMissing(suite="billing", folder="reports"),
        "no shard reports of suite `billing` under `reports`: every shard job must run with "
        "`mode: shard` and upload its reports, and the final job must download them into "
        "that folder",
    ),
    (
        f.ShardsStale(
            base_sha="a" * 40,
            head_sha="b" * 40,
            stale=[f.ShardFile(shard="1/2", path="reports/s/shard-1-of-2.json")],
        ),
        "shard reports of other commits than base aaaaaaaaaaaa and head bbbbbbbbbbbb: "
        "1/2 (reports/s/shard-1-of-2.json)",
    ),
    (
        f.ShardsIncomplete(problem="shard 2/3 is missing"),
        "shard 2/3 is missing; the verdict needs every shard exactly once (a shard is missing "
        "when its job failed, was skipped or cancelled, or its reports were not downloaded)",
    ),
    (
        f.ShardsUnmerged(side="base", problem="x.jsonl: report not found"),
        "the base shards do not merge: x.jsonl: report not found",
    ),
    (
        f.Drop(
            drop_points=3.03, threshold=3, p_value=0.0012, bar=0.0031, level=0.005, method="t"
        ),
        "the pass rate dropped 3.03 points, more than the threshold of 3, and the drop is "
        "significant against no change (p = 0.0012, one-sided; the bar was 0.0031, from this "
        "suite's level of 0.5%, its share of the PR's false-block rate)",
    ),
    (
        f.Inconclusive(
            why="not_significant",
            delta_points=-4.2,
            threshold=3,
            ci_low_points=-8.9,
            ci_high_points=0.5,
            confidence=0.95,
            p_value=0.04,
            bar=0.005,
            level=0.005,
            more_runs=1240,
            cases=31,
        ),
        "inconclusive: the pass rate dropped 4.2 points (95% interval [−8.9, 0.5]), past the "
        "threshold of 3, but the drop is not significant against no change (p = 0.04, "
        "one-sided; the bar is 0.005, from this suite's level of 0.5%, its share of the PR's "
        "false-block rate); about 1,240 more runs on each side of the 31 cases whose runs "
        "disagree would decide it, if the estimate stayed where it is",
    ),
    (
        f.WithinThreshold(delta_points=-1.25, threshold=3),
        "the pass rate changed by −1.2 points (a drop of more than 3 blocks)",
    ),
    (
        f.NoBaseline(head_cases=4),
        "this suite is new: the base has no such suite, so there is no baseline and the "
        "threshold rule does not apply; the head's own blocking cases and errors still count",
    ),
    (
        f.Blockers(ids=["b1", "b2", "b3"], new_ids=["b1"], runs={"b3": RUNS}),
        "3 blocking cases do not pass on head: b1 (new), b2 (already failing on base), "
        "b3 (flaky, runs passed 3/3 on base → 1/3 on head; passed every run on base)",
    ),
    (
        f.OldBlockers(ids=["b4"]),
        "1 blocking case fails on head but did not pass every run on base, so with "
        "`blockers: new` it does not block: b4 (already failing on base)",
    ),
    (f.NoBlockerFails(), "no blocking case fails on head"),
    (
        f.BudgetExceeded(metric="tokens", rise_pct=30.0, limit_pct=20),
        "total tokens rose 30.0% over the cases both sides ran, more than the budget of 20% "
        "(`budgets.tokens_pct`)",
    ),
    (
        f.BudgetFromZero(metric="cost"),
        "cost was 0 on base and is not on head, which no percentage budget allows",
    ),
    (
        f.BudgetUnmeasured(metric="latency_p95"),
        "the p95 latency budget was not checked: a side did not report its p95 latency "
        "(e.g. no usage)",
    ),
    (
        f.HeadPolicyChanges(
            changes=[
                f.PolicyChange(key="threshold", base=2.0, head=5.5),
                f.PolicyChange(key="budgets", base={"cost_pct": 20.0}, head={}),
            ]
        ),
        "this PR changes the policy in gate.yml (threshold: 2 → 5.5; budgets: {cost_pct: 20} "
        "→ {}): the base's policy judges it, the head's takes effect after merge",
    ),
    (
        f.HeadPolicyApplies(),
        "the base has no gate.yml, so the head's policy judges this PR",
    ),
    (
        f.CoarseSuite(
            cases=12, case_weight_points=8.333, detectable_points=25.7, threshold=3, level=0.02
        ),
        "this suite cannot enforce a 3-point threshold: with 12 cases one case is 8.3 points, "
        "so a single regression decides, and the drop it catches 9 times in 10 is 25.7 points",
    ),
    (
        f.Underpowered(
            cases=400, case_weight_points=0.25, detectable_points=6.5, threshold=3, level=0.005
        ),
        "this comparison catches only drops of 6.5 points or more 9 times in 10 (at its level "
        "of 0.5%): smaller drops past the threshold of 3 are often inconclusive; more cases or "
        "repeats (or repeats: auto) resolve them",
    ),
    (
        f.OtherSuite(base_suite="one", head_suite="two"),
        "the base report is of suite 'one', the head's of 'two'",
    ),
    (
        f.Unpaired(added=2, removed=1),
        "2 added and 1 removed cases are not in the pass-rate delta, which is over the cases "
        "both sides ran",
    ),
    (f.Skipped(reason="no watched file changed"), "no watched file changed"),
]


@pytest.mark.parametrize(
    ("finding", "said"), SENTENCES, ids=[finding.kind for finding, _ in SENTENCES]
)
def test_each_kind_reads_as_one_sentence(finding: f.Finding, said: str) -> None:
    assert sentence(finding) == said


def test_every_kind_has_an_example_and_reads_back_from_json() -> None:
    kinds = {model.model_fields["kind"].default for model in get_args(get_args(f.Finding)[0])}
    assert {finding.kind for finding, _ in SENTENCES} == kinds
    adapter: TypeAdapter[list[f.Finding]] = TypeAdapter(list[f.Finding])
    examples = [finding for finding, _ in SENTENCES]
    assert adapter.validate_json(adapter.dump_json(examples)) == examples


def test_the_words_are_made_where_output_is_rendered(tmp_path: Path) -> None:
    """A comparison holds findings only; every format words them the same way."""
    c = compare(
        report(tmp_path, "base", [case("a", severity="blocker"), case("b"), case("c")]),
        report(tmp_path, "head", [case("a", "fail", severity="blocker"), case("b"), case("d")]),
        Policy(),
    )
    assert "reasons" not in Comparison.model_fields
    said = words(c)
    assert said.reasons[0].startswith("1 blocking case does not pass on head: a (new)")
    assert said.reasons[1].startswith("also: inconclusive: the pass rate dropped 50.0 points")
    assert said.notes[0].startswith("1 added and 1 removed cases are not in the pass-rate delta")
    shown = Comparison.model_validate_json(render_json(c))
    data = worded(c).model_dump(mode="json")
    assert list(data)[:4] == ["verdict", "findings", "reasons", "notes"]
    assert data["reasons"] == said.reasons and data["notes"] == said.notes
    assert shown.findings == c.findings
    comment = render_comment(c, RenderContext())
    assert f"- {text(said.reasons[0])}" in comment and f"- ℹ️ {text(said.notes[0])}" in comment


def test_a_side_that_failed_is_a_finding_worded_like_the_others() -> None:
    failed = failed_comparison([SideStatus(side="base", returncode=2, error="no such file")], "s")
    assert failed is not None
    assert [type(x) for x in failed.findings] == [f.SideFailed, f.NoBaseResults]
    assert words(failed).reasons == [
        "the base side could not run (exit 2): no such file",
        "without the base's results nothing can be compared, so this is no pass",
    ]
    comment = render_comment(failed, RenderContext(suite="s"))
    headline, _, rest = comment.split("\n", 3)[1:]
    assert headline.endswith(f"(s) — {text('the base side could not run (exit 2): no such file')}")
    assert f"- {text(words(failed).reasons[1])}" in rest
