"""What the README says the gate does, checked against what it does.

The README is the only page most users read, so each statement it makes about behaviour is
either checked here, against the real commands on real repositories (who owns the cases, the
power wording, how many comments, the setup steps, the install line, the quick start), or
names the test that checks it elsewhere (`ELSEWHERE`). A README edit that changes a sentence
quoted here fails until the claim is checked again."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml
from helpers.cli import REPO, run_gate
from helpers.reports import repeated as repeated_case
from helpers.reports import report
from helpers.servers.model_server import ModelServer
from helpers.servers.world import WORDS, World, cases, project_files, prompt
from helpers.support_bot import adopt, real_cases, regressing_pr, support_bot

from gate.compare.pairing import compare
from gate.compare.sequential import POWER
from gate.inputs.cases import load_case_file
from gate.inputs.config import GateConfig
from gate.inputs.expect import EXPECT_KEYS
from gate.inputs.policy import Policy

README = (REPO / "README.md").read_text(encoding="utf-8")
TEXT = " ".join(README.split())


def says(quote: str) -> None:
    """The README says this (whitespace and line breaks aside)."""
    assert " ".join(quote.split()) in TEXT, f"the README no longer says: {quote!r}"


def fenced(lang: str, text: str = README) -> list[str]:
    return [textwrap.dedent(b) for b in re.findall(rf"```{lang}\n(.*?)```", text, re.S)]


# --- the page itself ---------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def prose(page: Path) -> list[str]:
    """The page's lines outside fenced code blocks (fences of 3+ backticks or tildes)."""
    lines: list[str] = []
    fence = ""
    for line in page.read_text(encoding="utf-8").splitlines():
        opened = re.match(r"\s*(`{3,}|~{3,})", line)
        if fence:
            if opened and opened.group(1).startswith(fence):
                fence = ""
        elif opened:
            fence = opened.group(1)
        else:
            lines.append(line)
    return lines


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in prose(page) if re.match(r"#+ ", line)}


def test_the_readme_is_one_page_and_its_links_lead_somewhere() -> None:
    words = len(README.split())
    assert words <= 1500, f"the README has {words} words; it is a front door (<= 1,500)"
    for page in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", "\n".join(prose(page))):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            assert file.exists(), f"{page.name}: link to {target}"
            if anchor and file.suffix == ".md":
                assert anchor in anchors(file), f"{page.name}: no heading for {target}"


# --- install, and the contributors' two commands ---------------------------------------------


def test_the_install_line_is_the_repository_the_action_and_its_release_tags() -> None:
    says("pipx install git+https://github.com/eval-gate/eval-gate@v1")
    says("`@v1` is the newest 1.x release; `@v1.4.2` pins one")
    (line,) = [b.strip() for b in fenced("sh") if b.startswith("pipx")]
    repository, tag = re.fullmatch(r"pipx install git\+https://github.com/(.+)@(.+)", line).groups()  # type: ignore[union-attr]
    for workflow in [*(REPO / "examples").glob("*.yml"), REPO / "README.md"]:
        for uses in re.findall(r"uses: (eval-gate/[\w.-]+)@([\w.-]+)", workflow.read_text()):
            assert uses == (repository, tag), workflow.name
    release = (REPO / ".github/workflows/release.yml").read_text()
    for made in (
        'git tag -a "v$VERSION"',
        'git tag -f "v${VERSION%.*}"',
        'git tag -f "v${VERSION%%.*}"',
    ):
        assert made in release  # v1.4.2 stays, v1.4 and v1 move to the newest release
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"gate": "gate.__main__:main"}  # `gate` on the PATH
    # that such a tag builds and installs, and runs init, validate, check: the wheel test
    assert (
        "test_the_wheel_installs_outside_the_clone_and_gates_a_pr"
        in (REPO / "tests/test_wheel_install.py").read_text()
    )
    assert "pytest -m wheel" in (REPO / ".ci/run").read_text()


def test_the_quick_start_is_two_commands_and_ci_runs_the_second() -> None:
    says("## Quick start\n\nTo try it or work on it, with Python 3.11+ and git, in a clone of this")
    says("The second runs the tests; `.ci/run` (CI) runs it too")
    (block,) = [b for b in fenced("sh") if "gate demo" in b]
    demo, tests = block.strip().splitlines()
    assert demo.endswith("&& .venv/bin/gate demo") and demo.startswith("python3 -m venv .venv")
    ci = (REPO / ".ci/run").read_text().splitlines()
    assert (
        ".venv/bin/pip install -q -e '.[test]'" in demo
        and ".venv/bin/pip install -q -e '.[test]'" in ci
    )
    assert tests in ci  # the very line, not a look-alike


# --- the setup, step by step, on a support bot ----------------------------------------------


def test_the_setup_steps_do_what_the_readme_says(tmp_path: Path) -> None:
    """init, real cases, validate, check, commit, a PR: on a repository with a Python function
    `def answer(inputs: dict) -> str` and its prompt file (tests/helpers/support_bot.py)."""
    repo = support_bot(tmp_path / "repo")
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}

    says(
        "**1. `gate init`** finds them and writes four things, asking nothing and overwriting nothing"
    )
    says('(a Python function is `system: {kind: python, target: "bot.app:answer"}`')
    says("`evals/cases.jsonl`, three example cases")
    says("a `.eval-gate/` line in `.gitignore`")
    init = run_gate("init", cwd=repo, env=env)
    assert init.code == 0, init.err
    for name in ("gate.yml", "evals/cases.jsonl", ".github/workflows/eval-gate.yml"):
        assert f"wrote {name}" in init.out
    assert ".eval-gate/" in (repo / ".gitignore").read_text().splitlines()
    written = yaml.safe_load((repo / "gate.yml").read_text())
    assert written["suites"][0]["system"] == {"kind": "python", "target": "bot.app:answer"}
    assert len((repo / "evals/cases.jsonl").read_text().splitlines()) == 3
    (example,) = [b for b in fenced("yaml") if "suites:" in b and "jobs:" not in b]
    GateConfig.model_validate(yaml.safe_load(example))  # the gate.yml shown is a valid one

    says(
        "`gate check --base main`** runs the PR flow on your working tree against `main` and prints the comment the PR will get. Reports go to `.eval-gate/reports`."
    )
    says(
        "The PR that brings the gate in is measured by its own `gate.yml` (its base has none) and says so"
    )
    first = run_gate("check", "--base", "main", "--format", "markdown", cwd=repo, env=env)
    assert first.code == 0, first.err
    assert (
        "the base has no gate.yml, so the head's own instrument and policy judge this PR"
        in first.out
    )
    assert (repo / ".eval-gate/reports/app/head.jsonl").is_file()

    says(
        "**5. Commit** `gate.yml`, `evals/`, `.github/workflows/eval-gate.yml` and `.gitignore` (never `.eval-gate/`)."
    )
    real_cases(repo, "evals/cases.jsonl")
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert sorted(line[3:] for line in status.splitlines()) == [
        ".github/workflows/eval-gate.yml", ".gitignore", "evals/cases.jsonl", "gate.yml",
    ]  # fmt: skip
    validated = run_gate("validate", cwd=repo, env=env)
    assert validated.code == 0 and validated.out.rstrip().endswith("ok"), validated.err
    adopt(repo)
    says("from then on every PR that touches a watched file is measured by its base's")
    regressing_pr(repo)
    pr = run_gate("check", "--base", "main", "--format", "markdown", cwd=repo, env=env)
    assert pr.code == 1 and "verdict: fail" in pr.err, pr.err
    assert "returns\\-1" in pr.out


def test_the_case_shown_is_a_case_and_the_checks_named_are_checks(tmp_path: Path) -> None:
    (line,) = [b for b in fenced("json") if b.startswith('{"id"')]
    file = tmp_path / "cases.jsonl"
    file.write_text(line)
    (case,) = load_case_file(file, "cases.jsonl")
    assert case.severity == "blocker" and case.expect.must_include == ["30 days"]
    says("Other checks: `contains`, `regex`, `equals`, `json` (with a JSON Schema), `tool_calls`,")
    paragraph = TEXT[TEXT.index("Other checks:") : TEXT.index("Every check, CSV files")]
    named = re.findall(r"`(\w+)`", paragraph)
    assert len(named) >= 9 and set(named) <= set(EXPECT_KEYS)


def test_validate_calls_no_model_and_names_file_line_and_key(tmp_path: Path) -> None:
    says(
        "**3. `gate validate`** lints the config, the cases and what the run will need, without calling a model"
    )
    says(
        "(``gate.yml:3: key `threshhold`: unknown key (did you mean `threshold`?)``), exit code 2."
    )
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts/support.md.j2").write_text("{{ question }}\n")
    (tmp_path / "model.yaml").write_text("model: m\n")
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({"id": "a", "input": {"question": "q"}, "expect": {"must_include": ["q"]}})
        + "\n"
    )
    with ModelServer() as server:
        suite = (
            "suites:\n  - name: s\n    cases: cases.jsonl\n    system: {kind: openai, "
            f"model_config: model.yaml, prompt: prompts/support.md.j2, base_url: '{server.openai_base_url}'}}\n"
        )
        (tmp_path / "gate.yml").write_text(suite)
        ok = run_gate("validate", cwd=tmp_path)
        assert ok.code == 0, ok.out + ok.err
        assert server.requests == 0
    (tmp_path / "gate.yml").write_text(
        "watch: []\nblock_severities: [blocker]\nthreshhold: 3\n" + suite
    )
    bad = run_gate("validate", cwd=tmp_path)
    assert bad.code == 2 and "Traceback" not in bad.err
    assert "gate.yml:3: key `threshhold`: unknown key (did you mean `threshold`?)" in bad.err


# --- how it decides ----------------------------------------------------------------------------


def test_the_verdicts_defaults_and_the_pass_rate_with_repeats(tmp_path: Path) -> None:
    says(
        "`fail` when the pass rate drops by more than `threshold` points (default 3), a case of a blocking severity (default `blocker`) fails on head"
    )
    assert Policy().threshold == 3 and Policy().block_severities == ["blocker"]
    says(
        "`repeats: N` runs each case N times (a side's pass rate is then the mean of its cases' pass fractions)"
    )
    base = report(
        tmp_path,
        "base",
        [repeated_case("a", ["pass"] * 3), repeated_case("b", ["pass"] * 3)],
        repeats=3,
    )
    head = report(
        tmp_path,
        "head",
        [repeated_case("a", ["pass"] * 3), repeated_case("b", ["pass", "pass", "fail"])],
        repeats=3,
    )
    c = compare(base, head, Policy())
    assert c.base_pass_rate == 100.0 and c.head_pass_rate == pytest.approx(
        100 * (1 + 2 / 3) / 2, abs=0.01
    )


def comment_count_claimed() -> str:
    """`suite` or `pull request`: what the README says the Action posts."""
    found = re.findall(r"One comment per (suite|pull request|PR)\b", TEXT)
    assert len(found) == 1, "the README says once how many comments a PR gets"
    return "suite" if found[0] == "suite" else "pull request"


COUNT_PHRASES = {
    "suite": ("one comment per suite", "one per suite,"),
    "pull request": ("one comment per pull request", "one comment per pr ", "one per pull request"),
}


def two_suites(world: World) -> None:
    """Two suites on the base; the PR drops a rule from the shared prompt and, to dodge the
    regression it causes, rewrites that case's expectation in the same commit."""
    base = project_files("base", WORDS)
    base["gate.yml"] = textwrap.dedent("""\
        watch: ["prompts/**"]
        suites:
          - name: support
            cases: cases/support.jsonl
            system: {kind: python, target: "app.bot:answer"}
          - name: billing
            cases: cases/billing.jsonl
            system: {kind: python, target: "app.bot:answer"}
    """)
    base["cases/billing.jsonl"] = cases(["fees", "statement"]).replace("faq-", "bill-")
    world.base(base)
    edited = cases(WORDS).replace('"must_include": ["CAC"]', '"must_include": ["fees"]')
    assert edited != cases(WORDS)
    world.pr({
        "prompts/support.md": prompt([w for w in WORDS if w != "CAC"]),
        "cases/support.jsonl": edited,
        "app/bot.py": project_files("head", WORDS)["app/bot.py"],
    })  # fmt: skip
    world.checkout()


def test_on_github_the_bases_cases_judge_and_the_comments_are_as_the_readme_says(
    world: World,
) -> None:
    says(
        "The cases are the base's: a case the PR edits or removes is still judged by the base's version of it"
    )
    says("the smallest drop it would catch 9 times in 10")
    says("edited in place on every push")
    two_suites(world)
    run = world.run(world.environ(world.event()))
    assert run.code == 1, run.log
    assert run.outputs["verdict"] == "fail"
    # the PR's own version of faq-001 (expecting "fees") would pass; the base's fails it
    assert json.loads(run.outputs["regressions"]) == ["support/faq-001"]
    comments = world.comments()
    expected = 2 if comment_count_claimed() == "suite" else 1
    assert len(comments) == expected, [c.body.splitlines()[0] for c in comments]
    everything = "\n".join(c.body for c in comments)
    assert "faq\\-001" in everything
    assert "9 times in 10" in everything or "90% of the time" in everything
    assert POWER == 0.9 and "80%" not in README and "80% power" not in everything
    # a new push: the same comments, edited
    first = {c.id: c.body for c in comments}
    world.pr({"prompts/support.md": prompt([w for w in WORDS if w not in ("CAC", "card")])})
    world.checkout()
    again = world.run(world.environ(world.event()))
    assert again.code == 1, again.log
    after = {c.id: c.body for c in world.comments()}
    assert set(after) == set(first) and after != first
    assert world.head_sha[:7] in "\n".join(after.values())


def test_the_docs_say_the_same_number_of_comments_as_the_readme() -> None:
    """Where a page, action.yml or the commands' help say how many comments a PR gets, they
    say what the README says (which the test above checks against the Action)."""
    claimed = comment_count_claimed()
    other = next(k for k in COUNT_PHRASES if k != claimed)
    pages = [*sorted((REPO / "docs").glob("*.md")), REPO / "action.yml"]
    pages += sorted((REPO / "gate/commands").glob("*.py"))
    wrong = [
        f"{page.relative_to(REPO)}: {phrase!r}"
        for page in pages
        for phrase in COUNT_PHRASES[other]
        if phrase in " ".join(page.read_text(encoding="utf-8").lower().split())
    ]
    assert wrong == [], f"the README says one comment per {claimed}"


# --- claims checked by the tests that own them -----------------------------------------------

ELSEWHERE = {
    "runs your eval suite against the PR's head *and* its base, pairs the results case by case and comments on the PR":
        "tests/test_action_e2e.py::test_regression_fails_with_one_comment_outputs_summary_and_annotations",
    "what the base said, what the head says (as a diff), the check that decided it and the prompt and config lines the PR changed":
        "tests/test_explain.py::test_the_comment_explains_every_regression",
    "asking nothing and overwriting nothing (`--force` does":
        "tests/test_init.py::test_never_overwrites_without_force",
    "run in a sandbox a reward-hacking answer cannot fool":
        "tests/test_sandbox_attacks.py::test_the_attack_does_not_pass",
    "Ollama, vLLM and llama.cpp work with `base_url`":
        "tests/test_providers_doc.py::test_the_local_server_setup_runs_as_written",
    "Reports go to `.eval-gate/reports`":
        "tests/test_reports_location.py::test_gate_check_writes_its_reports_where_gate_init_ignores_them",
    "an unchanged base costs no model call":
        "tests/test_action_cache_e2e.py::test_after_mains_push_a_pr_pays_for_its_head_only",
    "a cost, token or latency budget is exceeded":
        "tests/test_trust_policy.py::test_a_budget_breach_fails_the_pr",
    "`error` when errors make the comparison meaningless":
        "tests/test_compare.py::test_error_rate_above_the_limit_is_an_error_verdict",
    "`skipped` when no watched file changed":
        "tests/test_check.py::test_nothing_watched_changed_is_skipped",
    "a drop the budget left undecided is `inconclusive`, which passes unless the base says `inconclusive: block`":
        "tests/test_action_flows.py::test_an_inconclusive_suite_is_the_prs_verdict",
    "a case the PR adds is asked of both sides and reported apart, where it can only make the verdict stricter":
        "tests/test_instrument_flow.py::test_add_passing_cases_to_offset_a_drop",
    "The checks, the judge and the policy are the base's too":
        "tests/test_instrument_flow.py::test_the_bases_check_code_judges_both_sides",
    "each side runs its own prompt, model config and code":
        "tests/test_action_e2e.py::test_regression_fails_with_one_comment_outputs_summary_and_annotations",
    "A PR cannot loosen the gate that judges it":
        "tests/test_policy_overrides.py::test_a_looser_threshold_and_a_dropped_severity_are_not_applied",
    "the comment lists what it changes in the measurement":
        "tests/test_instrument_flow.py::test_loosen_their_expect",
    "the delta's 95% confidence interval, the exact McNemar p-value":
        "tests/test_render.py::test_statistics_section_names_its_methods",
    "`repeats: auto` spends calls where the decision needs them":
        "tests/test_trust_auto.py::test_the_calls_go_to_the_cases_whose_runs_disagree",
    "under GitHub's size limit":
        "tests/test_render.py::test_a_comment_never_exceeds_the_limit_and_still_counts",
    "with model output escaped":
        "tests/test_render.py::test_hostile_outputs_keep_the_structure_and_stay_inert",
    "A maintainer's `eval-gate: accept` label turns a `fail` into an accepted pass":
        "tests/test_instrument_flow.py::test_the_accept_label_turns_a_fail_into_an_accepted_pass",
    "gated offline with a bundled demo app (no key); it prints the comment pictured above":
        "tests/test_demo.py::test_demo_runs_a_real_pr_comparison_offline",
}  # fmt: skip


@pytest.mark.parametrize("quote", sorted(ELSEWHERE))
def test_each_other_claim_names_the_test_that_checks_it(quote: str) -> None:
    says(quote)
    file, function = ELSEWHERE[quote].split("::")
    tree = ast.parse((REPO / file).read_text(encoding="utf-8"))
    assert function in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, ELSEWHERE[
        quote
    ]
