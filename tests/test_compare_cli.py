"""`gate compare` as a user runs it: real reports from `gate run`, real subprocesses for the
end-to-end path and the exit codes; the rest call the command in-process (`gate_here`)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.cli import Project, gate_here, run_gate
from helpers.reports import case, write_report

APP_BASE = """
def answer(inputs):
    return {"text": "Register with the CAC first. " + inputs["question"]}
"""
# The head's prompt change drops the CAC mention, and breaks on one question.
APP_HEAD = """
def answer(inputs):
    if "crash" in inputs["question"]:
        raise RuntimeError("provider said 503")
    return {"text": "Please register first. " + inputs["question"]}
"""


def two_sides(project: Project, rows: list[dict], **config) -> tuple[Path, Path]:
    """Run the same suite against a base and a head checkout with `gate run`."""
    project.write("base/app.py", APP_BASE)
    project.write("head/app.py", APP_HEAD)
    project.cases("cases/faq.jsonl", rows)
    project.config(
        {
            "suites": [
                {
                    "name": "support",
                    "cases": "cases/faq.jsonl",
                    "system": {"kind": "python", "target": "app:answer"},
                }
            ],
            **config,
        }
    )
    for side in ("base", "head"):
        done = run_gate(
            "run", "--root", side, "--label", side, "--out", "reports", "-q", cwd=project.root
        )
        assert done.code == 0, done.err
    return project.root / "reports/base.jsonl", project.root / "reports/head.jsonl"


def faq(i: int, **extra) -> dict:
    return {
        "id": f"faq-{i:03d}",
        "task": "faq",
        "input": {"question": f"question {i}?"},
        "expect": {"must_include": ["CAC"]} if i < 3 else {"max_chars": 500},
        **extra,
    }


def test_end_to_end_from_gate_run_to_a_failing_verdict(project: Project) -> None:
    rows = [faq(i) for i in range(40)]
    rows[0]["severity"] = "blocker"
    base, head = two_sides(project, rows)
    done = run_gate("compare", str(base), str(head), "--format", "json", cwd=project.root)
    assert done.code == 1, done.err
    data = json.loads(done.out)
    assert data["verdict"] == "fail"
    assert data["regressions"] == ["faq-000", "faq-001", "faq-002"]
    assert data["blocker_failures"] == ["faq-000"]
    assert (data["base_pass_rate"], data["head_pass_rate"]) == (100.0, 92.5)
    assert data["delta_points"] == -7.5 and data["p_value"] == 0.25
    assert data["cases"]["faq-000"]["head"]["failed_checks"][0]["name"] == "include:CAC"

    comment = run_gate("compare", str(base), str(head), cwd=project.root)
    assert comment.code == 1
    assert comment.out.startswith("<!-- eval-gate:support -->\n❌ **Eval Gate: fail** (support)")
    assert "pass rate 100.0% → 92.5% (−7.5 pts, threshold 3) · 3 regressions · 1 blocker" in (
        comment.out
    )
    assert "include:CAC" in comment.out


def test_exit_codes_pass_fail_error(project: Project, tmp_path: Path) -> None:
    rows = [case(f"c{i}") for i in range(20)]
    base = write_report(tmp_path, "base", rows)
    same = write_report(tmp_path, "same", rows)
    worse = write_report(tmp_path, "worse", [case("c0", "fail"), *rows[1:]])
    broken = write_report(tmp_path, "broken", [case(f"c{i}", "error") for i in range(3)] + rows[3:])
    assert run_gate("compare", str(base), str(same), cwd=tmp_path).code == 0
    assert run_gate("compare", str(base), str(worse), cwd=tmp_path).code == 1
    assert run_gate("compare", str(base), str(worse), "--threshold", "5", cwd=tmp_path).code == 0
    done = run_gate("compare", str(base), str(broken), "--format", "json", cwd=tmp_path)
    assert done.code == 3 and json.loads(done.out)["verdict"] == "error"


def test_config_supplies_the_policy_and_flags_override_it(tmp_path: Path) -> None:
    rows = [case(f"c{i}") for i in range(20)]
    base = write_report(tmp_path, "base", rows)
    head = write_report(tmp_path, "head", [case("c0", "fail", severity="minor"), *rows[1:]])
    project = Project(tmp_path)
    project.config(
        {
            "cases": "x.jsonl",
            "system": {"kind": "python", "target": "a:b"},
            "threshold": 10,
            "block_severities": ["minor"],
        }
    )
    # gate.yml in the working directory is read when --config is not given
    assert gate_here("compare", str(base), str(head), cwd=tmp_path).code == 1  # minor blocks
    assert (
        gate_here(
            "compare", str(base), str(head), "--block-severities", "blocker", cwd=tmp_path
        ).code
        == 0
    )
    elsewhere = tmp_path / "sub"
    elsewhere.mkdir()
    assert gate_here("compare", str(base), str(head), cwd=elsewhere).code == 1  # -5 pts > 3
    assert (
        gate_here(
            "compare", str(base), str(head), "--config", str(tmp_path / "gate.yml"), cwd=elsewhere
        ).code
        == 1
    )


@pytest.mark.parametrize("fmt", ["markdown", "summary", "json", "junit"])
def test_out_writes_the_file_and_prints_the_verdict(tmp_path: Path, fmt: str) -> None:
    base = write_report(tmp_path, "base", [case("a"), case("b")])
    head = write_report(tmp_path, "head", [case("a", "fail"), case("b")])
    out = tmp_path / "result" / f"comparison.{fmt}"
    done = gate_here("compare", str(base), str(head), "--format", fmt, "--out", str(out))
    assert done.code == 1 and done.out == ""
    assert done.err.strip() == f"fail: {out}"
    content = out.read_text()
    if fmt == "json":
        assert json.loads(content)["regressions"] == ["a"]
    elif fmt == "junit":
        assert ET.fromstring(content.encode()).tag == "testsuites"
    else:
        assert "Eval Gate: fail" in content


def test_links_use_the_repository_and_the_report_shas(tmp_path: Path) -> None:
    base = write_report(tmp_path, "base", [case("a")], sha="1" * 40)
    head = write_report(tmp_path, "head", [case("a", "fail", line=7)], sha="2" * 40)
    done = gate_here(
        "compare",
        str(base),
        str(head),
        "--repository",
        "acme/app",
        "--run-url",
        "https://github.com/acme/app/actions/runs/9",
    )
    assert f"https://github.com/acme/app/blob/{'2' * 40}/cases/suite.jsonl#L7" in done.out
    assert "[full report](https://github.com/acme/app/actions/runs/9)" in done.out


def test_template_dir_from_the_command_line(tmp_path: Path) -> None:
    base = write_report(tmp_path, "base", [case("a")])
    head = write_report(tmp_path, "head", [case("a", "fail")])
    folder = tmp_path / "tpl"
    folder.mkdir()
    (folder / "comment.md.j2").write_text("Verdict {{ c.verdict }}\n")
    done = gate_here("compare", str(base), str(head), "--template-dir", str(folder))
    top = "❌ **Eval Gate: fail** (support) — pass rate 100.0% → 0.0% (−100.0 pts, threshold 3)"
    assert done.out == f"<!-- eval-gate:support -->\n{top} · 1 regression\n\nVerdict fail\n"


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("missing", "missing.jsonl: report not found"),
        ("not_a_report", "bad.jsonl:1: not a gate report"),
        ("bad_line", "bad.jsonl:3: key `status`: bad case line"),
        ("duplicate", "bad.jsonl:3: key `id`: duplicate case id 'a'"),
        ("bad_severity", "key `--block-severities`: unknown severity 'urgent'"),
        ("bad_threshold", "argument --threshold: invalid float value: 'lots'"),
        ("negative_threshold", "key `--threshold`: must be 0 or more"),
        ("bad_template_dir", "nowhere: key `templates`: template folder not found"),
        ("bad_config", "gate.yml"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, setup: str, expected: str) -> None:
    good = write_report(tmp_path, "good", [case("a")])
    bad = tmp_path / "bad.jsonl"
    lines = good.read_text().splitlines()
    extra: list[str] = []
    head = str(bad)
    if setup == "missing":
        head = str(tmp_path / "missing.jsonl")
    elif setup == "not_a_report":
        bad.write_text('{"id": "a"}\n')
    elif setup == "bad_line":
        row = json.loads(lines[1])
        row["status"] = "maybe"
        bad.write_text("\n".join([lines[0], lines[1], json.dumps(row)]) + "\n")
    elif setup == "duplicate":
        bad.write_text("\n".join([lines[0], lines[1], lines[1]]) + "\n")
    else:
        head = str(good)
        extra = {
            "bad_severity": ["--block-severities", "blocker,urgent"],
            "bad_threshold": ["--threshold", "lots"],
            "negative_threshold": ["--threshold", "-1"],
            "bad_template_dir": ["--template-dir", "nowhere"],
            "bad_config": [],
        }[setup]
        if setup == "bad_config":
            (tmp_path / "gate.yml").write_text("threshold: [1\n")
    done = gate_here("compare", str(good), head, *extra, cwd=tmp_path)
    assert done.code == 2, (done.out, done.err)
    assert done.out == ""
    message = done.err.strip().splitlines()[-1]
    assert expected in message
    assert "Traceback" not in done.err


def test_help_explains_the_flags() -> None:
    done = gate_here("compare", "--help")
    assert done.code == 0
    for flag in ("--threshold", "--format", "--out", "--config", "--repository", "--run-url"):
        assert flag in done.out
