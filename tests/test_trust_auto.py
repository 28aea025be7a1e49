"""`repeats: auto`: the stop rule, the rounds of the PR flow on a real repository, and what the
comment says about them."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.noisy_world import commit, gate, make_repo, model_json
from helpers.reports import repeated, write_report

from gate.flow.adaptive import Round
from gate.inputs.policy import Policy
from gate.report.io import read_report
from gate.report.plan import Plan


def _reports(tmp_path: Path, base_rows: list, head_rows: list) -> tuple:
    return (
        read_report(write_report(tmp_path, "b", base_rows, repeats=2)),
        read_report(write_report(tmp_path, "h", head_rows, repeats=2)),
    )


def test_the_rounds_stop_as_soon_as_the_interval_is_clear(tmp_path: Path) -> None:
    same = [repeated(f"c{i}", ["pass", "pass"]) for i in range(200)]
    state = Round(Plan(), limit=10_000, active={f"c{i}" for i in range(200)})
    assert state.next(*_reports(tmp_path, same, same), Policy(threshold=3)) == ([], 0)
    assert state.stop == "clear" and state.interval == (0.0, 0.0, 0.0)


def test_a_clear_stop_still_waits_for_the_open_blocking_cases(tmp_path: Path) -> None:
    """A flaky blocker decides alone: the threshold rule being settled does not end its runs
    (after two runs a 1/2 tie on head would count as failing)."""
    steady = [repeated(f"c{i}", ["pass", "pass"]) for i in range(200)]
    base = [*steady, repeated("blk", ["pass", "pass"], severity="blocker")]
    head = [*steady, repeated("blk", ["pass", "fail"], severity="blocker")]
    everyone = {f"c{i}" for i in range(200)} | {"blk"}
    state = Round(Plan(), limit=10_000, active=set(everyone))
    ids, size = state.next(*_reports(tmp_path / "r0", base, head), Policy(threshold=3))
    assert (ids, size, state.stop) == (["blk"], 1, None)  # only the blocker runs on
    assert state.active == everyone  # the others end by the flow's stop, recorded as such
    state.rounds = 1
    base[-1] = repeated("blk", ["pass", "pass", "pass"], severity="blocker")
    head[-1] = repeated("blk", ["pass", "fail", "pass"], severity="blocker")
    ids, size = state.next(*_reports(tmp_path / "r1", base, head), Policy(threshold=3))
    assert (ids, size, state.stop) == (["blk"], Plan().step, None)  # 1 of 6 failed: still open
    state.rounds = 2
    base[-1] = repeated("blk", ["pass"] * 5, severity="blocker")
    head[-1] = repeated("blk", ["pass", "fail", "pass", "pass", "pass"], severity="blocker")
    assert state.next(*_reports(tmp_path / "r2", base, head), Policy(threshold=3)) == ([], 0)
    assert state.stop == "clear" and "blk" not in state.active  # its own rule ended it


def test_a_clear_stop_without_blocking_cases_stops_at_once(tmp_path: Path) -> None:
    same = [repeated(f"c{i}", ["pass", "fail"], severity="major") for i in range(200)]
    state = Round(Plan(), limit=10_000, active={f"c{i}" for i in range(200)})
    assert state.next(*_reports(tmp_path, same, same), Policy(threshold=3)) == ([], 0)
    assert state.stop == "clear"


def test_uncertain_cases_get_more_runs_on_both_sides(tmp_path: Path) -> None:
    base = [repeated(f"c{i}", ["pass", "fail"] if i < 20 else ["pass", "pass"]) for i in range(40)]
    head = [repeated(f"c{i}", ["fail", "fail"] if i < 20 else ["pass", "pass"]) for i in range(40)]
    plan = Plan(uniform=0)
    state = Round(plan, limit=10_000, active={f"c{i}" for i in range(40)})
    ids, size = state.next(*_reports(tmp_path, base, head), Policy(threshold=20))
    assert state.stop is None and size == plan.step
    assert ids == sorted(f"c{i}" for i in range(20))  # mixed runs; the steady cases are done
    assert state.interval is not None and state.interval[1] < -20 < state.interval[2]


def test_the_call_budget_stops_the_rounds(tmp_path: Path) -> None:
    base = [repeated(f"c{i}", ["pass", "fail"]) for i in range(40)]
    head = [repeated(f"c{i}", ["fail", "pass"]) for i in range(40)]
    reports = _reports(tmp_path, base, head)
    broke = Round(Plan(uniform=0), limit=80 + 1, active={f"c{i}" for i in range(40)})
    assert broke.next(*reports, Policy(threshold=0)) == ([], 0) and broke.stop == "budget"
    # room for 39 of the 40 open cases: a last round of 39, chosen by id hash, not by outcome
    state = Round(Plan(uniform=0), limit=80 + 79, active={f"c{i}" for i in range(40)})
    ids, size = state.next(*reports, Policy(threshold=0))
    assert (len(ids), size, state.stop) == (39, 2, None)
    left_out = ({f"c{i}" for i in range(40)} - set(ids)).pop()
    assert state.next(*reports, Policy(threshold=0)) == ([], 0) and state.stop == "budget"
    assert left_out in state.active  # ended by the flow's stop, not by its own rule


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
    assert "round 1: 80 uncertain cases, 1 more run each on both sides" in done.stderr
    lines = (repo / "reports/noisy/head.jsonl").read_text().splitlines()
    meta, rows = json.loads(lines[0]), [json.loads(x) for x in lines[1:]]
    assert meta["auto"]["rounds"] >= 1 and meta["auto"]["stop"] in ("clear", "settled", "budget")
    assert meta["auto"]["calls"] == sum(r["repeats"] for r in rows) <= 3.5 * 80
    assert {r["auto_end"] for r in rows} <= {"rule", "flow"}
    assert max(r["repeats"] for r in rows) > 3  # the noisy cases got more runs
    assert min(r["repeats"] for r in rows) == 3  # steady ones did not
    assert f"head {meta['auto']['calls']:,} (" in done.stdout and "stopped: " in done.stdout
    again = gate(
        "compare", "reports/noisy/base.jsonl", "reports/noisy/head.jsonl", "--format", "json",
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
    the cases the rounds extend (3.5 calls per paired case, the calls counted over them)."""
    from gate.flow.adaptive import start
    from gate.inputs.config import GateConfig

    base = [repeated(f"c{i}", ["pass", "fail"]) for i in range(100)]
    head = [repeated(f"c{i}", ["fail", "pass"]) for i in range(50)]  # 50 removed
    system = {"kind": "python", "target": "app:answer"}
    config = GateConfig.model_validate(
        {"repeats": "auto", "suites": [{"name": "s", "cases": "c.jsonl", "system": system}]}
    )
    reports = _reports(tmp_path, base, head)
    state = start(config, *reports)
    assert state.limit == 175
    ids, size = state.next(*reports, Policy(threshold=0))
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
        public = (repo / f"reports/noisy/{label}.jsonl").read_text().splitlines()
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
