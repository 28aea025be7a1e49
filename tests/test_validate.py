"""`gate validate`: lint config and suites, run every reference through its own checks."""

from __future__ import annotations

import json

from helpers.cli import Project, gate_here, run_gate


def test_validate_lists_cases_whose_reference_fails(project: Project) -> None:
    project.cases(
        "c.jsonl",
        [
            {
                "id": "good",
                "expect": {"must_include": ["CAC"]},
                "reference": "Register with the CAC.",
            },
            {
                "id": "broken",
                "expect": {"must_include": ["CAC"], "max_chars": 10},
                "reference": "No registry named here.",
            },
            {"id": "no-ref", "expect": {"must_include": ["x"]}},
        ],
    )
    project.config({"cases": "c.jsonl", "system": {"kind": "replay", "file": "r.jsonl"}})
    project.write("r.jsonl", "")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 1
    assert "default: 3 cases, 2 with a reference, 1 broken" in done.out
    assert "c.jsonl:2: broken: reference fail: include:CAC:" in done.out
    assert "max_chars:10: 23 characters" in done.out
    as_json = json.loads(gate_here("validate", "--format", "json", cwd=project.root).out)
    assert [b["id"] for b in as_json["suites"][0]["broken"]] == ["broken"]


def test_validate_passes_a_clean_suite_and_rejects_bad_input(project: Project) -> None:
    project.cases("c.jsonl", [{"id": "a", "expect": {"regex": ["^ok$"]}, "reference": "ok"}])
    project.config({"cases": "c.jsonl", "system": {"kind": "replay", "file": "r.jsonl"}})
    project.write("r.jsonl", "")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 0 and done.out.strip().endswith("ok")
    project.cases("c.jsonl", [{"id": "a", "expect": {"regex": ["(bad"]}}])
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2 and "c.jsonl:1: key `expect.regex`: invalid regex '(bad'" in done.err


def line_of(project: Project, needle: str) -> int:
    lines = (project.root / "gate.yml").read_text().splitlines()
    return next(number for number, text in enumerate(lines, 1) if needle in text)


def chat_suite(project: Project, prompt: str, **system: object) -> None:
    project.cases(
        "c.jsonl",
        [
            {"id": "a", "input": {"question": "hi"}, "expect": {"must_include": ["x"]}},
            {"id": "b", "input": {"other": "no question"}, "expect": {"must_include": ["x"]}},
        ],
    )
    project.write("config/model.yaml", "model: gpt-4o\n")
    project.write("prompt.j2", prompt)
    project.config(
        {
            "suites": [
                {
                    "name": "chat",
                    "cases": "c.jsonl",
                    "system": {
                        "kind": "openai",
                        "model_config": "config/model.yaml",
                        "prompt": "prompt.j2",
                        **system,
                    },
                }
            ]
        }
    )


def test_validate_finds_a_prompt_that_does_not_render_for_a_case(project: Project) -> None:
    chat_suite(project, "Q: {{ question }}\n")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2, done.err
    assert "c.jsonl:2: key `input`: case 'b': the prompt does not render" in done.err
    assert "'question' is undefined" in done.err and "c.jsonl:1" not in done.err
    assert "Traceback" not in done.err


def test_validate_finds_a_template_syntax_error(project: Project) -> None:
    chat_suite(project, "line one\nQ: {{ question \n")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2 and "prompt.j2:2: template error:" in done.err, done.err


def test_validate_finds_an_include_outside_and_a_broken_comment_template(
    project: Project,
) -> None:
    chat_suite(project, 'Q: {{ question }}\n{% include "../secrets.md" %}\n')
    config = (project.root / "gate.yml").read_text()
    project.write("gate.yml", config + "templates: tpl\n")
    project.write("tpl/comment.md.j2", "ok\n{% endblock %}\n")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2, done.err
    assert "prompt.j2:2: cannot load '../secrets.md': it is outside the checkout" in done.err
    assert "tpl/comment.md.j2:2: template error: Encountered unknown tag 'endblock'" in done.err
    assert "Traceback" not in done.err


def test_validate_names_gate_yml_line_and_suite_of_a_missing_model_config(
    project: Project,
) -> None:
    chat_suite(project, "{{ question }}\n", model_config="config/claude.yaml")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2
    line = line_of(project, "claude.yaml")
    assert f"gate.yml:{line}: key `system.model_config`: suite 'chat': file " in done.err
    assert "'config/claude.yaml' not found" in done.err
    run = run_gate("run", "-q", cwd=project.root)  # `gate run` names the same place
    assert run.code == 2 and f"gate.yml:{line}: key `system.model_config`" in run.err


def test_validate_finds_a_missing_system_prompt_file(project: Project) -> None:
    chat_suite(project, "{{ question }}\n")
    project.write("config/model.yaml", "model: gpt-4o\nsystem: prompts/missing.md\n")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2
    assert "config/model.yaml:2: key `system`: file 'prompts/missing.md' not found" in done.err


def test_validate_finds_a_pythonpath_that_is_not_a_folder(project: Project) -> None:
    project.cases("c.jsonl", [{"id": "a", "expect": {"must_include": ["x"]}}])
    project.write("app.py", "def answer(inputs):\n    return 'x'\n")
    project.write("sdk.py", "")
    project.config(
        {
            "cases": "c.jsonl",
            "system": {"kind": "python", "target": "app:answer"},
            "sandbox": {"pythonpath": ["lib", "sdk.py"]},
        }
    )
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2
    lib, sdk = line_of(project, "- lib"), line_of(project, "- sdk.py")
    assert f"gate.yml:{lib}: key `sandbox.pythonpath`: 'lib' is not a folder" in done.err
    assert f"gate.yml:{sdk}: key `sandbox.pythonpath`: 'sdk.py' is not a folder" in done.err


def test_validate_finds_a_target_that_does_not_import(project: Project) -> None:
    project.cases("c.jsonl", [{"id": "a", "expect": {"must_include": ["x"]}}])
    project.write(
        "app.py", "import not_installed_anywhere\n\ndef answer(inputs):\n    return 'x'\n"
    )
    project.config({"cases": "c.jsonl", "system": {"kind": "python", "target": "app:answer"}})
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2
    line = line_of(project, "app:answer")
    assert f"gate.yml:{line}: key `system.target`: suite 'default': target 'app:answer'" in done.err
    assert "No module named 'not_installed_anywhere'" in done.err
    project.write("app.py", "def other(inputs):\n    return 'x'\n")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 2 and "'app' has no attribute 'answer'" in done.err
    project.write("app.py", "def answer(inputs):\n    return 'x'\n")
    assert gate_here("validate", cwd=project.root).code == 0


def test_validate_warns_about_a_case_with_no_expectation(project: Project) -> None:
    project.cases(
        "c.jsonl",
        [
            {"id": "checked", "expect": {"must_include": ["x"]}},
            {"id": "open", "input": {"q": "anything"}},
            {"id": "empty-expect", "expect": {"json": False}},
        ],
    )
    project.config({"cases": "c.jsonl", "system": {"kind": "replay", "file": "r.jsonl"}})
    project.write("r.jsonl", "")
    done = gate_here("validate", cwd=project.root)
    assert done.code == 0, done.err
    warnings = [line for line in done.err.splitlines() if line.startswith("gate: warning:")]
    assert warnings == [
        "gate: warning: c.jsonl:2: case 'open' has no expectation: it passes whatever the system "
        "answers",
        "gate: warning: c.jsonl:3: case 'empty-expect' has no expectation: it passes whatever "
        "the system answers",
    ]
    assert "3 cases, 0 with a reference, 0 broken, 2 without an expectation" in done.out
    as_json = json.loads(gate_here("validate", "--format", "json", cwd=project.root).out)
    assert as_json["suites"][0]["unchecked"] == [
        {"id": "open", "where": "c.jsonl:2"},
        {"id": "empty-expect", "where": "c.jsonl:3"},
    ]
