"""The comment explains each regression: base against head, what decided it, the judge's
scores on both sides, and the system files the PR changed.

End to end: a real git repository whose python app answers from its prompt file, a PR in the
working tree, the real sandbox for the code case, a real judge model on 127.0.0.1, and
`gate check` / `gate compare` as a user runs them. The comment is checked through cmarkgfm.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import git
import pytest
from helpers.cli import gate_here
from helpers.github_html import LIVE_MENTION, github_html, structure
from helpers.servers.model_server import ChatRequest, ModelServer, echo_model

from gate.compare.models import Comparison
from gate.flow.git import GitRepo
from gate.flow.system_diff import file_diff

APP = """
from pathlib import Path

RULES = Path(__file__).with_name("prompts").joinpath("support.md")


def answer(inputs):
    rules = RULES.read_text()
    kind = inputs["kind"]
    if kind == "cac":
        if "Name the CAC" in rules:
            return "Register the company with the Corporate Affairs Commission (CAC) first. Then open the account."
        return "Register the company first. Then open the account."
    if kind == "rate":
        if "Say I do not know" in rules:
            return "I do not know tomorrow's exchange rate; check the CBN's published rates."
        return "Tomorrow's rate will be exactly 1,532.40 naira per dollar, cc @octocat <b>sure</b>."
    if kind == "code":
        op = "==" if "Be careful" in rules else "!="
        return "```python\\ndef is_even(n: int) -> bool:\\n    return n % 2 " + op + " 0\\n```"
    if kind == "capital":
        if "Check geography" in rules or inputs["q"] != "France":
            return "The capital of " + inputs["q"] + " is " + inputs["a"] + "."
        return "The capital of France is Lyon, I am sure."
    return "?"
"""

RULES = """\
# Support rules
- Name the CAC when asked about registration.
- Say I do not know when unsure.
- Be careful with code.
- Check geography.
"""

CAPITALS = [("France", "Paris"), ("Italy", "Rome"), ("Spain", "Madrid"), ("Kenya", "Nairobi")]
ANSWER = re.compile(r"<<<ANSWER (\w+)>>>\n(.*)\n<<<END OF ANSWER \1>>>", re.DOTALL)


def judging(request: ChatRequest) -> str:
    """A judge model: correctness 2 when the answer names the right capital, else 0."""
    if request.model != "judge-m":
        return echo_model(request)
    found = ANSWER.search(request.user)
    assert found is not None
    text = found.group(2)
    right = any(f"{country} is {capital}" in text for country, capital in CAPITALS)
    reason = "names the right capital" if right else "names the wrong capital @octocat </details>"
    score = 2 if right else 0
    return json.dumps({"scores": {"correctness": {"score": score, "reason": reason}}})


@pytest.fixture
def judge(model_servers: Callable[..., ModelServer]) -> ModelServer:
    return model_servers(responder=judging)


def build(root: Path, judge: ModelServer) -> git.Repo:
    rows = [
        {"id": "cac-1", "input": {"kind": "cac"}, "expect": {"must_include": ["CAC"]}},
        {
            "id": "rate-1",
            "input": {"kind": "rate"},
            "expect": {"must_include": ["I do not know"], "must_not_include": ["exactly"]},
        },
        {
            "id": "code-1",
            "task": "coding",
            "input": {"kind": "code"},
            "expect": {
                "test_code": "def test_even():\n    assert is_even(2), 'two is even'\n"
                "def test_odd():\n    assert not is_even(3)\n"
            },
        },
        *(
            {
                "id": f"capital-{country.lower()}",
                "task": "geo",
                "input": {"kind": "capital", "q": country, "a": capital},
                "expect": {"rubric": {"correctness": 2}},
            }
            for country, capital in CAPITALS
        ),
        {
            "id": "secret-1",
            "heldout": True,
            "input": {"kind": "cac"},
            "expect": {"must_include": ["Corporate Affairs Commission (CAC)"]},
        },
    ]
    (root / "prompts").mkdir(parents=True)
    (root / "config").mkdir()
    (root / "cases").mkdir()
    (root / "app.py").write_text(APP)
    (root / "prompts" / "support.md").write_text(RULES)
    (root / "prompts" / "old.md").write_text("an old rule\n")
    (root / "config" / "model.yaml").write_text("model: tiny\ntemperature: 0.0\n")
    (root / "cases" / "support.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    config = {
        "watch": ["prompts/**", "config/**"],
        "judge": {"kind": "openai", "model": "judge-m", "base_url": judge.openai_base_url},
        "suites": [
            {
                "name": "support",
                "cases": "cases/support.jsonl",
                "system": {"kind": "python", "target": "app:answer"},
            }
        ],
    }
    (root / "gate.yml").write_text(json.dumps(config))
    (root / ".gitignore").write_text("reports/\n__pycache__/\n")
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add(["."])
    repo.index.commit("base")
    return repo


def pr(root: Path) -> None:
    """The PR, uncommitted: a shorter prompt, a warmer model, one prompt file gone, one new."""
    (root / "prompts" / "support.md").write_text("# Support rules\n- Be brief.\n")
    (root / "config" / "model.yaml").write_text("model: tiny\ntemperature: 0.7\n")
    (root / "prompts" / "old.md").unlink()
    (root / "prompts" / "new.md").write_text("a ```` new rule @octocat\n")


def section(markdown: str, title: str) -> str:
    start = markdown.index(title)
    end = markdown.find("\n### ", start + 1)
    return markdown[start : end if end > 0 else len(markdown)]


def test_the_comment_explains_every_regression(tmp_path: Path, judge: ModelServer) -> None:
    root = tmp_path / "repo"
    build(root, judge).close()
    pr(root)
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = gate_here("check", "--base", "main", "--format", "markdown", cwd=root, env=env)
    assert done.code == 1, done.err
    markdown = done.out
    # each deciding case is explained once, where it is listed (blocking cases, regressions)
    start = min(markdown.find(t) for t in ("### 🛑", "### 📉") if t in markdown)
    explained = markdown[start : markdown.index("🧾 What the PR changed in the system")]

    # a keyword lost: the base's sentence with the phrase in bold, the diff of both answers
    assert "the required phrase <code>CAC</code> is **missing** on head" in explained
    assert "<b>CAC" in explained
    assert "- Register the company with the Corporate Affairs Commission (CAC) first." in explained
    assert "+ Register the company first." in explained
    # a refusal replaced by a confident invented answer: both checks named, both sides shown
    assert "the forbidden phrase <code>exactly</code> **appeared** on head" in explained
    assert "- I do not know tomorrow" in explained
    assert "+ Tomorrow's rate will be exactly 1,532.40 naira per dollar" in explained
    # a code case whose assertion now fails: the first failing test, the changed line
    assert "first failing assertion on head: <code>test\\_even</code>" in explained
    assert "two is even" in explained
    assert "-     return n % 2 == 0" in explained and "+     return n % 2 != 0" in explained
    # the judged regression: the judge's scores on both sides and its notes
    france = explained[explained.index("capital\\-france") :]
    assert "the judge scored <code>correctness</code> **0/2** (minimum 2) on head" in france
    assert "| <code>correctness</code> | 2 | 2/2 | 0/2 ❌ |" in france
    assert "base: names the right capital" in france
    # the held-out regression shows its id and verdict only
    assert "secret\\-1" in markdown
    held_out = next(line for line in explained.splitlines() if "secret\\-1" in line)
    assert held_out.startswith("| ") and "held out" in held_out  # a table row, id and verdict

    # rubric scores compared over the four cases judged on both sides
    rubric = markdown[markdown.index("⚖️ Rubric scores") :]
    row = next(line for line in rubric.splitlines() if line.startswith("| <code>correctness"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:6] == ["4", "2.00", "1.50", "−0.50", "1 ↓ · 0 ↑"]
    assert cells[6] == "1.000"  # one case of four moved: no evidence of a change

    # what the PR changed in the system: modified, added and removed files, with their diffs
    system = markdown[markdown.index("🧾 What the PR changed in the system") :]
    system = system[: system.index("</details>")]
    assert "<code>prompts/support.md</code> · modified" in system
    assert "-- Name the CAC when asked about registration." in system
    assert "+- Be brief." in system
    assert "<code>config/model.yaml</code> · modified · +1 −1" in system
    assert "-temperature: 0.0" in system and "+temperature: 0.7" in system
    assert "<code>prompts/new.md</code> · added · +1 −0" in system
    assert "+a ```` new rule @octocat" in system
    assert "`````diff" in system  # the fence outgrows the file's backtick run
    assert "<code>prompts/old.md</code> · removed · +0 −1" in system

    # GitHub's engine: no live HTML from outputs, notes or files; nobody pinged; blocks balanced
    page = github_html(markdown)
    tags = structure(markdown).tags
    assert tags["details"] == markdown.count("<details")
    assert not LIVE_MENTION.search(" ".join(structure(markdown).scanned_text))
    assert "<b>sure</b>" not in page
    assert page.count('<pre lang="diff">') >= 5

    # the reports keep the full detail: the comparison's JSON holds the base output too
    compared = gate_here(
        "compare",
        ".eval-gate/reports/support/base.jsonl",
        ".eval-gate/reports/support/head.jsonl",
        "--format",
        "json",
        cwd=root,
    )
    comparison = Comparison.model_validate_json(compared.out)
    cac_base = comparison.cases["cac-1"].base
    assert cac_base is not None and cac_base.output is not None
    assert cac_base.output.startswith("Register the company with")
    secret_base = comparison.cases["secret-1"].base
    assert secret_base is not None and secret_base.output is None  # held out: outcomes only
    assert comparison.rubric is not None and comparison.rubric.dimensions[0].n == 4

    # the terminal shows the same, readable: diff lines indented, no fences, no HTML
    text = gate_here(
        "compare",
        ".eval-gate/reports/support/base.jsonl",
        ".eval-gate/reports/support/head.jsonl",
        "--format",
        "text",
        cwd=root,
    )
    assert text.code == 1
    assert (
        "    - Register the company with the Corporate Affairs Commission (CAC) first." in text.out
    )
    assert "    + Register the company first." in text.out
    assert "```diff" not in text.out and "<code>" not in text.out and "\x1b" not in text.out
    assert "the required phrase CAC is missing on head" in text.out
    check_text = gate_here("check", "--base", "main", "--format", "text", cwd=root, env=env)
    assert check_text.code == 1
    assert "▸ 🧾 What the PR changed in the system (4 files)" in check_text.out
    assert "    +temperature: 0.7" in check_text.out
    assert "    + Tomorrow's rate will be exactly" in check_text.out


def test_system_diff_between_commits_reads_git(tmp_path: Path) -> None:
    repo = git.Repo.init(tmp_path, initial_branch="main")
    (tmp_path / "prompt.md").write_text("one\ntwo\nthree\n")
    (tmp_path / "logo.bin").write_bytes(b"\x00\x01binary")
    repo.index.add(["prompt.md", "logo.bin"])
    base = repo.index.commit("base").hexsha
    (tmp_path / "prompt.md").write_text("one\n2\nthree\n")
    (tmp_path / "logo.bin").write_bytes(b"\x00\x02binary")
    repo.index.add(["prompt.md", "logo.bin"])
    head = repo.index.commit("head").hexsha
    (tmp_path / "prompt.md").write_text("uncommitted\n")  # the commit is read, not the tree
    handle = GitRepo(tmp_path)
    try:
        changed = file_diff(handle, base, head, "prompt.md", "modified")
        glob = file_diff(handle, base, head, "*.md", "added")  # a file name, not a pathspec
        binary = file_diff(handle, base, head, "logo.bin", "modified")
        outside = file_diff(handle, base, head, "../etc/passwd", "modified")
    finally:
        handle.close()
    assert changed.diff.splitlines() == ["@@ -1,3 +1,3 @@", " one", "-two", "+2", " three"]
    assert (changed.added, changed.removed, changed.diff_lines) == (1, 1, 5)
    assert binary.binary and not binary.diff
    assert not glob.diff and "two" not in (glob.note or "")
    assert outside.note and not outside.diff


def test_a_watched_case_file_is_listed_without_its_diff(tmp_path: Path) -> None:
    """A `watch` glob that covers the cases hashes them, but a case file may hold held-out
    cases: its diff would show their input and expectations."""
    root = tmp_path / "repo"
    (root / "app").mkdir(parents=True)
    (root / "app" / "bot.py").write_text("def answer(q):\n    return 'hello'\n")
    secret = {"id": "s", "heldout": True, "input": {"q": "x"}, "expect": {"min_chars": 1}}
    (root / "app" / "cases.jsonl").write_text(json.dumps(secret) + "\n")
    config = {
        "watch": ["app/**"],
        "cases": "app/cases.jsonl",
        "system": {"kind": "python", "target": "app.bot:answer"},
    }
    (root / "gate.yml").write_text(json.dumps(config))
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add(["."])
    repo.index.commit("base")
    repo.close()
    (root / "app" / "bot.py").write_text("def answer(q):\n    return 'hello there'\n")
    secret["expect"] = {"must_not_include": ["TOPSECRET-PHRASE"]}
    (root / "app" / "cases.jsonl").write_text(json.dumps(secret) + "\n")
    env = {"GATE_CACHE_DIR": str(tmp_path / "cache")}
    done = gate_here("check", "--base", "main", "--format", "markdown", cwd=root, env=env)
    assert done.code == 0, done.err
    system = done.out[done.out.index("🧾 What the PR changed in the system") :]
    assert "+    return 'hello there'" in system  # the code's diff is shown
    assert "<code>app/cases.jsonl</code> · modified" in system
    assert "no diff shown \\(it may hold held\\-out cases\\)" in system
    assert "TOPSECRET" not in done.out


def test_a_file_only_the_base_read_is_no_longer_read_not_removed(
    tmp_path: Path, judge: ModelServer
) -> None:
    """A PR that points the model config's system prompt at another file, both on the base:
    neither file changed, the PR changed which one the run reads. "removed" with "git shows no
    difference" said the opposite of what happened."""
    root = tmp_path / "repo"
    system = {"kind": "openai", "model_config": "config/model.yaml", "prompt": "prompts/q.txt"}
    files = {
        "prompts/q.txt": "{{ q }}\n",
        "prompts/terse.txt": "Be terse.\n",
        "prompts/kind.txt": "Answer in UPPERCASE.\n",
        "config/model.yaml": "model: m\nsystem: prompts/terse.txt\n",
        "cases.jsonl": json.dumps(
            {"id": "a", "input": {"q": "hi"}, "expect": {"contains": ["hi"]}}
        ),
        "gate.yml": json.dumps({"cases": "cases.jsonl", "system": system}),
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    repo = git.Repo.init(root, initial_branch="main")
    repo.index.add(list(files))
    repo.index.commit("base")
    repo.git.checkout("-q", "-b", "pr")
    (root / "config/model.yaml").write_text("model: m\nsystem: prompts/kind.txt\n")
    env = {
        "GATE_CACHE_DIR": str(tmp_path / "cache"),
        "OPENAI_BASE_URL": judge.openai_base_url,
        "OPENAI_API_KEY": "sk-test",
    }
    for head in (None, "committed"):
        if head:
            repo.index.add(["config/model.yaml"])
            repo.index.commit("head")
        done = gate_here("check", "--base", "main", "--format", "markdown", cwd=root, env=env)
        assert done.code == 1, done.err  # the head answers in upper case: `contains` fails
        system_part = done.out[done.out.index("🧾 What the PR changed in the system (3 files)") :]
        assert "<code>prompts/terse.txt</code> · no longer read · +0 −0" in system_part
        assert "unchanged: the base's run read it, the head's does not" in system_part
        assert "<code>prompts/kind.txt</code> · newly read · +0 −0" in system_part
        assert "unchanged: the head's run reads it, the base's did not" in system_part
        assert "removed" not in system_part.split("</details>")[0]
        assert "git shows no difference" not in done.out
    repo.close()
