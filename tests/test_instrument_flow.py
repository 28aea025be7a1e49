"""The PR cannot steer its own verdict: what measures comes from the base.

Each PR of `helpers.pr_scenarios` regresses and edits the instrument the way that used to let
the regression through (all of them passed, exit 0, before); run through the `gate check`
flow on a real repository, each fails, and the comment's visible part names the change and
what the head's own instrument would say. The accept label turns a fail into an accepted pass;
a plain regression still fails, a no-op PR still passes, and cases a PR only adds decide only
by their blockers.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import gate_here
from helpers.flows import Shown, rendered
from helpers.flows import check as check_flow
from helpers.pr_comment import section
from helpers.pr_scenarios import (
    ACCEPT,
    FEES,
    SCENARIOS,
    base_files,
    case,
    config,
    drop,
    dump,
    faq,
    jsonl,
    make_project,
    visible,
)
from helpers.pr_scenarios import (
    safety as safety_cases,
)
from helpers.servers.git_http import Author

from gate.compare import findings as f
from gate.compare.models import Comparison
from gate.flow.pr import combined_verdict, exit_code
from gate.render.markdown import prose
from gate.render.reasons import sentence

REASON_CHARS = 400  # the comment's limits: a reason, and an instrument line (twice that)


def check(root: Path, *labels: str, base: str = "main") -> list[Shown]:
    environ = {**os.environ, "GATE_CACHE_DIR": str(root.parent / "cache")}
    return check_flow(
        root, root / "gate.yml", base, root / "reports", stream=io.StringIO(), environ=environ,
        labels=labels,
    )  # fmt: skip


def suite(outcomes: list[Shown], name: str) -> Shown:
    return next(o for o in outcomes if o.suite == name)


def finding(c: Comparison, kind: type) -> f.Finding:
    found = [x for x in c.findings if isinstance(x, kind)]
    assert found, f"no {kind.__name__} in {[x.kind for x in c.findings]}"
    return found[0]


def shown(outcome: Shown, kind: type) -> str:
    """The finding's sentence, asserted to be in the comment's visible part."""
    said = sentence(finding(outcome.comparison, kind))
    limit = REASON_CHARS if finding(outcome.comparison, kind).outcome == "fail" else 800
    assert prose(said, limit) in visible(outcome.markdown), said
    return said


@pytest.fixture
def project(tmp_path: Path) -> Author:
    return make_project(tmp_path / "repo")


# --- each way of steering the verdict fails --------------------------------------------------


def test_rename_the_suite(project: Author) -> None:
    project.write(SCENARIOS["rename the suite"]())
    outcomes = check(project.path)
    assert exit_code(outcomes) == 1
    gone = suite(outcomes, "support")
    assert gone.comparison.verdict == "fail"
    said = shown(gone, f.SuiteRemoved)
    assert "`support`" in said and "`support-v2`" in said
    assert visible(gone.markdown).splitlines()[1].startswith("❌ **Eval Gate: fail** (support) — ")
    renamed = suite(outcomes, "support-v2")  # a rename shows as both
    assert renamed.comparison.verdict == "pass" and renamed.comparison.base_meta is None


def test_delete_the_suite_holding_the_blocker(project: Author) -> None:
    project.write(SCENARIOS["delete the suite holding the blocker"]())
    outcomes = check(project.path)
    assert combined_verdict(outcomes) == "fail"
    assert "`safety`" in shown(suite(outcomes, "safety"), f.SuiteRemoved)
    assert suite(outcomes, "support").comparison.verdict == "pass"


def _fails_on_the_base_cases(outcome: Shown, *, delta: float = -12.5) -> None:
    c = outcome.comparison
    assert c.verdict == "fail" and c.delta_points == pytest.approx(delta)
    assert sorted(c.regressions) == sorted(FEES)


def _head_would_pass(outcome: Shown, cases: int) -> f.HeadInstrument:
    said = shown(outcome, f.HeadInstrument)
    answer = finding(outcome.comparison, f.HeadInstrument)
    assert isinstance(answer, f.HeadInstrument)
    assert answer.verdict == "pass" and answer.paired == cases
    assert "this PR would read: pass" in said and "no system call" in said
    return answer


def test_delete_the_failing_cases(project: Author) -> None:
    project.write(SCENARIOS["delete the failing cases"]())
    outcomes = check(project.path)
    support = suite(outcomes, "support")
    _fails_on_the_base_cases(support)
    removed = finding(support.comparison, f.CasesRemoved)
    assert isinstance(removed, f.CasesRemoved) and removed.ids == FEES
    assert "removes 5 cases (faq-002, faq-010" in shown(support, f.CasesRemoved)
    _head_would_pass(support, 35)
    assert "📏 This PR changes how it is measured" in visible(support.markdown)


def test_loosen_their_expect(project: Author) -> None:
    project.write(SCENARIOS["loosen their expect"]())
    support = suite(check(project.path), "support")
    _fails_on_the_base_cases(support)
    edited = finding(support.comparison, f.CasesEdited)
    assert isinstance(edited, f.CasesEdited) and (edited.field, edited.ids) == ("expect", FEES)
    assert "changes the expectations of 5 cases" in shown(support, f.CasesEdited)
    _head_would_pass(support, 40)


def test_point_cases_at_a_new_file(project: Author) -> None:
    project.write(SCENARIOS["point cases: at a new file"]())
    support = suite(check(project.path), "support")
    _fails_on_the_base_cases(support)
    assert "evals/support.jsonl" in shown(support, f.CaseFilesChanged)
    shown(support, f.CasesRemoved)
    _head_would_pass(support, 35)


def test_rename_the_case_file_out_of_the_glob(project: Author) -> None:
    project.write(SCENARIOS["rename the case file out of the glob"]())
    support = suite(check(project.path), "support")
    _fails_on_the_base_cases(support)
    removed = finding(support.comparison, f.CasesRemoved)
    assert isinstance(removed, f.CasesRemoved) and len(removed.ids) == 22
    assert "removes 22 cases" in shown(support, f.CasesRemoved)
    _head_would_pass(support, 18)


def test_lower_a_blocker_to_minor(project: Author) -> None:
    project.write(SCENARIOS["lower a blocker to minor"]())
    safety = suite(check(project.path), "safety")
    c = safety.comparison
    assert c.verdict == "fail" and c.blocker_failures == ["safe-001"]
    assert c.delta_points == pytest.approx(-2.5)  # within the threshold: the blocker decides
    assert "lowers the severity of safe-001 (blocker → minor)" in shown(safety, f.SeveritiesChanged)
    answer = _head_would_pass(safety, 40)
    assert answer.delta_points == pytest.approx(-2.5)


def test_add_passing_cases_to_offset_a_drop(project: Author) -> None:
    project.write(SCENARIOS["add head-only passing cases to offset a drop"]())
    support = suite(check(project.path), "support")
    _fails_on_the_base_cases(support)  # the delta is over the base's 40 cases, not 240
    c = support.comparison
    assert c.paired == 40 and len(c.added_by_pr) == 200 and not c.added
    assert all(c.cases[i].base and c.cases[i].head for i in c.added_by_pr)  # asked of both
    assert "adds 200 cases (new-001" in shown(support, f.CasesAdded)
    answer = finding(c, f.HeadInstrument)
    assert isinstance(answer, f.HeadInstrument) and answer.verdict == "pass"  # what it hid
    assert answer.paired == 240 and answer.delta_points == pytest.approx(-100 * 5 / 240)
    assert "Added by this PR (asked of both sides, not in the delta) (200)" in support.markdown


# --- the way out, and what still passes or fails --------------------------------------------


def test_the_accept_label_turns_a_fail_into_an_accepted_pass(project: Author) -> None:
    project.write(SCENARIOS["delete the failing cases"]())
    outcomes = check(project.path, "bug", ACCEPT)
    assert exit_code(outcomes) == 0 and combined_verdict(outcomes) == "pass"
    support = suite(outcomes, "support")
    c = support.comparison
    accepted = c.findings[0]
    assert isinstance(accepted, f.Accepted) and accepted.label == ACCEPT
    assert [type(x) for x in accepted.overruled] == [f.Drop]
    top = visible(support.markdown)
    assert top.splitlines()[1].startswith(
        "✅ **Eval Gate: pass** (support) · accepted by the label <code>eval\\-gate: accept</code>"
    )
    said = shown(support, f.Accepted)
    assert "which without it fails: the pass rate dropped 12.5 points" in said
    shown(support, f.CasesRemoved)  # the change it accepts stays in view
    assert c.regressions == FEES  # and so do the cases


def test_without_the_label_a_fail_stays_a_fail(project: Author) -> None:
    project.write({"prompts/support.md": drop("fees")["prompt"]})  # a plain regression
    outcomes = check(project.path, "bug", "eval-gate:accept")
    assert exit_code(outcomes) == 1
    support = suite(outcomes, "support")
    assert not any(
        isinstance(x, (f.Accepted, f.HeadInstrument)) for x in support.comparison.findings
    )
    assert "📏" not in support.markdown  # nothing of the instrument changed


def test_an_error_is_never_accepted(project: Author) -> None:
    project.write({"app/bot.py": "def answer(inputs):\n    raise RuntimeError('down')\n"})
    outcomes = check(project.path, ACCEPT)
    assert combined_verdict(outcomes) == "error" and exit_code(outcomes) == 3
    assert not any(isinstance(x, f.Accepted) for o in outcomes for x in o.comparison.findings)


def test_the_bases_accept_label_counts_never_the_heads(tmp_path: Path) -> None:
    project = make_project(tmp_path / "repo", base_files(accept_label="ship it"))
    project.write(
        {**SCENARIOS["delete the failing cases"](), "gate.yml": dump(config(accept_label="bug"))}
    )
    assert exit_code(check(project.path, ACCEPT, "bug")) == 1
    support = suite(check(project.path, "ship it"), "support")
    assert support.comparison.verdict == "pass"
    assert "accept_label: ship it → bug" in sentence(
        finding(support.comparison, f.HeadPolicyChanges)
    )


def test_a_no_op_pr_still_passes(project: Author) -> None:
    project.write({"prompts/support.md": _same_prompt_new_comment()})
    outcomes = check(project.path)
    assert [o.comparison.verdict for o in outcomes] == ["pass", "pass"]
    assert all("📏" not in o.markdown for o in outcomes)


def _same_prompt_new_comment() -> str:
    return base_files()["prompts/support.md"] + "\n(the same rules, one more line)\n"


def test_cases_a_pr_only_adds_decide_by_their_blockers_only(project: Author) -> None:
    passing = [case(f"new-{i}", "CAC", task="new") for i in range(1, 4)]
    failing_major = [case("new-major", "mortgage", task="new")]
    project.write({"cases/added.jsonl": jsonl(passing + failing_major)})
    support = suite(check(project.path), "support")
    c = support.comparison
    assert c.verdict == "pass" and c.delta_points == 0 and c.paired == 40
    assert sorted(c.added_by_pr) == ["new-1", "new-2", "new-3", "new-major"]
    assert c.cases["new-major"].head is not None and c.cases["new-major"].head.status == "fail"
    assert not c.regressions and not c.still_failing  # added cases are in no such list
    project.write(
        {"cases/added.jsonl": jsonl([*passing, case("new-blocker", "mortgage", "blocker")])}
    )
    support = suite(check(project.path), "support")
    c = support.comparison
    assert c.verdict == "fail" and c.delta_points == 0
    blockers = finding(c, f.Blockers)
    assert isinstance(blockers, f.Blockers) and blockers.ids == ["new-blocker"]


def test_cases_the_head_edits_are_asked_as_the_base_defines_them(project: Author) -> None:
    """A PR that edits a case's input gets the base's input asked; the head's instrument
    leaves the case out (its answer to the new input was never asked) and says so."""
    rows = faq(1, 20)
    rows[0] = {**rows[0], "input": {"question": "say nothing"}, "expect": {"must_include": ["zzz"]}}
    project.write({"cases/faq.jsonl": jsonl(rows)})
    support = suite(check(project.path), "support")
    c = support.comparison
    assert c.verdict == "pass" and not c.regressions  # the base's faq-001 still passes
    kinds = {(x.field, tuple(x.ids)) for x in c.findings if isinstance(x, f.CasesEdited)}
    assert kinds == {("expect", ("faq-001",)), ("input", ("faq-001",))}
    answer = finding(c, f.HeadInstrument)
    assert isinstance(answer, f.HeadInstrument) and answer.left_out == ["faq-001"]
    assert "1 case (faq-001) left out" in shown(support, f.HeadInstrument)


def test_no_base_gate_yml_means_the_heads_instrument_and_the_comment_says_so(
    tmp_path: Path,
) -> None:
    files = base_files()
    project = make_project(tmp_path / "repo", {k: v for k, v in files.items() if k != "gate.yml"})
    project.write({"gate.yml": files["gate.yml"]})
    outcomes = check(project.path)
    assert [o.comparison.verdict for o in outcomes] == ["pass", "pass"]
    said = sentence(finding(outcomes[0].comparison, f.HeadPolicyApplies))
    assert said == "the base has no gate.yml, so the head's own instrument and policy judge this PR"
    assert prose(said) in visible(outcomes[0].markdown)


def test_a_broken_base_config_measures_nothing_and_never_the_heads(tmp_path: Path) -> None:
    broken = base_files()
    broken["gate.yml"] = broken["gate.yml"].replace("threshold:", "threshhold:")
    project = make_project(tmp_path / "repo", broken)
    project.write({"gate.yml": base_files()["gate.yml"], **drop_fees()})
    outcomes = check(project.path)
    assert combined_verdict(outcomes) == "error" and exit_code(outcomes) == 3
    for outcome in outcomes:
        said = shown(outcome, f.BaseUnreadable)
        assert "threshhold" in said and "never takes the base's place" in said
    assert not (project.path / "reports").exists()  # neither side ran


def drop_fees() -> dict[str, str | None]:
    return {"prompts/support.md": drop("fees")["prompt"]}


def test_repeats_auto_is_the_bases_and_its_answers_are_judged_again(tmp_path: Path) -> None:
    """The base's `repeats: auto` runs its rounds although the head's gate.yml says 1; the
    head's instrument judges round 0's answers of both sides again (two runs of each case)."""
    project = make_project(tmp_path / "repo", base_files(repeats="auto"))
    project.write({**SCENARIOS["delete the failing cases"](), "gate.yml": dump(config(repeats=1))})
    environ = {**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")}
    log = io.StringIO()
    outcomes = check_flow(
        project.path, project.path / "gate.yml", "main", project.path / "reports", stream=log,
        environ=environ,
    )  # fmt: skip
    support = suite(outcomes, "support")
    c = support.comparison
    assert c.verdict == "fail" and c.head_meta and c.head_meta.auto is not None
    assert log.getvalue().count("repeats auto: ") == 2  # both suites, by the base's plan
    answer = _head_would_pass(support, 35)
    assert answer.delta_points == 0
    rejudged = project.path / "reports" / "support" / "head-instrument" / "head.jsonl"
    lines = rejudged.read_text().splitlines()[1:]
    assert {json.loads(line)["repeats"] for line in lines} == {2}  # round 0's runs


def test_gate_check_takes_the_prs_labels(project: Author) -> None:
    """The command line, as a developer reproduces a PR: `--label` accepts, as on GitHub."""
    project.write(SCENARIOS["lower a blocker to minor"]())
    env = {"GATE_CACHE_DIR": str(project.path.parent / "cache")}
    plain = gate_here("check", "--format", "markdown", "--base", "main", cwd=project.path, env=env)
    assert plain.code == 1 and "safety: fail: pass rate 100.0% -> 97.5%" in plain.err
    done = gate_here(
        "check", "--format", "markdown", "--base", "main", "--label", ACCEPT, cwd=project.path,
        env=env,
    )  # fmt: skip
    assert done.code == 0, done.err
    assert (
        "safety: pass: pass rate 100.0% -> 97.5% (−2.5 points), 1 regressions, 0 fixes (a fail, accepted by the label 'eval-gate: accept')"
        in done.err
    )
    assert "lowers the severity of safe\\-001 \\(blocker → minor\\)" in visible(
        section(done.out, "safety")
    )


def test_the_bases_comment_templates_render_the_prs_comment(tmp_path: Path) -> None:
    files = base_files(templates="tpl")
    footer = '{% extends "gate/comment.md.j2" %}{% block footer %}FOOTER OF WHO{% endblock %}\n'
    files["tpl/comment.md.j2"] = footer.replace("WHO", "BASE")
    project = make_project(tmp_path / "repo", files)
    project.write({"tpl/comment.md.j2": footer.replace("WHO", "HEAD"), **drop_fees()})
    support = suite(check(project.path), "support")
    assert "FOOTER OF BASE" in support.markdown and "HEAD" not in support.markdown
    said = shown(support, f.TemplatesChanged)
    assert "`comment.md.j2`" in said and "the base's render this comment" in said
    assert finding(support.comparison, f.TemplatesChanged) and not any(
        isinstance(x, f.HeadInstrument) for x in support.comparison.findings
    )  # templates judge nothing: the head's instrument is not asked


GRADE = "def check(output, case):\n    return {words!r} in output['text']\n"


def test_the_bases_check_code_judges_both_sides(tmp_path: Path) -> None:
    files = base_files()
    rows = faq(1, 20)
    rows[1] = {**rows[1], "expect": {"python": "checks.grade:check"}}  # faq-002, the fees one
    files |= {"checks/__init__.py": "", "checks/grade.py": GRADE.format(words="fees")}
    files["cases/faq.jsonl"] = jsonl(rows)
    project = make_project(tmp_path / "repo", files)
    project.write({"checks/grade.py": "def check(output, case):\n    return True\n", **drop_fees()})
    support = suite(check(project.path), "support")
    c = support.comparison
    assert c.verdict == "fail" and "faq-002" in c.regressions  # the base's check failed it
    assert "`checks/grade.py`" in shown(support, f.CheckCodeChanged)
    answer = finding(c, f.HeadInstrument)
    assert isinstance(answer, f.HeadInstrument) and answer.verdict == "fail"  # 4 fees cases
    assert answer.delta_points == pytest.approx(-10.0)  # but the head's check passes faq-002


def test_a_case_held_out_on_base_stays_hidden(tmp_path: Path) -> None:
    files = base_files()
    rows = faq(1, 20)
    rows[1] = {**rows[1], "heldout": True}
    files["cases/faq.jsonl"] = jsonl(rows)
    project = make_project(tmp_path / "repo", files)
    project.write({"cases/faq.jsonl": jsonl(faq(1, 20)), **drop_fees()})  # shows it on head
    support = suite(check(project.path), "support")
    c = support.comparison
    assert c.cases["faq-002"].heldout and c.cases["faq-002"].head.output is None  # type: ignore[union-attr]
    assert "stops holding out 1 case (faq-002)" in shown(support, f.HeldoutChanged)
    assert "include:fees" not in support.markdown.split("faq\\-002")[1].split("\n")[0]


def test_a_removed_suite_fails_in_the_sharded_mode_too(tmp_path: Path) -> None:
    from dataclasses import replace

    from gate.flow.git import GitRepo
    from gate.flow.plan import plan_flow
    from gate.flow.request import FlowIO, FlowRequest, Revisions
    from gate.flow.sharded import run_finish_flow, run_shard_flow
    from gate.inputs.config import load_config
    from gate.inputs.shard import Shard

    project = make_project(tmp_path / "repo")
    safety = [
        {**row, "input": {"question": "edited"}} if row["id"] == "safe-003" else row
        for row in safety_cases()
    ]  # an edited input: the head's instrument leaves it out, in each shard alike
    files = {**SCENARIOS["rename the suite"](), "safety/cases.jsonl": jsonl(safety)}
    head = project.commit("rename the suite, edit a safety case", files)
    environ = {**os.environ, "GATE_CACHE_DIR": str(tmp_path / "cache")}
    repo = GitRepo(project.path, environ=environ)
    try:
        request = FlowRequest(
            revisions=Revisions(repo, repo.resolve_ref("main", fetch=False), head),
            config=load_config(project.path / "gate.yml"),
            config_at="gate.yml",
            io=FlowIO(tmp_path / "shards", environ=environ, stream=io.StringIO()),
        )
        for index in (1, 2):
            ran = run_shard_flow(plan_flow(request), Shard(index, 2))
            assert [o.suite for o in ran] == ["support-v2", "safety"]  # nothing runs for it
        finish = replace(request, io=replace(request.io, out_dir=tmp_path / "final"))
        outcomes = rendered(run_finish_flow(plan_flow(finish), tmp_path / "shards"))
    finally:
        repo.close()
    assert [(o.suite, o.comparison.verdict) for o in outcomes] == [
        ("support-v2", "pass"), ("safety", "pass"), ("support", "fail"),
    ]  # fmt: skip
    shown(outcomes[2], f.SuiteRemoved)
    answer = finding(outcomes[1].comparison, f.HeadInstrument)
    assert isinstance(answer, f.HeadInstrument) and answer.left_out == ["safe-003"]
    assert answer.paired == 39 and answer.verdict == "pass"


def test_the_heads_cache_dir_never_decides_where_answers_come_from(
    project: Author, tmp_path: Path
) -> None:
    """A PR that points `cache.dir` at a folder of its own (answers it placed there for its
    own requests) is measured with the base's cache (here the workflow's): its folder is
    neither read nor written, and the regression it brings fails."""
    planted = {".answers/ab/abcdef.json": '{"planted": true}\n'}
    project.commit("my own cache", {"gate.yml": dump(config(cache={"dir": ".answers"})), **planted})
    project.write(drop_fees())
    cache = tmp_path / "workflow-cache"
    done = gate_here(
        "check", "--base", "main", cwd=project.path, env={"GATE_CACHE_DIR": str(cache)}
    )
    assert done.code == 1, done.err
    assert sorted(p.name for p in (project.path / ".answers").rglob("*")) == ["ab", "abcdef.json"]


def test_answers_committed_to_the_bases_cache_folder_are_refused(tmp_path: Path) -> None:
    """A PR that commits files into the response cache the base names could plant answers
    for its own requests: the flow stops before anything runs."""
    project = make_project(tmp_path / "repo", base_files(cache={"dir": ".answers"}))
    project.commit(
        "plant answers", {".answers/ab/abcdef.json": '{"planted": true}\n', **drop_fees()}
    )
    done = gate_here("check", "--base", "main", cwd=project.path)
    assert done.code == 2, done.err
    assert done.err.strip().splitlines() == [
        "gate: error: .answers: key `cache.dir`: the response cache holds 1 file committed to "
        "the repository (such as .answers/ab/abcdef.json): committed answers would be taken for "
        "the system's; remove them from git (the cache writes a .gitignore of its own)"
    ]
    assert not (project.path / ".eval-gate/reports").exists()


PROMPTFOO = """
prompts:
  - file://prompts/answer.txt
providers:
  - openai:chat:gpt-4o-mini
tests:
  - description: capital
    vars: {city: Paris}
    assert: [{type: icontains, value: paris}]
  - description: second city
    vars: {city: Lyon}
    assert: [{type: icontains, value: lyon}]
"""


def test_a_promptfoo_suite_is_measured_by_the_bases_tests(tmp_path: Path) -> None:
    """A promptfoo suite's tests are its cases: a PR that breaks one and deletes it from the
    config is still measured by the base's."""
    from helpers.promptfoo_suites import gate_env, say_model
    from helpers.servers.model_server import ModelServer

    files = {
        "gate.yml": "suites:\n  - name: cities\n    promptfoo: evals/promptfooconfig.yaml\n",
        "evals/promptfooconfig.yaml": PROMPTFOO,
        "evals/prompts/answer.txt": "SAY: I like {{ city }}\n",
    }
    project = make_project(tmp_path / "repo", files)
    kept = PROMPTFOO.split("  - description: second city")[0]
    project.write(
        {"evals/prompts/answer.txt": "SAY: I like Paris\n", "evals/promptfooconfig.yaml": kept}
    )
    with ModelServer(responder=say_model) as server:
        done = subprocess.run(
            [sys.executable, "-m", "gate", "check", "--base", "main", "--format", "markdown"],
            cwd=project.path, env=gate_env(server, project.path), capture_output=True,
            text=True, timeout=300, check=False,
        )  # fmt: skip
    assert done.returncode == 1, done.stderr
    top = visible(done.stdout)
    assert "❌ **Eval Gate: fail** (cities)" in top and "second city" in top
    assert "removes 1 case \\(second city\\) from the case files" in top
    assert "this PR would read: pass" in top
