"""promptfoo configs, written in promptfoo's documented syntax, run by `gate run` against the
real model server: each assertion type on passing and failing answers, defaultTest, `$ref`
and `assertionTemplates`, env, vars and tests from files (YAML, CSV, JSONL, JSON, globs),
scenarios, Python transforms, the prompt × provider matrix and its filters, YAML read as
promptfoo reads it, tool calls on both vendors, and llm-rubric through the judge. Each test says what it should come to (`metadata.expect`); the
same configs are the parity benchmark's (benchmarks/promptfoo_parity.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.promptfoo_suites import SUITES, run_suites, say_model, write_suite
from helpers.servers.model_server import ModelServer

from gate.inputs.config import load_config
from gate.run.cases import checked_cases as suite_cases

MODEL_SERVER = {"responder": say_model, "latency_s": 0.02}  # `server`'s options (conftest.py)


def project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    root.mkdir()
    (root / ".git").mkdir()  # the checkout's root
    write_suite(root, name)
    return root


def expected(root: Path) -> dict[str, dict[str, str]]:
    loaded = load_config(root / "gate.yml")
    return {
        suite.name: {c.id: c.metadata["expect"] for c in suite_cases(loaded, suite)}
        for suite in loaded.config.suites
    }


@pytest.mark.parametrize("name", sorted(SUITES))
def test_each_case_comes_to_what_its_test_expects(
    tmp_path: Path, server: ModelServer, name: str
) -> None:
    root = project(tmp_path, name)
    got = run_suites(root, server)
    want = expected(root)
    assert set(got) == set(want)
    for suite, cases in want.items():
        assert set(got[suite]) == set(cases), suite
        wrong = {
            i: (got[suite][i]["status"], got[suite][i]["checks"], got[suite][i]["error"])
            for i, verdict in cases.items()
            if (got[suite][i]["status"] == "pass") != (verdict == "pass")
        }
        assert not wrong, (suite, wrong)


def test_results_name_assertions_scores_metrics_and_thresholds(
    tmp_path: Path, server: ModelServer
) -> None:
    got = run_suites(project(tmp_path, "assertions"), server)["assertions"]
    weighted = got["weights reach the threshold → pass"]["checks"]
    assert [(c["name"], c["passed"], c["fraction"], c.get("scored")) for c in weighted] == [
        ("contains:Paris", True, 1.0, True),
        ("contains:Lyon", False, 0.0, True),
        ("threshold:0.6", True, 0.666667, None),
    ]
    metrics = got["metrics → pass"]["checks"]
    assert {c["metric"] for c in metrics} == {"geo"}
    scored = got["python file function and threshold → fail"]["checks"][0]
    assert (scored["passed"], scored["fraction"]) == (False, 0.5)
    assert "less than threshold 0.9" in scored["detail"]
    failed = got["contains is case-sensitive → fail"]["checks"][0]
    assert failed["detail"] == 'Expected output to contain "Paris"'
    cost = got["cost → fail"]["checks"][0]
    assert cost["name"] == "cost:1e-07" and "greater than threshold" in cost["detail"]


def test_the_matrix_is_one_suite_per_prompt_and_provider(
    tmp_path: Path, server: ModelServer
) -> None:
    root = project(tmp_path, "matrix")
    names = [s.name for s in load_config(root / "gate.yml").config.suites]
    assert names == [
        "matrix/prompts/ask.txt#1/gpt",
        "matrix/prompts/ask.txt#2/gpt",
        "matrix/shout/gpt",
        "matrix/shout/claude",  # claude runs the shout prompt only (its `prompts:`)
    ]
    got = run_suites(root, server)
    assert set(got["matrix/shout/claude"]) == {
        "every pair → pass", "the shout prompt only → pass", "claude only → fail"
    }  # fmt: skip
    assert set(got["matrix/prompts/ask.txt#1/gpt"]) == {"every pair → pass"}
    requests = [e.body for e in server.log if e.path == "/v1/messages"]
    assert requests and all(r["max_tokens"] == 1024 and r["temperature"] == 0 for r in requests)


def test_tools_reach_each_vendor_and_the_answer_is_promptfoos(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reset_counts()
    run_suites(project(tmp_path, "tools"), server)
    openai = [e.body for e in server.log if e.path == "/v1/chat/completions"]
    anthropic = [e.body for e in server.log if e.path == "/v1/messages"]
    assert openai[0]["tools"][0]["function"]["name"] == "get_weather"
    assert openai[0]["tool_choice"] == "auto"
    assert anthropic[0]["tools"][0]["input_schema"]["required"] == ["location"]


def test_llm_rubric_asks_the_grader_with_promptfoos_prompt(
    tmp_path: Path, server: ModelServer
) -> None:
    server.reset_counts()
    got = run_suites(project(tmp_path, "rubric"), server)["rubric"]
    graded = [e.body for e in server.log if "<Rubric>" in json.dumps(e.body)]
    assert len(graded) == 5 and all(b["model"] == "gpt-4o-mini" for b in graded)
    default = next(
        b for b in graded if "mentions Paris\\n" in json.dumps(b) and len(b["messages"]) == 2
    )
    assert default["messages"][0]["content"].startswith("You are grading output according to")
    custom = next(b for b in graded if b["messages"][0]["content"] == "Grade the answer.")
    assert "Paris and Lyon" in custom["messages"][1]["content"]
    weighted = got["llm-rubric's score in a weighted threshold → pass"]["checks"]
    assert [(c["passed"], c["fraction"]) for c in weighted] == [(False, 0.5), (True, 0.5)]
    assert got["llm-rubric → pass"]["judge"]["calls"] == 1


def test_a_providers_own_endpoint_and_key_variable(tmp_path: Path) -> None:
    """`config.apiBaseUrl` (or `apiHost`) and `config.apiKeyEnvar` say where a provider's calls
    go and which variable holds its key; the key reaches the server and nothing else."""
    import subprocess
    import sys

    from helpers.promptfoo_suites import gate_env

    with ModelServer(api_key="sk-own", responder=say_model) as own:
        root = tmp_path / "own"
        root.mkdir()
        (root / ".git").mkdir()
        (root / "gate.yml").write_text("promptfoo: promptfooconfig.yaml\n")
        provider = {
            "id": "openai:chat:gpt-4o-mini",
            "config": {"apiBaseUrl": own.openai_base_url, "apiKeyEnvar": "MY_KEY",
                       "headers": {"X-Team": "web"}},
        }  # fmt: skip
        config = {
            "prompts": ["SAY: {{ a }}"],
            "providers": [provider],
            "tests": [{"vars": {"a": "ok"}, "assert": [{"type": "equals", "value": "ok"}]}],
        }
        (root / "promptfooconfig.yaml").write_text(json.dumps(config))
        env = {
            **gate_env(own, root),
            "MY_KEY": "sk-own",
            "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        }
        done = subprocess.run(
            [sys.executable, "-m", "gate", "run", "--out", "reports", "--no-cache"],
            cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "1/1 passed" in done.stderr
        (entry,) = own.log
        assert (
            entry.headers["authorization"] == "Bearer sk-own" and entry.headers["x-team"] == "web"
        )
        report = (root / "reports" / "run.jsonl").read_text()
        assert "sk-own" not in report
