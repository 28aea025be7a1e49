"""Budgets (cost, tokens, p95 latency) and `blockers: new`, in the comparison and in the PR
flow on a real repository."""

from __future__ import annotations

from pathlib import Path

from helpers.noisy_world import commit, gate, make_repo, model_json
from helpers.reports import case, repeated, write_report

from gate.compare.pairing import compare
from gate.inputs.policy import Budgets, Policy
from gate.render import RenderContext, render_comment
from gate.render.reasons import worded
from gate.report.io import read_report


def _pair(tmp_path: Path, base_rows: list, head_rows: list, **kw: object) -> tuple:
    return (
        read_report(write_report(tmp_path, "b", base_rows, **kw), fold_attempts=True),
        read_report(write_report(tmp_path, "h", head_rows, **kw), fold_attempts=True),
    )


def test_a_budget_breach_fails_with_its_reason(tmp_path: Path) -> None:
    base_rows = [
        case(f"c{i}", tokens={"prompt": 100, "completion": 0}, cost_usd=0.01) for i in range(50)
    ]
    head_rows = [
        case(f"c{i}", tokens={"prompt": 130, "completion": 0}, cost_usd=0.02) for i in range(50)
    ]
    base, head = _pair(tmp_path, base_rows, head_rows)
    loose = worded(compare(base, head, Policy(budgets=Budgets(tokens_pct=50))))
    assert loose.verdict == "pass"  # +30% tokens is within 50%
    tight = worded(compare(base, head, Policy(budgets=Budgets(tokens_pct=20, cost_pct=150))))
    assert tight.verdict == "fail"
    assert [f.metric for f in tight.findings if f.kind == "budget"] == ["tokens"]
    assert any("total tokens rose 30.0%" in r and "budget of 20%" in r for r in tight.reasons)
    cost = worded(compare(base, head, Policy(budgets=Budgets(cost_pct=20))))
    assert cost.verdict == "fail" and any("cost rose 100.0%" in r for r in cost.reasons)
    markdown = render_comment(cost, RenderContext())
    headline = next(line for line in markdown.splitlines() if "Eval Gate: fail" in line)
    assert "cost +100%" in headline


def test_the_headline_shows_a_large_cost_change_without_a_budget(tmp_path: Path) -> None:
    rows = [case(f"c{i}", cost_usd=0.01) for i in range(20)]
    pricier = [case(f"c{i}", cost_usd=0.0125) for i in range(20)]
    same = [case(f"c{i}", cost_usd=0.0105) for i in range(20)]
    c = worded(compare(*_pair(tmp_path, rows, pricier), Policy()))
    assert c.verdict == "pass" and "cost +25%" in render_comment(c, RenderContext())
    c = worded(compare(*_pair(tmp_path, rows, same), Policy()))
    assert "cost +" not in render_comment(c, RenderContext())  # 5%: not worth the headline


def test_an_unmeasurable_budget_is_a_note_not_a_pass(tmp_path: Path) -> None:
    rows = [case(f"c{i}") for i in range(20)]  # no cost on either side
    c = worded(compare(*_pair(tmp_path, rows, rows), Policy(budgets=Budgets(cost_pct=10))))
    assert c.verdict == "pass" and any("cost budget was not checked" in n for n in c.notes)


def _blocker_rows(base_runs: list[str], head_runs: list[str]) -> tuple[list, list]:
    base = [repeated(f"c{i}", ["pass"] * 3) for i in range(30)]
    head = [repeated(f"c{i}", ["pass"] * 3) for i in range(30)]
    base.append(repeated("login", base_runs, severity="blocker"))
    head.append(repeated("login", head_runs, severity="blocker"))
    return base, head


def test_blockers_new_lets_a_blocker_that_was_flaky_on_base_through(tmp_path: Path) -> None:
    base, head = _pair(
        tmp_path, *_blocker_rows(["pass", "fail", "pass"], ["fail", "pass", "fail"]), repeats=3
    )
    any_ = worded(compare(base, head, Policy()))
    assert any_.verdict == "fail" and any_.blocker_failures == ["login"]
    reason = next(r for r in any_.reasons if "blocking" in r)
    assert (
        "flaky" in reason
        and "2/3 on base → 1/3 on head" in reason
        and "failed on base too" in reason
    )
    new = worded(compare(base, head, Policy(blockers="new")))
    assert new.verdict == "pass"
    assert any("did not pass every run on base" in n and "login" in n for n in new.notes)
    markdown = render_comment(new, RenderContext())
    assert "2/3 → 1/3" in markdown and "🎲 flaky" in markdown and "does not block" in markdown


def test_blockers_new_still_blocks_a_blocker_that_passed_every_run(tmp_path: Path) -> None:
    base, head = _pair(tmp_path, *_blocker_rows(["pass"] * 3, ["fail", "fail", "pass"]), repeats=3)
    c = worded(compare(base, head, Policy(blockers="new")))
    assert c.verdict == "fail" and any("passed every run on base" in r for r in c.reasons)


def test_a_budget_breach_fails_the_pr(tmp_path: Path) -> None:
    """The PR flow on a real repository: the PR triples the tokens of every answer."""
    ids = [f"c{i}" for i in range(12)]
    repo = make_repo(tmp_path / "repo", ids, {}, tokens=10, budgets={"tokens_pct": 50})
    (repo / "model.json").write_text(model_json({}, tokens=30))
    commit(repo, "longer answers")
    done = gate("check", "--base", "HEAD~1", cwd=repo)
    assert done.returncode == 1, done.stderr
    assert "total tokens rose" in done.stdout and "budget of 50%" in done.stdout
    assert "pass rate 100.0% → 100.0%" in done.stdout  # the pass rate did not move


def test_tokens_a_side_did_not_report_are_unmeasured_not_a_rise_from_zero(
    tmp_path: Path,
) -> None:
    """A base system that returns no usage reports 0 tokens: that is an unknown, like a
    missing price, not a rise "from 0" that fails every PR whose head does report them."""
    base_rows = [case(f"c{i}") for i in range(20)]
    head_rows = [case(f"c{i}", tokens={"prompt": 100, "completion": 5}) for i in range(20)]
    c = worded(
        compare(*_pair(tmp_path, base_rows, head_rows), Policy(budgets=Budgets(tokens_pct=20)))
    )
    assert c.verdict == "pass"
    assert any("total tokens budget was not checked" in n for n in c.notes)
    priced = [case(f"c{i}", cost_usd=0.0) for i in range(20)]
    costly = [case(f"c{i}", cost_usd=0.01) for i in range(20)]
    c = worded(compare(*_pair(tmp_path, priced, costly), Policy(budgets=Budgets(cost_pct=20))))
    assert c.verdict == "fail" and any("cost was 0 on base" in r for r in c.reasons)
