"""Findings: one model per kind, read back by `kind`, and worded once where output is rendered."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from helpers.reports import case, report
from pydantic import TypeAdapter

from gate.compare import findings as f
from gate.compare import instrument_findings as i
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
        f.Drop(drop_points=3.03, threshold=3),
        "the pass rate dropped 3.03 points, more than the threshold of 3",
    ),
    (
        f.Drop(drop_points=3.03, threshold=3, p_value=0.0012, bar=0.0031, level=0.005, method="t"),
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
        "false-block rate); about 1,240 more runs on each side, over the 31 cases whose runs "
        "disagree (about 40 each), would decide it if the estimate stayed where it is",
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
        "the base has no gate.yml, so the head's own instrument and policy judge this PR",
    ),
    (
        f.OverrideIgnored(key="threshold", asked=10.0, base=3.0, applied=3.0),
        "the override threshold: 10 was not applied as given: it would loosen the policy (3), "
        "and an Action input or a command-line flag may only make it stricter, so 3 judges "
        "this PR; loosen the policy in gate.yml, where the base's counts",
    ),
    (
        f.NotEnforced(),
        "this verdict is not enforced: the workflow sets `fail-on-regression: false`, so a "
        "fail (or an inconclusive that the policy blocks) does not block the merge",
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
        "repeats (`repeats: auto` spends them where they decide) resolve them",
    ),
    (
        f.Underpowered(
            cases=100,
            case_weight_points=1.0,
            detectable_points=8.1,
            threshold=3,
            level=0.02,
            advice="budget",
        ),
        "this comparison catches only drops of 8.1 points or more 9 times in 10 (at its level "
        "of 2%): smaller drops past the threshold of 3 are often inconclusive; the rounds of "
        "`repeats: auto` ended before they reached the design's precision: a larger "
        "`max_calls_per_case` or `max_cost_usd`, or more cases, resolve them",
    ),
    (
        f.Underpowered(
            cases=100,
            case_weight_points=1.0,
            detectable_points=10.6,
            threshold=3,
            level=0.02,
            se_points=3.9,
            noise_blocks=0.221,
            advice="fixed",
        ),
        "with a standard error of 3.9 points, noise alone takes this suite past the threshold "
        "of 3 in about 22.1% of PRs that change nothing, and fixed repeats fail on that alone; "
        "`repeats: auto` (or `require_significance: true`) blocks only a drop the drop test "
        "finds, keeping such false blocks under `false_block_rate`",
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
    # what a PR changes in the instrument, what the head's would say, and the way out
    (
        f.BaseUnreadable(problem="gate.yml (base 1234567890ab):2: key 'threshhold': unknown key"),
        "the base's gate.yml or case files cannot be read, so nothing can measure this PR "
        "(the head's instrument never takes the base's place): gate.yml (base "
        "1234567890ab):2: key 'threshhold': unknown key",
    ),
    (
        f.SuiteRemoved(suite="support", head_suites=["support-v2"]),
        "this PR removes or renames the suite `support` of the base's gate.yml; the head's "
        "new suite is `support-v2`: its cases would go unmeasured, so it fails",
    ),
    (
        f.AnswersReplayed(base_kind="openai", file="rec.jsonl"),
        "this PR switches the suite's system from `openai` to `replay` of `rec.jsonl`: the head "
        "reads recorded answers instead of asking its system, and answers the PR recorded "
        "cannot pass it, so it fails",
    ),
    (
        f.CasesRemoved(ids=["a"]),
        "this PR removes 1 case (a) from the case files: it is still asked of both sides and "
        "judged as the base defines it",
    ),
    (
        f.CasesAdded(ids=[f"n{k}" for k in range(7)], unjudged=["n6"]),
        "this PR adds 7 cases (n0, n1, n2, n3, n4 and 2 more): asked of both sides and "
        "reported apart, outside the pass-rate delta; only a failing blocker among them "
        "counts (it blocks); 1 case (n6) needs check code or a judge the base does not have, so "
        "the base cannot judge it: not asked until merged",
    ),
    (
        f.CasesEdited(field="expect", ids=["a", "b"]),
        "this PR changes the expectations of 2 cases (a, b): the base's definition judges them",
    ),
    (
        f.CasesEdited(field="agent", ids=["refund-01"]),
        "this PR changes the tools, turns or simulated user of 1 case (refund-01): the base's "
        "definition judges it",
    ),
    (
        f.SeveritiesChanged(
            changes=[
                i.SeverityChange(id="a", base="blocker", head="minor"),
                i.SeverityChange(id="b", base="minor", head="major"),
            ]
        ),
        "this PR lowers the severity of a (blocker → minor) and raises the severity of b "
        "(minor → major): the base's severities judge it",
    ),
    (
        f.HeldoutChanged(shown=["h1"], hidden=["h2", "h3"]),
        "this PR stops holding out 1 case (h1) and holds out 2 cases (h2, h3): the base's "
        "choice applies (a case held out on base stays hidden)",
    ),
    (
        f.CaseFilesChanged(base=["cases/*.jsonl"], head=["evals/support.jsonl"]),
        "this PR points the suite's `cases:` at evals/support.jsonl (the base reads "
        "cases/*.jsonl): the base's case files are read",
    ),
    (
        f.WatchNarrowed(removed=["prompts/**"], excluded=["!prompts/experimental/**"]),
        "this PR narrows `watch` (it drops `prompts/**` and excludes "
        "`!prompts/experimental/**`): after merge, a change there no longer runs the gate",
    ),
    (
        f.PricesChanged(
            changes=[
                i.PriceChange(
                    model="big",
                    base={"input": 100.0, "output": 100.0},
                    head={"input": 0.01, "output": 0.01},
                ),
                i.PriceChange(model="new", base=None, head={"input": 1.0, "output": 2.0}),
            ]
        ),
        "this PR changes `prices` (big: {input: 100, output: 100} → {input: 0.01, output: "
        "0.01}; new: no price → {input: 1, output: 2}): the base's prices cost both sides",
    ),
    (
        f.JudgeChanged(changes=[i.KeyChange(key="model", base="gpt-4o", head="gpt-4o-mini")]),
        "this PR changes the judge (model: gpt-4o → gpt-4o-mini): the base's judge scores "
        "both sides",
    ),
    (
        f.SimulatedUserChanged(changes=[i.KeyChange(key="model", base="sim-1", head="sim-2")]),
        "this PR changes the simulated user (model: sim-1 → sim-2): the base's plays the user "
        "on both sides",
    ),
    (
        f.SandboxLimitsChanged(changes=[i.KeyChange(key="timeout_s", base=5.0, head=60.0)]),
        "this PR changes the sandbox's limits (timeout_s: 5 → 60): the base's limits apply to "
        "both sides",
    ),
    (
        f.TemplatesChanged(base=None, head="tpl", files=["comment.md.j2"]),
        "this PR changes the comment templates (`templates:` none → tpl): the base's render "
        "this comment",
    ),
    (
        f.CheckCodeChanged(files=["checks/grade.py"]),
        "this PR changes the code of `expect.python` checks (`checks/grade.py`): the base's "
        "code judges",
    ),
    (
        f.InstrumentFilesChanged(
            files=["evals/scorers.py"],
            settings=[i.KeyChange(key="inspect.pass", base="C", head="P")],
        ),
        "this PR changes what measures the suite (files `evals/scorers.py`; inspect.pass: C → "
        "P): both sides ran the base's version; the head's takes effect after merge",
    ),
    (
        f.SystemChanged(
            changes=[
                i.KeyChange(key="kind", base="openai", head="anthropic"),
                i.KeyChange(key="model_config", base="config/gpt.yaml", head="config/claude.yaml"),
            ]
        ),
        "this PR changes the suite's system (kind: openai → anthropic; model_config: "
        "config/gpt.yaml → config/claude.yaml): each side runs its own, measured the same way",
    ),
    (
        f.HeadInstrumentUnknown(reason="not every shard job re-judged its answers"),
        "what the head's own instrument would say is unknown: not every shard job re-judged "
        "its answers",
    ),
    (
        f.HeadInstrument(
            verdict="pass",
            delta_points=-0.4,
            base_pass_rate=100.0,
            head_pass_rate=99.6,
            paired=240,
            left_out=["faq-001"],
            judge_calls=4,
            judge_cached=4,
        ),
        "with the head's own cases, checks, judge, prices and policy (the same answers judged "
        "again, no system call) this PR would read: pass (−0.4 points, 100.0% → 99.6% over "
        "240 cases): that is how the gate measures once it is merged; 1 case (faq-001) left "
        "out: this PR changes its input, whose answer was not asked; 4 judge calls, 4 of them "
        "from the cache",
    ),
    (
        f.Accepted(
            label="eval-gate: accept",
            overruled=[
                f.Drop(drop_points=12.5, threshold=3),
                f.Blockers(ids=["safe-001"], new_ids=["safe-001"]),
            ],
        ),
        "accepted by the label `eval-gate: accept` on this PR, which without it fails: the "
        "pass rate dropped 12.5 points, more than the threshold of 3; 1 blocking case does "
        "not pass on head: safe-001 (new)",
    ),
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
        report(tmp_path, "base", [case("a"), case("b"), case("c")]),
        report(tmp_path, "head", [case("a", "fail"), case("b"), case("d")]),
        Policy(),
    )
    assert "reasons" not in Comparison.model_fields
    said = words(c)
    assert said.reasons == ["the pass rate dropped 50.0 points, more than the threshold of 3"]
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
