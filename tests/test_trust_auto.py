"""`repeats: auto`: the stop rule, the rounds of the PR flow on a real repository, and what the
comment says about them."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.noisy_world import commit, gate, gate_yml, make_repo, model_json
from helpers.reports import repeated, write_report

from gate.flow.adaptive import start
from gate.inputs.policy import Policy
from gate.report.io import read_report
from gate.report.plan import Plan


def _reports(tmp_path: Path, base_rows: list, head_rows: list, runs: int = 2) -> tuple:
    return (
        read_report(write_report(tmp_path, "b", base_rows, repeats=runs)),
        read_report(write_report(tmp_path, "h", head_rows, repeats=runs)),
    )


def _ids(n: int) -> set[str]:
    return {f"c{i}" for i in range(n)}


def test_the_rounds_stop_once_the_design_precision_is_reached(tmp_path: Path) -> None:
    """200 cases that passed both runs on both sides: the standard error (floored at one
    flipped run) is already below the design's, the drop test looks once and cannot fail."""
    same = [repeated(f"c{i}", ["pass", "pass"]) for i in range(200)]
    reports = _reports(tmp_path, same, same)
    state = start(Policy(threshold=3), 0.02, *reports)
    assert state.next(*reports) == ([], 0)
    assert state.stop == "precise" and state.estimate is not None
    assert state.estimate.delta_points == 0 and state.estimate.se_points == 0.25
    assert state.estimate.se_points <= state.se_target and len(state.looks) == 1
    assert state.looks[0].info == 1.0  # the last look spends what is left of the level


def test_a_decided_suite_still_waits_for_the_open_blocking_cases(tmp_path: Path) -> None:
    """A flaky blocker decides alone: the threshold rule being settled does not end its runs
    (after two runs a 1/2 tie on head would count as failing)."""
    steady = [repeated(f"c{i}", ["pass", "pass"]) for i in range(200)]
    base = [*steady, repeated("blk", ["pass", "pass"], severity="blocker")]
    head = [*steady, repeated("blk", ["pass", "fail"], severity="blocker")]
    everyone = _ids(200) | {"blk"}
    reports = _reports(tmp_path / "r0", base, head)
    state = start(Policy(threshold=3), 0.02, *reports)
    assert state.next(*reports) == (["blk"], 1) and state.stop == "precise"
    assert state.active == everyone  # the others end by the flow's stop, recorded as such
    for runs in range(3, 7):
        state.rounds = runs - 2
        base[-1] = repeated("blk", ["pass"] * runs, severity="blocker")
        head[-1] = repeated("blk", ["pass", "fail"] + ["pass"] * (runs - 2), severity="blocker")
        ids, size = state.next(*_reports(tmp_path / f"r{runs}", base, head, runs))
        if not ids:
            break
        assert (ids, size) == (["blk"], 1)  # only the blocker runs on
    assert runs > 3 and "blk" not in state.active  # its own rule ended it
    assert state.active == _ids(200)


def test_a_drop_of_the_designs_size_ruled_out_passes_at_once(tmp_path: Path) -> None:
    """No blocking case and a clear no-change: the rounds stop without another call."""
    same = [repeated(f"c{i}", ["pass", "fail"], severity="major") for i in range(30)]
    same += [repeated(f"c{i}", ["pass", "pass"], severity="major") for i in range(30, 600)]
    reports = _reports(tmp_path, same, same)
    state = start(Policy(threshold=3), 0.02, *reports)
    assert state.next(*reports) == ([], 0)
    assert state.stop in ("pass", "precise")


def test_a_deterministic_drop_fails_at_the_first_look(tmp_path: Path) -> None:
    """Temperature 0: 5 of 100 cases always fail on head and always passed on base. Their
    runs agree, so the standard error is the floor of one flipped run and the drop test fails
    the suite after round 0, without a single more call."""
    base = [repeated(f"c{i}", ["pass", "pass"]) for i in range(100)]
    head = [repeated(f"c{i}", ["fail", "fail"] if i < 5 else ["pass", "pass"]) for i in range(100)]
    reports = _reports(tmp_path, base, head)
    state = start(Policy(), 0.02, *reports)
    assert state.next(*reports) == ([], 0) and state.stop == "fail"


def test_the_calls_go_to_the_cases_whose_runs_disagree(tmp_path: Path) -> None:
    """A budget too small for the design's precision: the round's target is the one the
    budget pays for, and only the cases whose runs disagreed get more runs (Neyman)."""
    runs = ["pass", "fail", "pass", "fail", "pass"]
    rows = [repeated(f"c{i}", runs if i < 20 else ["pass"] * 5) for i in range(40)]
    reports = _reports(tmp_path, rows, rows, 5)
    policy = Policy(threshold=3).model_copy(update={"max_calls_per_case": 8})
    state = start(policy, 0.02, *reports)
    state.rounds, state.targets = 3, [None, 40.0, 40.0]  # as after three earlier rounds
    ids, size = state.next(*reports)
    assert state.stop is None and size == 1
    assert set(ids) == _ids(20)  # the flaky half; the steady cases are done
    target = state.targets[-1]
    assert target is not None and target < 40  # the budget's, not the precision's (1e6)


def test_the_call_budget_stops_the_rounds(tmp_path: Path) -> None:
    base = [repeated(f"c{i}", ["pass", "fail"]) for i in range(40)]
    head = [repeated(f"c{i}", ["fail", "pass"]) for i in range(40)]
    reports = _reports(tmp_path, base, head)
    spent = Policy(threshold=0).model_copy(update={"max_calls_per_case": 2})
    broke = start(spent, 0.02, *reports)
    assert broke.next(*reports) == ([], 0) and broke.stop == "budget"
    # room for 30 of the 40 open cases: a last round of 30, chosen by id hash, not by outcome
    some = Policy(threshold=0).model_copy(update={"max_calls_per_case": 2.75})
    state = start(some, 0.02, *reports)
    ids, size = state.next(*reports)
    assert (len(ids), size, state.stop) == (30, 1, None)
    left_out = _ids(40) - set(ids)
    state.rounds = 1
    assert state.next(*reports) == ([], 0) and state.stop == "budget"
    assert left_out <= state.active  # ended by the flow's stop, not by their own rule


def test_the_cost_budget_stops_the_rounds_and_cached_answers_are_free(tmp_path: Path) -> None:
    """max_cost_usd: a round's calls are priced at the cost per call so far; answers the
    response cache gave cost nothing and use up none of the call budget either."""

    def priced(i: int, cached: bool) -> dict:
        row = repeated(f"c{i}", ["pass", "fail"])
        for attempt in row["attempts"]:
            attempt.update(cost_usd=0.0 if cached else 0.01, cached=cached)
        row["cost_usd"] = 0.0 if cached else 0.02
        return row

    paid = _reports(
        tmp_path / "paid",
        [priced(i, False) for i in range(40)],
        [priced(i, False) for i in range(40)],
    )
    cheap = Policy(threshold=0).model_copy(update={"max_cost_usd": 2.0})
    state = start(cheap, 0.02, *paid)  # 1.60 spent, 0.40 left: 40 calls, 20 cases × 2 sides
    ids, size = state.next(*paid)
    assert (len(ids), size) == (20, 1)
    cached = _reports(
        tmp_path / "cached",
        [priced(i, True) for i in range(40)],
        [priced(i, False) for i in range(40)],
    )
    calls = Policy(threshold=0).model_copy(update={"max_calls_per_case": 2.5})
    state = start(calls, 0.02, *cached)  # base from the cache: 80 paid calls of 200
    ids, size = state.next(*cached)
    assert (len(ids), size) == (40, 1)
    uncached = start(calls, 0.02, *paid)  # 160 paid: room for 20 cases
    assert len(uncached.next(*paid)[0]) == 20


def test_auto_in_the_pr_flow(tmp_path: Path) -> None:
    """A no-op PR (fresh noise) on a noisy model: rounds run, both reports record the plan and
    how each case ended, the comment says how many calls each side made and why it stopped,
    and `gate compare` of the two reports reaches the same verdict."""
    ids = [f"c{i:02d}" for i in range(80)]
    p = {i: (0.5 if k < 16 else 0.97) for k, i in enumerate(ids)}
    repo = make_repo(tmp_path / "repo", ids, p, repeats="auto", seed=1, threshold=3)
    (repo / "model.json").write_text(model_json(p, seed=2))
    commit(repo, "fresh noise")
    done = gate("check", "--base", "HEAD~1", cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    assert "round 1: 80 cases, 1 more run each on both sides; delta " in done.stderr
    lines = (repo / ".eval-gate/reports/noisy/head.jsonl").read_text().splitlines()
    meta, rows = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    auto = meta["auto"]
    assert auto["rounds"] >= 1 and auto["stop"] in ("pass", "precise", "settled", "budget")
    assert auto["calls"] == sum(r["repeats"] for r in rows) <= 16 * 80
    assert auto["level"] == 0.02 and len(auto["looks"]) >= 1 and auto["paid_calls"] > 0
    assert {r["auto_end"] for r in rows} <= {"rule", "flow"}
    assert min(r["repeats"] for r in rows) >= 3  # round 0 and the uniform round
    assert f"head {meta['auto']['calls']:,} (" in done.stdout and "stopped: " in done.stdout
    again = gate(
        "compare", ".eval-gate/reports/noisy/base.jsonl",
        ".eval-gate/reports/noisy/head.jsonl", "--format", "json",
        "-c", "gate.yml", cwd=repo,
    )  # fmt: skip
    comparison = json.loads(again.stdout)
    assert again.returncode == done.returncode
    difference = comparison["head_pass_rate"] - comparison["base_pass_rate"]
    assert abs(comparison["delta_points"] - difference) < 1e-6


def test_gate_run_append_adds_runs_and_keeps_held_out_cases_redacted(tmp_path: Path) -> None:
    ids = [f"c{i}" for i in range(6)]
    repo = make_repo(tmp_path / "repo", ids, {i: 0.5 for i in ids})
    rows = [json.loads(line) for line in (repo / "cases.jsonl").read_text().splitlines()]
    rows[0]["heldout"] = True
    (repo / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert gate("run", "--repeats", "2", "--label", "r", "-q", cwd=repo).returncode == 0
    (repo / "more.txt").write_text("c0\nc1\n")
    done = gate(
        "run", "--append", "--cases-from", "more.txt", "--repeats", "3", "--label", "r", "-q",
        cwd=repo,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = (repo / "reports/r.jsonl").read_text().splitlines()
    cases = {r["id"]: r for r in map(json.loads, lines[1:])}
    assert [cases[i]["repeats"] for i in ids] == [5, 5, 2, 2, 2, 2]
    assert [a["repeat"] for a in cases["c1"]["attempts"]] == [0, 1, 2, 3, 4]
    assert len({a["output"] for a in cases["c1"]["attempts"]}) == 2  # each run its own draw
    assert all(a["output"] is None for a in cases["c0"]["attempts"])  # held out: redacted
    assert cases["c0"]["output"] is None and cases["c0"]["checks"] == []
    summary = json.loads((repo / "reports/r.summary.json").read_text())
    assert summary["n"] == 6
    bad = gate("run", "--append", "--label", "r", cwd=repo)
    assert bad.returncode == 2 and "--cases-from" in bad.stderr


def test_auto_with_shards(tmp_path: Path) -> None:
    """Each shard job runs its own rounds on its cases; the finish job merges and judges."""
    import io
    import os
    from dataclasses import replace

    from helpers.servers.git_http import git

    from gate.flow.git import GitRepo
    from gate.flow.plan import plan_flow
    from gate.flow.request import FlowIO, FlowRequest, Revisions
    from gate.flow.sharded import run_finish_flow, run_shard_flow
    from gate.inputs.config import load_config
    from gate.inputs.shard import Shard

    ids = [f"c{i:02d}" for i in range(60)]
    p = {i: (0.5 if k < 12 else 0.97) for k, i in enumerate(ids)}
    repo = make_repo(tmp_path / "repo", ids, p, repeats="auto", seed=1)
    (repo / "model.json").write_text(model_json(p, seed=2))
    commit(repo, "fresh noise")
    environ = {**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")}
    git_repo = GitRepo(repo, environ=environ)
    try:
        log = io.StringIO()
        request = FlowRequest(
            revisions=Revisions(
                git_repo, git(repo, "rev-parse", "HEAD~1"), git(repo, "rev-parse", "HEAD")
            ),
            config=load_config(repo / "gate.yml"),
            io=FlowIO(tmp_path / "shards", environ=environ, stream=log),
        )
        for index in (1, 2):
            ran = run_shard_flow(plan_flow(request), Shard(index, 2))
            assert [o.verdict for o in ran] == ["partial"]
        assert log.getvalue().count("repeats auto: ") == 2  # each shard decides its own rounds
        assert "round 1: " in log.getvalue()
        finish = replace(request, io=replace(request.io, out_dir=tmp_path / "final"))
        (outcome,) = run_finish_flow(plan_flow(finish), tmp_path / "shards")
    finally:
        git_repo.close()
    c = outcome.comparison
    assert c.verdict in ("pass", "fail") and c.paired == 60
    assert c.head_meta is not None and c.head_meta.auto is not None
    assert "repeats auto: base" in outcome.markdown


def test_the_budget_is_over_the_paired_cases(tmp_path: Path) -> None:
    """Cases the head removed ran on base in round 0 only; they must not use up the budget of
    the cases the rounds extend (max_calls_per_case per paired case, counted over them)."""
    base = [repeated(f"c{i}", ["pass", "fail"]) for i in range(100)]
    head = [repeated(f"c{i}", ["fail", "pass"]) for i in range(50)]  # 50 removed
    reports = _reports(tmp_path, base, head)
    state = start(Policy(threshold=0), 0.02, *reports)
    assert state.budget.calls == 2 * 16 * 50
    ids, size = state.next(*reports)
    assert (len(ids), size, state.stop) == (50, 1, None)  # the uniform round, not "budget"


def test_auto_records_the_plan_in_the_held_out_detail_reports_too(tmp_path: Path) -> None:
    """The full reports of --heldout-detail get the rounds' runs; they must also get the plan
    and how each case ended, or `gate compare` of them reads the runs as fixed repeats (the
    plain, biased fractions) and can reach another verdict than the comment."""
    ids = [f"c{i:02d}" for i in range(30)]
    p = {i: (0.5 if k < 10 else 0.97) for k, i in enumerate(ids)}
    repo = make_repo(tmp_path / "repo", ids, p, repeats="auto", seed=1, threshold=3)
    (repo / "model.json").write_text(model_json(p, seed=2))
    commit(repo, "fresh noise")
    private = tmp_path / "private"
    done = gate("check", "--base", "HEAD~1", "--heldout-detail", str(private), cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    assert "round 1: " in done.stderr
    for label in ("base", "head"):
        public = (repo / f".eval-gate/reports/noisy/{label}.jsonl").read_text().splitlines()
        detail = (private / f"noisy/{label}.jsonl").read_text().splitlines()
        assert json.loads(detail[0])["auto"] == json.loads(public[0])["auto"]
        ends = [json.loads(line)["auto_end"] for line in detail[1:]]
        assert ends == [json.loads(line)["auto_end"] for line in public[1:]]


def test_a_flaky_blocker_rarely_blocks_a_no_op_pr_under_auto() -> None:
    """Seeded simulation of a blocking case's runs once the threshold rule is settled: it runs
    on by its own rule, so at p = .9 on both sides it fails on head (a tie or worse) in about
    0.1% of no-op PRs, where two runs would fail it in 19% and three in 2.8%."""
    import random

    from gate.report.plan import continues

    plan, rng, trials, blocked = Plan(), random.Random(20261201), 20_000, 0
    for _ in range(trials):
        base = [rng.random() < 0.9 for _ in range(plan.first)]
        head = [rng.random() < 0.9 for _ in range(plan.first)]
        round_index = 0
        while continues(plan, sum(base), sum(head), len(head), round_index):
            size = min(plan.size(round_index + 1), plan.max_repeats - len(head))
            base += [rng.random() < 0.9 for _ in range(size)]
            head += [rng.random() < 0.9 for _ in range(size)]
            round_index += 1
        blocked += sum(head) * 2 <= len(head)
    assert blocked / trials < 0.005


def test_a_deterministic_regression_fails_quickly_under_auto(tmp_path: Path) -> None:
    """A temperature-0 system: 5 of 100 cases that always passed on base always fail on head.
    `gate check` with `repeats: auto` fails it after round 0 (two runs per case and side): the
    runs of every case agree, so the drop test has all the evidence it needs."""
    ids = [f"c{i:02d}" for i in range(100)]
    repo = make_repo(tmp_path / "repo", ids, dict.fromkeys(ids, 1.0), repeats="auto")
    (repo / "model.json").write_text(
        model_json({**dict.fromkeys(ids, 1.0), **dict.fromkeys(ids[:5], 0.0)})
    )
    commit(repo, "break five cases")
    done = gate("check", "--base", "HEAD~1", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert "noisy: fail: pass rate 100.0% -> 95.0% (−5.0 points)" in done.stderr
    assert "and the drop is significant against no change" in done.stdout  # the comment
    meta = json.loads((repo / ".eval-gate/reports/noisy/head.jsonl").read_text().splitlines()[0])
    assert meta["auto"]["stop"] == "fail" and meta["auto"]["rounds"] == 0
    assert meta["auto"]["calls"] == 2 * 100  # two calls per case on this side


def test_the_rounds_budget_and_error_rate_are_the_bases(tmp_path: Path) -> None:
    """A PR that raises its own budget and false-block rate (and makes inconclusive pass)
    is measured by the base's: the rounds' level is the base's 2% and their paid calls stay
    within the base's 3 per case and side; the comment lists the PR's policy changes as
    taking effect after merge."""
    ids = [f"c{i:02d}" for i in range(40)]
    p = {i: (0.5 if k < 20 else 0.97) for k, i in enumerate(ids)}
    repo = make_repo(
        tmp_path / "repo", ids, p, repeats="auto", max_calls_per_case=3, inconclusive="block"
    )
    (repo / "gate.yml").write_text(
        gate_yml(repeats="auto", max_calls_per_case=50, false_block_rate=0.5, inconclusive="pass")
    )
    (repo / "model.json").write_text(model_json(p, seed=2))
    commit(repo, "a PR that loosens its own gate")
    done = gate("check", "--base", "HEAD~1", cwd=repo)
    assert done.returncode in (0, 1), done.stderr
    auto = json.loads((repo / ".eval-gate/reports/noisy/head.jsonl").read_text().splitlines()[0])[
        "auto"
    ]
    assert auto["level"] == 0.02 and auto["paid_calls"] <= 2 * 3 * 40
    shown = done.stdout.replace("\\", "")  # the comment's Markdown escapes
    assert "false_block_rate: 0.02 → 0.5; inconclusive: block → pass" in shown
    assert "max_calls_per_case: 3 → 50" in shown and "the base's policy judges it" in shown
    if "verdict: inconclusive" in done.stderr:
        assert done.returncode == 1  # the base's inconclusive: block
