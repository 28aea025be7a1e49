"""What the gate cannot run in a promptfoo config stops `gate validate` and `gate run` with exit
2 and one line naming the file, the line and what it is: an assertion type (and its test), a
provider, a key, a filter; never a traceback, never a check that silently passes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from helpers.cli import gate_here, run_gate

BASE = """
prompts: ["{{ q }}"]
providers: [openai:gpt-4o-mini]
"""


def project(root: Path, config: str, files: dict[str, str] | None = None) -> Path:
    (root / ".git").mkdir()
    (root / "gate.yml").write_text("suites:\n  - name: s\n    promptfoo: promptfooconfig.yaml\n")
    (root / "promptfooconfig.yaml").write_text(textwrap.dedent(config).lstrip("\n"))
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


CASES = [
    (BASE + "tests:\n  - vars: {q: x}\n    assert: [{type: similar, value: x}]\n",
     {}, "promptfooconfig.yaml:4: test 1: assertion type `similar` is not supported (the gate cannot run it)"),
    (BASE + "tests:\n  - description: len\n    assert: [{type: javascript, value: output.length < 9}]\n",
     {}, "test 1 (len): assertion type `javascript` is not supported (JavaScript does not run here"),
    (BASE + "tests:\n  - assert: [{type: not-moderation}]\n", {}, "assertion type `not-moderation` is not supported"),
    (BASE + "tests:\n  - assert: [{type: contains, value: x, transform: output.trim()}]\n",
     {}, "test 1: `transform` 'output.trim()' is JavaScript, which does not run here: write it as a Python function `get_transform(output, context)` and name its file (`transform: file://transforms.py`)"),
    (BASE + "tests:\n  - assert: [{type: contains, value: x, transform: 'file://t.js'}]\n",
     {}, "`transform` 'file://t.js' is JavaScript, which does not run here"),
    (BASE + "tests:\n  - assert: [{type: contains, value: x, transform: 'file://nope.py:clean'}]\n",
     {}, "the module of 'nope:clean' is in neither sandbox.pythonpath nor the checkout"),
    (BASE + "tests:\n  - assert: [{type: cost}]\n", {}, "a `cost` assertion needs a `threshold`"),
    (BASE + "tests:\n  - assert: [{type: llm-rubric, value: polite}]\n",
     {}, "has an `llm-rubric` assertion but no grader"),
    (BASE + "tests:\n  - asserts: []\n", {}, "promptfooconfig.yaml:4: key `asserts`: unknown key (did you mean `assert`?)"),
    (BASE + "tests:\n  - options: {transform: output.trim()}\n", {}, "`options.transform` 'output.trim()' is JavaScript, which does not run here"),
    (BASE + "tests:\n  - provider: openai:gpt-4o\n", {}, "`provider` (a provider of its own for one test) is not supported"),
    ("prompts: [hi]\nproviders: [bedrock:anthropic.claude-v2]\n", {},
     "provider 'bedrock:anthropic.claude-v2' is not one the gate runs (it runs openai:<model>, openai:chat:<model> or anthropic:messages:<model>)"),
    (BASE + "scenarios:\n  - config: {vars: {q: x}}\n", {}, "promptfooconfig.yaml:4: a scenario's `config` must be a list"),
    (BASE + "scenarios:\n  - config: []\n    test: []\n", {}, "promptfooconfig.yaml:5: key `test`: unknown key of a scenario (it takes config, description, tests)"),
    (BASE + "scenarios:\n  - config: [{$values: file://none.yaml}]\n", {}, "file 'none.yaml' not found"),
    (BASE + "evaluateOptions: {repeat: 3}\n", {}, "promptfooconfig.yaml:3: key `evaluateOptions.repeat`: not supported here: use gate.yml's `repeats`"),
    (BASE + "commandLineOptions:\n  filterFirstN: 5\n", {}, "promptfooconfig.yaml:4: key `commandLineOptions.filterFirstN`: not supported here: the gate runs every test"),
    (BASE + "commandLineOptions: {grader: openai:gpt-4o}\n", {}, "key `commandLineOptions.grader`: not supported here: name the grader in `defaultTest.options.provider`"),
    (BASE + "nunjucksFilters: {shout: shout.js}\n", {}, "promptfooconfig.yaml:3: key `nunjucksFilters`: not supported here: custom nunjucks filters are JavaScript"),
    (BASE + "extensions: [file://hooks.py:extension_hook]\n", {}, "key `extensions`: not supported here: extension hooks"),
    (BASE + "redteam: {plugins: [pii]}\n", {}, "key `redteam`: not supported here: red-teaming generates attacks"),
    (BASE + "vars: {q: x}\n", {}, "key `vars`: not supported here: promptfoo does nothing with a top-level `vars`: shared variables go in `defaultTest.vars`"),
    (BASE + "metadata: {severity: urgent}\ntests: [{vars: {q: x}}]\n", {}, "`metadata.severity` 'urgent' is not one of"),
    (BASE + "promptz: []\n", {}, "key `promptz`: unknown key (did you mean `prompts`?)"),
    (BASE + "tests:\n  - vars: {q: file://missing.txt}\n", {}, "file 'missing.txt' not found"),
    (BASE + "tests:\n  - assert: [{$ref: 'other.yaml#/a'}]\n", {}, "only references into the config itself work"),
    (BASE + "tests:\n  - assert: [{type: regex, value: '(?<=a+)b'}]\n", {}, "`regex` '(?<=a+)b' does not compile"),
    (BASE + "tests:\n  - assert: [{type: python, value: file://checks/nope.py}]\n",
     {}, "the module of 'checks.nope:get_assert' is in neither sandbox.pythonpath nor the checkout"),
    ("prompts: [file://prompts/p.txt]\nproviders: [openai:gpt-4o-mini]\ntests: [{vars: {q: x}}]\n",
     {"prompts/p.txt": "Hello\n{% if q %}{{ q | shout }}{% endif %}\n"},
     "prompts/p.txt:2: unknown filter `shout`: neither jinja2 nor nunjucks has it"),
    ("prompts: [file://p.py]\nproviders: [openai:gpt-4o-mini]\n", {"p.py": "x"},
     "prompt 'file://p.py': prompt functions do not run here"),
]  # fmt: skip


@pytest.mark.parametrize(("config", "files", "message"), CASES)
def test_what_cannot_run_is_exit_2_naming_it(
    tmp_path: Path, config: str, files: dict[str, str], message: str
) -> None:
    root = project(tmp_path, config, files)
    for command in (["validate"], ["run", "--out", "reports"]):
        done = gate_here(*command, cwd=root)  # refused before any system starts
        assert done.code == 2, (command, done.out, done.err)
        assert "Traceback" not in done.err
        assert message in done.err, done.err
        assert len(done.err.strip().splitlines()) == 1, done.err


def test_a_missing_promptfoo_config_names_gate_yml_and_its_line(tmp_path: Path) -> None:
    (tmp_path / "gate.yml").write_text(
        "threshold: 3\nsuites:\n  - name: s\n    promptfoo: nope.yaml\n"
    )
    done = run_gate("validate", cwd=tmp_path)
    assert done.code == 2 and "Traceback" not in done.err
    assert "gate.yml:4: key `promptfoo`: promptfoo config 'nope.yaml' not found" in done.err
