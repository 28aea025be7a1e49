"""The comment says no more than it should: real `gate check` runs on a small support-bot
repository (an openai-kind system on the model server on 127.0.0.1), read as GitHub renders
them (cmark-gfm).

- a blocking case appears once, with everything about it (not in three sections);
- the "cannot enforce" resolution note lives in Statistics, and is among the reasons only
  where one case decided the fail;
- unchanged tasks fold into one row, with no chart of equal bars;
- the prompt diff that caused the failure is open when it is short;
- the skipped comment shows its patterns as code, not as escaped backticks;
- a new suite's terminal line says it has no baseline instead of "— -> —".
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.cli import Done, gate_here
from helpers.github_html import Structure, github_html
from helpers.servers.git_http import commit_main, git
from helpers.servers.model_server import ModelServer

TASKS = ("billing", "shipping", "returns", "account", "orders")
PROMPT = "You are a support bot.\nQuestion: {{ question }}\n"
NOTE = "this suite cannot enforce a 3-point threshold"


def gate_yml(base_url: str, suites: tuple[str, ...] = ("support",)) -> str:
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/support.md.j2",
        "base_url": base_url,
    }
    config = {
        "watch": ["prompts/**", "config/**"],
        "suites": [{"name": s, "cases": "cases/faq.jsonl", "system": system} for s in suites],
    }
    return json.dumps(config, indent=2)


def repo(tmp_path: Path, server: ModelServer) -> Path:
    """Five tasks of four cases; `billing-00` is a blocker. The billing cases pass only while
    the prompt passes their `invoiceN` through."""
    root = tmp_path / "repo"
    (root / "prompts").mkdir(parents=True)
    (root / "config").mkdir()
    (root / "cases").mkdir()
    (root / "gate.yml").write_text(gate_yml(server.openai_base_url))
    (root / "config" / "model.yaml").write_text("model: gpt-4o-mini\ntemperature: 0\n")
    (root / "prompts" / "support.md.j2").write_text(PROMPT)
    rows = []
    for task in TASKS:
        for i in range(4):
            billing = task == "billing"
            rows.append(
                {
                    "id": f"{task}-{i:02}",
                    "task": task,
                    "severity": "blocker" if billing and i == 0 else "major",
                    "input": {"question": f"{task} question {i}" + (f" invoice{i}" * billing)},
                    "expect": {"must_include": [f"invoice{i}" if billing else task]},
                }
            )
    (root / "cases" / "faq.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return commit_main(root, branch="pr")


def check(root: Path, *args: str) -> Done:
    env = {"OPENAI_API_KEY": "sk-test", "GATE_CACHE_DIR": str(root.parent / "cache")}
    return gate_here("check", "--base", "main", *args, cwd=root, env=env)


def edit_prompt(root: Path, find: str, replace: str) -> None:
    prompt = PROMPT.replace(
        "{{ question }}", f'{{{{ question | replace("{find}", "{replace}") }}}}'
    )
    (root / "prompts" / "support.md.j2").write_text(prompt)
    git(root, "commit", "-qam", "prompt")


def reasons(markdown: str) -> str:
    """The reasons and notes under the verdict line: up to the first section."""
    return markdown.split("\n### ", 1)[0].split("<details>", 1)[0]


def test_a_regressing_pr_says_each_thing_once(tmp_path: Path, server: ModelServer) -> None:
    root = repo(tmp_path, server)
    edit_prompt(root, "invoice", "bill")  # the four billing cases lose their keyword
    done = check(root, "--format", "markdown")
    assert done.code == 1, done.err
    comment = done.out
    html = github_html(comment)

    # the blocking case: once, with its since-when, why and base vs head
    assert html.count("<code>billing-00</code>") == 1, comment
    entry = comment[comment.index("**<code>billing\\-00</code>**") :]
    assert entry.startswith(
        "**<code>billing\\-00</code>** · billing · blocker · 🆕 new: pass → fail"
    )
    assert "the required phrase <code>invoice0</code> is **missing** on head" in entry
    assert "Base vs head" not in comment and "| Case |" not in comment
    assert "One of them is a blocking case, shown above." in comment
    for other in ("billing\\-01", "billing\\-02", "billing\\-03"):
        assert comment.count(f"<code>{other}</code>") == 1

    # the resolution note: four regressions and a blocker decide, one case does not
    assert NOTE not in reasons(comment)
    statistics = comment[comment.index("📐 Statistics") :]
    assert f"- ℹ️ {NOTE}" in statistics.replace("\\-", "-")

    # unchanged tasks: one row, no chart of equal bars
    table = comment[comment.index("### 📊 Pass rate by task") :]
    rows = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert rows[:2] == [
        "| billing | 4 | 100.0% | 0.0% | −100.0 | 4 | 0 |",
        "| *4 tasks unchanged: account, orders, returns, shipping* | 16 | 100.0% | 100.0% "
        "| ±0.0 | 0 | 0 |",
    ]
    assert "```mermaid" not in comment and "±0.0 | 0 | 0 |\n| " not in table

    # the change that caused it: open, not collapsed
    assert "### 🧾 What the PR changed in the system (1 file)" in comment
    parsed = Structure()
    parsed.feed(html)
    diff = '+Question: {{ question | replace("invoice", "bill") }}'
    collapsed = re.findall(r"<details>.*?</details>", html, re.DOTALL)
    assert diff.replace('"', "&quot;") in html
    assert not any("replace(&quot;invoice" in part for part in collapsed)


def test_one_case_deciding_the_fail_is_said_among_the_reasons(
    tmp_path: Path, server: ModelServer
) -> None:
    root = repo(tmp_path, server)
    edit_prompt(root, "invoice1", "bill1")  # one major case: 5 points, past the threshold of 3
    done = check(root, "--format", "markdown")
    assert done.code == 1, done.err
    top = reasons(done.out).replace("\\-", "-")
    assert "the pass rate dropped 5.0 points, more than the threshold of 3" in top
    assert f"- ℹ️ {NOTE}: with 20 cases one case is 5.0 points" in top


def test_a_passing_pr_keeps_the_note_in_statistics(tmp_path: Path, server: ModelServer) -> None:
    root = repo(tmp_path, server)
    (root / "prompts" / "support.md.j2").write_text("Be kind.\n" + PROMPT)
    git(root, "commit", "-qam", "kinder")
    done = check(root, "--format", "markdown")
    assert done.code == 0, done.err
    assert NOTE not in reasons(done.out).replace("\\-", "-")
    assert NOTE in done.out.replace("\\-", "-")  # in Statistics
    assert "📊 Pass rate by task: all 5 tasks unchanged." in done.out
    assert "<details><summary><b>🧾 What the PR changed in the system" in done.out  # a pass


def test_the_skipped_comment_shows_its_patterns_as_code(
    tmp_path: Path, server: ModelServer
) -> None:
    root = repo(tmp_path, server)
    (root / "README.md").write_text("# bot\n")
    git(root, "add", "README.md")
    git(root, "commit", "-qm", "readme")
    done = check(root, "--format", "markdown")
    assert done.code == 0, done.err
    html = github_html(done.out)
    assert "<code>prompts/**</code>" in html and "<code>config/**</code>" in html
    parsed = Structure()
    parsed.feed(html)
    assert "`" not in "".join(parsed.all_text)  # no backtick shown literally
    assert "support: skipped: no watched file changed (1 changed; watching `prompts/**`" in (
        done.err
    )


def test_a_new_suites_terminal_line_says_it_has_no_baseline(
    tmp_path: Path, server: ModelServer
) -> None:
    root = repo(tmp_path, server)
    (root / "gate.yml").write_text(gate_yml(server.openai_base_url, ("support", "fresh")))
    (root / "prompts" / "support.md.j2").write_text("Be kind.\n" + PROMPT)
    git(root, "commit", "-qam", "a second suite")
    done = check(root, "--format", "markdown")
    assert done.code == 0, done.err
    assert "fresh: pass: a new suite, no baseline; head passed 20/20 (100.0%)" in done.err
    assert "—" not in next(line for line in done.err.splitlines() if line.startswith("fresh:"))
