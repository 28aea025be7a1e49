"""`gate validate`: lint config and suites, run every reference through its own checks."""

from __future__ import annotations

import json

from conftest import Project, run_gate


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
    done = run_gate("validate", cwd=project.root)
    assert done.code == 1
    assert "default: 3 cases, 2 with a reference, 1 broken" in done.out
    assert "c.jsonl:2: broken: reference fail: include:CAC:" in done.out
    assert "max_chars:10: 23 characters" in done.out
    as_json = json.loads(run_gate("validate", "--format", "json", cwd=project.root).out)
    assert [b["id"] for b in as_json["suites"][0]["broken"]] == ["broken"]


def test_validate_passes_a_clean_suite_and_rejects_bad_input(project: Project) -> None:
    project.cases("c.jsonl", [{"id": "a", "expect": {"regex": ["^ok$"]}, "reference": "ok"}])
    project.config({"cases": "c.jsonl", "system": {"kind": "replay", "file": "r.jsonl"}})
    done = run_gate("validate", cwd=project.root)
    assert done.code == 0 and done.out.strip().endswith("ok")
    project.cases("c.jsonl", [{"id": "a", "expect": {"regex": ["(bad"]}}])
    done = run_gate("validate", cwd=project.root)
    assert done.code == 2 and "c.jsonl:1: key `expect.regex`: invalid regex '(bad'" in done.err
