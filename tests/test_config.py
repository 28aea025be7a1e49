"""gate.yml: defaults, shorthand and errors that name file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from gate.errors import InputError
from gate.inputs.config import load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gate.yml"
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as info:
        load_config(write(tmp_path, text))
    return info.value


def test_smallest_config_is_cases_and_system(tmp_path: Path) -> None:
    loaded = load_config(write(tmp_path, "cases: c.jsonl\nsystem: {kind: python, target: 'a:b'}\n"))
    config = loaded.config
    assert [s.name for s in config.suites] == ["default"]
    assert config.threshold == 3 and config.block_severities == ["blocker"]
    assert config.repeats == 1 and config.alpha == 0.05 and config.sandbox.timeout_s == 5


def test_full_spec_example_loads(tmp_path: Path) -> None:
    text = """
watch: ["prompts/**", "config/model.yaml"]
threshold: 3
block_severities: [blocker]
require_significance: false
alpha: 0.05
repeats: 1
concurrency: 8
suites:
  - name: support
    cases: cases/faq.jsonl
    system:
      kind: openai
      model_config: config/model.yaml
      prompt: prompts/support.md.j2
sandbox: {timeout_s: 5, memory_mb: 512}
judge: {kind: openai, model: gpt-4o-mini}
"""
    config = load_config(write(tmp_path, text)).config
    assert config.suites[0].system.kind == "openai"
    assert config.judge is not None and config.judge.model == "gpt-4o-mini"


def test_unknown_key_names_line_and_suggests(tmp_path: Path) -> None:
    err = error_of(
        tmp_path, "cases: c.jsonl\nsystem: {kind: python, target: 'a:b'}\nthreshhold: 2\n"
    )
    assert err.line == 3 and err.key == "threshhold"
    assert "did you mean `threshold`" in str(err)
    assert str(err).startswith(f"{tmp_path / 'gate.yml'}:3: key `threshhold`")


def test_wrong_type_names_nested_key_and_line(tmp_path: Path) -> None:
    text = "suites:\n  - name: a\n    cases: c.jsonl\n    system:\n      kind: python\n      target: 'a:b'\nrepeats: many\n"
    err = error_of(tmp_path, text)
    assert err.key == "repeats" and err.line == 7 and "many" in str(err)


def test_unknown_system_kind(tmp_path: Path) -> None:
    text = "suites:\n  - cases: c.jsonl\n    system:\n      kind: gpt\n"
    err = error_of(tmp_path, text)
    assert err.key == "suites[0].system" and err.line == 4
    assert "openai" in str(err)


def test_missing_key_inside_system(tmp_path: Path) -> None:
    text = "suites:\n  - cases: c.jsonl\n    system:\n      kind: openai\n      prompt: p.j2\n"
    err = error_of(tmp_path, text)
    assert err.key == "suites[0].system.model_config" and "missing" in str(err)


def test_malformed_yaml_names_line(tmp_path: Path) -> None:
    err = error_of(tmp_path, "cases: [a\nsystem: {kind: python}\n")
    assert err.line is not None and "malformed YAML" in str(err)


def test_missing_and_empty_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="config file not found"):
        load_config(tmp_path / "nope.yml")
    assert "empty" in str(error_of(tmp_path, "# nothing\n"))


def test_bad_target_and_duplicate_suites(tmp_path: Path) -> None:
    err = error_of(tmp_path, "cases: c.jsonl\nsystem: {kind: python, target: 'nofunction'}\n")
    assert "module:function" in str(err)
    text = (
        "suites:\n  - {name: a, cases: c.jsonl, system: {kind: replay, file: r.jsonl}}\n"
        "  - {name: a, cases: d.jsonl, system: {kind: replay, file: r.jsonl}}\n"
    )
    assert "repeated: a" in str(error_of(tmp_path, text))


def test_a_misspelt_required_key_is_reported_as_the_typo(tmp_path: Path) -> None:
    text = "suites:\n  - name: a\n    cases: c.jsonl\n    sytem: {kind: python, target: 'a:b'}\n"
    err = error_of(tmp_path, text)
    assert (err.line, err.key) == (4, "suites[0].sytem")
    assert "unknown key (did you mean `system`?)" in str(err)
