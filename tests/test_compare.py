"""Comparison of a base and a head report: pairing, lists, deltas, verdict."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.reports import STABLE_KEYS, case, repeated, report, write_report

from gate.compare.models import EXIT_CODES, Comparison, skipped_comparison
from gate.compare.pairing import compare
from gate.compare.stats import SIGN_FLIP, mcnemar_exact
from gate.compare.totals import usage
from gate.errors import InputError
from gate.inputs.config import GateConfig
from gate.inputs.policy import Policy, parse_severities, policy_value
from gate.render.reasons import worded
from gate.report.io import read_report
from gate.report.summary import summarise


def run(tmp_path: Path, base_rows, head_rows, policy: Policy | None = None, **kw) -> Comparison:
    return worded(
        compare(
            report(tmp_path, "base", base_rows, **kw),
            report(tmp_path, "head", head_rows, **kw),
            policy or Policy(),
        )
    )


def passing(n: int, prefix: str = "c", **kw) -> list[dict]:
    return [case(f"{prefix}-{i:04d}", **kw) for i in range(n)]


def test_pairs_by_id_over_the_heads_suite(tmp_path: Path) -> None:
    base = [case("a"), case("b", "fail"), case("gone")]
    head = [case("b"), case("a", "fail"), case("new", "fail")]
    c = run(tmp_path, base, head)
    assert c.paired == 2
    assert c.added == ["new"] and c.removed == ["gone"]
    assert c.regressions == ["a"] and c.fixes == ["b"]
    # over the two paired cases: base 1/2, head 1/2; the failing added case is not in the delta
    assert (c.base_pass_rate, c.head_pass_rate, c.delta_points) == (50.0, 50.0, 0.0)
    assert c.head.n == 3 and c.head.pass_rate == pytest.approx(100 / 3)
    assert any("added" in note and "removed" in note for note in c.notes)


def test_every_non_passing_head_case_is_listed_somewhere(tmp_path: Path) -> None:
    base = [
        case("p2f"),
        case("p2e"),
        case("p2r"),
        case("f2p", "fail"),
        case("f2f", "fail"),
        case("e2f", "error"),
        case("r2f", "needs_review"),
        case("f2e", "fail"),
        case("p2p"),
    ]
    head = [
        case("p2f", "fail"),
        case("p2e", "error"),
        case("p2r", "needs_review"),
        case("f2p"),
        case("f2f", "fail"),
        case("e2f", "fail"),
        case("r2f", "fail"),
        case("f2e", "error"),
        case("p2p"),
        case("add", "fail"),
    ]
    c = run(tmp_path, base, head, policy=Policy(max_error_rate=100))
    assert c.regressions == ["p2f"]
    assert c.new_errors == ["p2e"]
    assert c.fixes == ["f2p"]
    assert c.still_failing == ["f2f", "e2f", "r2f"]
    assert c.errors == ["p2e", "f2e"] and c.base_errors == ["e2f"]
    assert c.needs_review == ["p2r"]
    assert c.added == ["add"]
    listed = {
        i
        for name in (
            "regressions",
            "new_errors",
            "still_failing",
            "errors",
            "needs_review",
            "added",
        )
        for i in getattr(c, name)
    }
    not_passing = {row["id"] for row in head if row["status"] != "pass"}
    assert not_passing <= listed
    assert set(c.cases) >= listed | set(c.fixes)
    assert "p2p" not in c.cases  # unchanged passes are counted, not carried


def test_delta_and_threshold_at_the_edge(tmp_path: Path) -> None:
    base = passing(300)
    nine = [case(r["id"], "fail") if i < 9 else r for i, r in enumerate(base)]
    c = run(tmp_path, base, nine)
    assert c.delta_points == -3.0  # exactly the threshold: allowed
    assert c.verdict == "pass"
    ten = [case(r["id"], "fail") if i < 10 else r for i, r in enumerate(base)]
    c = run(tmp_path, base, ten)
    assert c.delta_points == pytest.approx(-10 / 3)
    assert c.verdict == "fail"
    assert "dropped 3.3 points" in c.reasons[0]
    assert len(c.regressions) == 10 and EXIT_CODES[c.verdict] == 1


def test_threshold_override_and_zero_threshold(tmp_path: Path) -> None:
    base = passing(100)
    head = [case(r["id"], "fail") if i < 5 else r for i, r in enumerate(base)]
    assert run(tmp_path, base, head, Policy(threshold=10)).verdict == "pass"
    one = [case(r["id"], "fail") if i < 1 else r for i, r in enumerate(base)]
    assert run(tmp_path, base, one, Policy(threshold=0)).verdict == "fail"


def test_blocker_failures_fail_and_say_whether_they_are_new(tmp_path: Path) -> None:
    base = [case("b1", severity="blocker"), case("b2", "fail", severity="blocker"), *passing(98)]
    head = [case("b1", "fail", severity="blocker"), case("b2", "fail", severity="blocker")]
    head += [case("b3", "needs_review", severity="blocker"), *passing(98)]
    c = run(tmp_path, base, head)
    assert c.blocker_failures == ["b1", "b2", "b3"]
    assert c.new_blocker_failures == ["b1", "b3"]
    assert c.verdict == "fail"
    assert "b2 (already failing on base)" in c.reasons[-1] and "b1 (new)" in c.reasons[-1]


def test_a_pre_existing_blocker_failure_alone_still_fails(tmp_path: Path) -> None:
    base = [case("b", "fail", severity="blocker"), *passing(10)]
    c = run(tmp_path, base, list(base))
    assert c.delta_points == 0.0
    assert c.verdict == "fail" and c.new_blocker_failures == []


def test_block_severities_come_from_the_policy(tmp_path: Path) -> None:
    base = [case("m", severity="major"), *passing(50)]
    head = [case("m", "fail", severity="major"), *passing(50)]
    assert run(tmp_path, base, head).verdict == "pass"
    c = run(tmp_path, base, head, Policy(block_severities=["blocker", "major"]))
    assert c.verdict == "fail" and c.blocker_failures == ["m"]


def test_error_rate_above_the_limit_is_an_error_verdict(tmp_path: Path) -> None:
    base = passing(100)
    head = [case(r["id"], "error") if i < 6 else r for i, r in enumerate(base)]
    c = run(tmp_path, base, head)
    assert c.verdict == "error" and EXIT_CODES["error"] == 3
    assert c.reasons[0].startswith("6 of 100 head cases ended in an error (6.0%")
    # the threshold breach is still reported, after the errors
    assert any(r.startswith("also: the pass rate dropped") for r in c.reasons)
    five = [case(r["id"], "error") if i < 5 else r for i, r in enumerate(base)]
    assert run(tmp_path, base, five, Policy(threshold=10)).verdict == "pass"
    assert run(tmp_path, base, head, Policy(max_error_rate=10, threshold=10)).verdict == "pass"


def test_base_errors_count_too(tmp_path: Path) -> None:
    head = passing(20)
    base = [case(r["id"], "error") if i < 2 else r for i, r in enumerate(head)]
    c = run(tmp_path, base, head)
    assert c.verdict == "error"
    assert "base cases ended in an error" in c.reasons[0]


def test_any_error_on_a_blocking_case_is_an_error_verdict(tmp_path: Path) -> None:
    base = [case("blk", severity="blocker"), *passing(99)]
    head = [case("blk", "error", severity="blocker"), *passing(99)]
    c = run(tmp_path, base, head)
    assert c.verdict == "error"
    assert c.reasons == ["blocking case blk ended in an error on head"]
    assert c.new_errors == ["blk"] and c.blocker_failures == []


def test_fixed_repeats_fail_past_the_threshold_as_the_spec_says(tmp_path: Path) -> None:
    """One run per case, the default policy: delta < −threshold fails, however little evidence
    (a deterministic system at temperature 0 that loses 2 of 40 cases is a real drop); the
    drop test is computed and shown but does not decide."""
    base = passing(40)
    head = [case(r["id"], "fail") if i < 2 else r for i, r in enumerate(base)]  # -5 pts
    c = run(tmp_path, base, head)
    assert c.delta_points == -5.0 and c.verdict == "fail" and c.exit_code == 1
    assert c.drop_test is not None and not c.drop_test.decides
    assert c.drop_test.method == "mcnemar" and c.drop_test.p_value == pytest.approx(0.25)
    assert c.reasons[0] == "the pass rate dropped 5.0 points, more than the threshold of 3"


def test_require_significance_asks_the_drop_test(tmp_path: Path) -> None:
    """Fixed repeats with `require_significance`: the drop test decides at the suite's share
    of false_block_rate (the whole 2% for one suite); a drop past the threshold it does not
    reject is inconclusive, which blocks only with `inconclusive: block`."""
    base = passing(40)
    head = [case(r["id"], "fail") if i < 2 else r for i, r in enumerate(base)]  # -5 pts
    policy = Policy(require_significance=True)
    c = run(tmp_path, base, head, policy)
    assert c.drop_test is not None and c.drop_test.decides
    assert c.verdict == "inconclusive" and c.exit_code == 0
    assert c.reasons[0].startswith("inconclusive: the pass rate dropped 5.0 points")
    assert "not significant against no change (p = 0.25" in c.reasons[0]
    assert "with one run per case the gate cannot tell these changes from noise" in c.reasons[0]
    blocking = run(tmp_path, base, head, Policy(require_significance=True, inconclusive="block"))
    assert blocking.verdict == "inconclusive" and blocking.exit_code == 1

    many = [case(r["id"], "fail") if i < 10 else r for i, r in enumerate(base)]
    c = run(tmp_path, base, many, policy)
    assert c.drop_test is not None and c.drop_test.p_value == pytest.approx(0.5**10)
    assert c.verdict == "fail" and c.exit_code == 1
    assert c.reasons[0].startswith(
        "the pass rate dropped 25.0 points, more than the threshold of 3, and the drop is "
        "significant against no change (p = 0.000977, one-sided; the bar was 0.02"
    )
    strict = Policy(require_significance=True, false_block_rate=0.0005)
    assert run(tmp_path, base, many, strict).verdict == "inconclusive"


def test_statistics_fields_are_filled(tmp_path: Path) -> None:
    base = passing(50)
    head = [case(r["id"], "fail") if i < 6 else r for i, r in enumerate(base)]
    head[10] = case(head[10]["id"])
    c = run(tmp_path, base, head)
    assert c.statistics is not None
    s = c.statistics
    assert (s.counts.regressed, s.counts.fixed, s.counts.n) == (6, 0, 50)
    assert c.ci_low_points is not None and c.ci_high_points is not None
    assert c.ci_low_points < c.delta_points < c.ci_high_points < 0
    assert c.p_value == pytest.approx(mcnemar_exact(6, 0))


def test_repeats_give_flaky_lists_and_a_resampling_test(tmp_path: Path) -> None:
    base = [repeated(f"r{i}", ["pass", "pass", "pass"]) for i in range(12)]
    head = [repeated(f"r{i}", ["pass", "pass", "pass"]) for i in range(12)]
    head[0] = repeated("r0", ["pass", "fail", "pass"])  # flaky, still passes
    head[1] = repeated("r1", ["fail", "fail", "pass"])  # flaky regression
    base[2] = repeated("r2", ["fail", "pass", "fail"])  # flaky on base, fixed on head
    c = run(tmp_path, base, head, repeats=3)
    assert c.flaky == ["r0", "r1", "r2"]
    assert c.regressions == ["r1"] and c.fixes == ["r2"]
    r0 = c.cases["r0"]
    assert r0.head is not None and r0.head.fraction == pytest.approx(2 / 3, abs=1e-4)
    assert r0.base is not None and r0.base.fraction == 1.0 and r0.head.repeats == 3
    s = c.statistics
    assert s is not None and s.resampling is not None and s.decision_test == SIGN_FLIP
    # fraction differences: r0 -1/3, r1 -2/3, r2 +2/3 -> mean -1/36 per case
    assert s.resampling.mean_delta_points == pytest.approx(100 * (-1 / 3) / 12, abs=1e-3)
    assert s.resampling.nonzero == 3 and s.resampling.exact


def test_usage_counts_every_attempt_and_reports_latency_percentiles(tmp_path: Path) -> None:
    base = [
        case(f"u{i}", latency_ms=100.0 * (i + 1), tokens={"prompt": 10, "completion": 5})
        for i in range(10)
    ]
    head = [
        case(
            f"u{i}",
            latency_ms=200.0 * (i + 1),
            tokens={"prompt": 12, "completion": 8},
            cost_usd=0.01,
        )
        for i in range(10)
    ]
    c = run(tmp_path, base, head)
    assert c.base_usage.tokens_total == 150 and c.head_usage.tokens_total == 200
    assert c.base_usage.cost_usd is None and c.head_usage.cost_usd == pytest.approx(0.1)
    assert c.base_usage.latency_p50_ms == 550.0 and c.head_usage.latency_p50_ms == 1100.0
    assert c.base_usage.latency_p95_ms == pytest.approx(955.0)

    rep = [repeated(f"u{i}", ["pass", "pass"]) for i in range(3)]
    c = run(tmp_path, rep, rep, repeats=2)
    assert c.base_usage.calls == 6 and c.base_usage.tokens_total == 6 * 15


def test_folded_attempts_count_the_same_as_the_attempts(tmp_path: Path) -> None:
    """`gate compare` reads attempts folded into small records (memory with repeats)."""
    rows = [repeated(f"u{i}", ["pass", "fail", "pass"][: 1 + i % 3]) for i in range(9)]
    rows[4]["attempts"][1]["cost_usd"] = 0.25
    rows[5]["attempts"][0]["cached"] = True
    path = write_report(tmp_path, "r", rows, repeats=3)
    full, folded = read_report(path), read_report(path, fold_attempts=True)
    assert any(r.attempts for r in full.results)
    assert not any(r.attempts for r in folded.results)
    assert usage(folded.results) == usage(full.results)
    assert usage(full.results).calls == sum(1 + i % 3 for i in range(9))
    assert summarise(folded.meta, folded.results) == summarise(full.meta, full.results)
    assert "folded_calls" not in folded.results[0].model_dump_json()  # never written out


def test_per_task_deltas_worst_first(tmp_path: Path) -> None:
    base = passing(10, "faq", task="faq") + passing(10, "code", task="coding")
    broken = {"code-0000", "code-0001", "code-0002", "code-0003"}
    head = [case(r["id"], "fail", task="coding") if r["id"] in broken else r for r in base]
    head.append(case("extra", task="faq"))
    c = run(tmp_path, base, head)
    assert [t.task for t in c.tasks] == ["coding", "faq"]
    coding, faq = c.tasks
    assert (coding.n, coding.base_pass_rate, coding.head_pass_rate) == (10, 100.0, 60.0)
    assert (coding.delta_points, coding.regressions, coding.fixes) == (-40.0, 4, 0)
    assert (faq.delta_points, faq.added) == (0.0, 1)


def test_held_out_cases_keep_only_their_outcome(tmp_path: Path) -> None:
    secret = "THE HELD-OUT ANSWER 42"
    base = [case("h", heldout=True, output=secret), *passing(5)]
    head = [
        case(
            "h",
            "fail",
            heldout=True,
            output=secret,
            checks=[{"kind": "equals", "name": "equals", "passed": False, "detail": secret}],
            error=secret,
        ),
        *passing(5),
    ]
    c = run(tmp_path, base, head)
    held = c.cases["h"]
    assert held.heldout
    for side in (held.base, held.head):
        assert side is not None
        assert side.output is None and side.failed_checks == [] and side.error is None
    assert held.file == "" and held.line == 0
    assert c.regressions == ["h"]
    assert secret not in c.model_dump_json()


def test_outputs_are_kept_as_bounded_excerpts(tmp_path: Path) -> None:
    big = "y" * 50_000
    base = [case("a")]
    head = [case("a", "fail", output=big)]
    c = run(tmp_path, base, head)
    head = c.cases["a"].head
    assert head is not None and head.output_chars == 50_000
    assert len(head.output or "") == 2000


def test_no_paired_cases_compared_nothing_so_it_is_an_error(tmp_path: Path) -> None:
    c = run(tmp_path, [case("old")], [case("new")])
    assert c.paired == 0 and c.delta_points is None and c.p_value is None
    assert c.verdict == "error" and c.exit_code == 3
    assert "no case ran on both sides" in c.reasons[0] and "nothing was compared" in c.reasons[0]


def test_a_new_suite_is_judged_on_the_head_alone(tmp_path: Path) -> None:
    head = report(tmp_path, "head", [case("a"), case("b", "fail")])
    c = worded(compare(None, head, Policy()))
    assert c.verdict == "pass" and c.base_meta is None and c.added == ["a", "b"]
    assert "this suite is new" in c.reasons[0] and not c.notes
    blocked = report(tmp_path, "head", [case("a"), case("b", "fail", severity="blocker")])
    c = worded(compare(None, blocked, Policy()))
    assert c.verdict == "fail" and c.blocker_failures == ["b"]


def test_empty_head_report_is_an_error(tmp_path: Path) -> None:
    c = run(tmp_path, [case("a")], [])
    assert c.verdict == "error" and "no case results" in c.reasons[0]


def test_different_suites_are_noted(tmp_path: Path) -> None:
    c = worded(
        compare(
            report(tmp_path, "base", [case("a")], suite="one"),
            report(tmp_path, "head", [case("a")], suite="two"),
            Policy(),
        )
    )
    assert c.suite == "two"
    assert any("suite 'one'" in n for n in c.notes)


def test_skipped_comparison() -> None:
    c = skipped_comparison("no watched file changed", suite="support")
    assert c.verdict == "skipped" and c.exit_code == 0
    assert worded(c).reasons == ["no watched file changed"] and c.base_pass_rate is None


def test_policy_from_config_with_overrides() -> None:
    config = GateConfig.model_validate(
        {
            "cases": "cases.jsonl",
            "system": {"kind": "python", "target": "app:answer"},
            "threshold": 2.5,
            "block_severities": ["blocker", "major"],
            "require_significance": True,
            "alpha": 0.01,
            "max_error_rate": 1,
        }
    )
    policy = Policy.from_config(config)
    assert policy == Policy(
        threshold=2.5,
        block_severities=["blocker", "major"],
        require_significance=True,
        alpha=0.01,
        max_error_rate=1,
    )
    override = Policy.from_config(config, threshold=7, block_severities=["minor"])
    assert (override.threshold, override.block_severities) == (7, ["minor"])
    assert override.alpha == 0.01


def test_overrides_are_checked_by_the_policy_keys_own_rules() -> None:
    assert Policy.from_config() == Policy()
    for text in ("blocker,major", "blocker major", "[blocker, major]", " blocker , major "):
        assert parse_severities(text, flag="--block-severities") == ["blocker", "major"]
    assert parse_severities("[]", flag="--block-severities") == []
    with pytest.raises(InputError, match="key `--block-severities`: unknown severity 'urgent'"):
        parse_severities("blocker,urgent", flag="--block-severities")
    assert policy_value("threshold", 0, flag="--threshold") == 0.0
    for bad in (-0.5, float("nan")):
        with pytest.raises(InputError, match="key `--threshold`: must be 0 or more"):
            policy_value("threshold", bad, flag="--threshold")


def test_json_has_the_stable_keys(tmp_path: Path) -> None:
    c = run(tmp_path, [case("a"), case("b")], [case("a", "fail"), case("b")])
    data = c.model_dump(mode="json")
    for key in STABLE_KEYS:
        assert key in data
    assert data["regressions"] == ["a"] and data["verdict"] == "fail"


def test_a_drop_just_over_the_threshold_reads_as_more_than_it(tmp_path: Path) -> None:
    base = passing(33)
    head = [case("c-0000", "fail"), *passing(33)[1:]]
    c = run(tmp_path, base, head)
    assert c.verdict == "fail" and c.delta_points is not None and -3.1 < c.delta_points < -3
    assert c.reasons[0] == "the pass rate dropped 3.03 points, more than the threshold of 3"
    tested = run(tmp_path, base, head, Policy(require_significance=True))
    assert tested.verdict == "inconclusive"
    assert tested.reasons[0].startswith("inconclusive: the pass rate dropped 3.03 points")
