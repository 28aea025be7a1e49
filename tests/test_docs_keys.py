"""The reference pages stay complete: docs/config.md names every gate.yml and model-config key,
docs/cases.md every check, the README links every page, and the examples in the pages load."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from helpers.cli import REPO

from gate.inputs.config import GateConfig
from gate.inputs.expect import EXPECT_KEYS, Expect
from gate.inputs.sourcemap import known_fields
from gate.providers.prompts import ModelSettings
from gate.report.checks import MODEL_OF

CONFIG_MD = (REPO / "docs" / "config.md").read_text()
CASES_MD = (REPO / "docs" / "cases.md").read_text()
README = (REPO / "README.md").read_text()


def fenced(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


def test_config_md_names_every_key() -> None:
    keys = known_fields(GateConfig) | known_fields(ModelSettings) | {"tools", "tool_choice"}
    missing = sorted(k for k in keys if f"`{k}`" not in CONFIG_MD)
    assert missing == []


def test_every_check_is_in_cases_md() -> None:
    """The README names the common checks and links the page that has them all."""
    missing = sorted(k for k in EXPECT_KEYS if f"`{k}`" not in CASES_MD)
    assert missing == []
    assert "](docs/cases.md)" in README


def test_reports_md_names_every_kind_of_check_result() -> None:
    text = (REPO / "docs" / "reports.md").read_text()
    assert sorted(k for k in MODEL_OF if f"`{k}`" not in text) == []


def test_the_full_config_example_is_a_valid_config() -> None:
    (example,) = [block for block in fenced(CONFIG_MD, "yaml") if "suites:" in block]
    config = GateConfig.model_validate(yaml.safe_load(example))
    assert config.repeats == "auto" and config.suites[0].cases == [
        "evals/faq.jsonl",
        "evals/sheet.csv",
    ]


def test_the_check_examples_are_valid_cases() -> None:
    (examples,) = fenced(CASES_MD, "jsonl")
    used: set[str] = set()
    for line in examples.splitlines():
        case = json.loads(line)
        Expect.model_validate(case["expect"])
        used |= set(case["expect"])
    assert used == set(EXPECT_KEYS)  # one example of every check


def test_the_pages_are_linked_from_the_readme() -> None:
    """The README is the front door: every page of docs/ is linked from it."""
    pages = sorted(f"docs/{p.name}" for p in (Path(REPO) / "docs").glob("*.md"))
    assert len(pages) >= 15
    assert [page for page in pages if f"]({page}" not in README] == []


def test_promptfoo_md_names_what_runs_and_what_does_not() -> None:
    from gate.promptfoo.inputs import keys
    from gate.promptfoo.inputs.assertions import SUPPORTED
    from gate.promptfoo.inputs.tests import NOT_RUN as TEST_KEYS
    from gate.promptfoo.inputs.tests import OPTIONS_NOT_RUN

    page = (REPO / "docs" / "promptfoo.md").read_text()
    config_keys = [*keys.KNOWN, *keys.EVALUATE_REFUSED, *keys.COMMAND_LINE_REFUSED]
    config_keys = [k for k in config_keys if not k.startswith("filter") or k == "filterRange"]
    names = [*SUPPORTED, *config_keys, *TEST_KEYS, *OPTIONS_NOT_RUN, "javascript", "assert-set"]
    missing = sorted(n for n in names if f"`{n}`" not in page and f"`options.{n}`" not in page)
    assert missing == []
