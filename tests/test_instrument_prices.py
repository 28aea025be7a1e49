"""The base's `prices` cost both sides: a PR that switches to a dearer model and lowers that
model's price in the same PR no longer defeats the cost budget; a model the base's prices do
not know is unmeasured, not free. Against the model server (real HTTP), which also shows what
the head's instrument costs: no call at all."""

from __future__ import annotations

import io
import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.flows import Shown
from helpers.flows import check as check_flow
from helpers.pr_scenarios import jsonl, make_project, visible
from helpers.servers.model_server import ChatRequest, ModelServer, echo_model

from gate.compare import findings as f
from gate.flow.pr import exit_code
from gate.render.markdown import prose
from gate.render.reasons import sentence

KEY = "sk-test-prices"
WORDS = ["CAC", "fees", "licensed", "minutes", "statement", "card", "branch", "loan", "rate", "cap"]
PRICES = {"small": {"input": 1.0, "output": 1.0}, "big": {"input": 100.0, "output": 100.0}}


MODEL_SERVER = {"api_key": KEY}  # `server`'s options (conftest.py)


def gate_yml(server: ModelServer, prices: dict[str, Any]) -> str:
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/support.md.j2",
        "base_url": server.openai_base_url,
        "api_key_env": "TEST_KEY",
    }
    suite = {"name": "support", "cases": "cases.jsonl", "system": system}
    data = {"watch": ["config/**"], "budgets": {"cost_pct": 20}, "prices": prices}
    return yaml.safe_dump({**data, "suites": [suite]}, sort_keys=False)


def files(server: ModelServer) -> dict[str, str]:
    rows = [
        {"id": f"q{i}", "input": {"q": w}, "expect": {"must_include": [w]}}
        for i, w in enumerate(WORDS)
    ]
    return {
        "gate.yml": gate_yml(server, PRICES),
        "config/model.yaml": "model: small\n",
        "prompts/support.md.j2": "Tell me about {{ q }}.\n",
        "cases.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
    }


def check(root: Path) -> list[Shown]:
    environ = {**os.environ, "TEST_KEY": KEY, "GATE_CACHE_DIR": str(root.parent / "cache")}
    return check_flow(
        root, root / "gate.yml", "main", root / "reports", stream=io.StringIO(), environ=environ
    )


def test_lowering_the_new_models_price_does_not_dodge_the_budget(
    tmp_path: Path, server: ModelServer
) -> None:
    project = make_project(tmp_path / "repo", files(server))
    cheap = {**PRICES, "big": {"input": 0.01, "output": 0.01}}
    project.write({"config/model.yaml": "model: big\n", "gate.yml": gate_yml(server, cheap)})
    server.reset_counts()
    (outcome,) = check(project.path)
    c = outcome.comparison
    assert exit_code([outcome]) == 1 and c.verdict == "fail"
    (budget,) = [x for x in c.findings if isinstance(x, f.BudgetExceeded)]
    assert budget.metric == "cost" and budget.rise_pct == pytest.approx(9900.0)
    assert c.base_usage.cost_usd and c.head_usage.cost_usd
    assert c.head_usage.cost_usd == pytest.approx(100 * c.base_usage.cost_usd)
    top = visible(outcome.markdown)
    assert "cost +9,900%" in top.splitlines()[1]  # the headline: 100 times dearer
    (prices,) = [x for x in c.findings if isinstance(x, f.PricesChanged)]
    assert prose(sentence(prices), 800) in top
    assert "big: {input: 100, output: 100} → {input: 0.01, output: 0.01}" in sentence(prices)
    (answer,) = [x for x in c.findings if isinstance(x, f.HeadInstrument)]
    assert answer.verdict == "pass"  # by its own prices the head is cheaper: what it hid
    assert prose(sentence(answer), 800) in top
    # Both sides asked each case once; judging again with the head's instrument asked nothing.
    assert server.requests == 2 * len(WORDS)
    server.reset_counts()
    check(project.path)
    assert server.requests == 0  # a rerun: every answer from the response cache


def test_a_model_the_bases_prices_do_not_know_is_unmeasured_not_free(
    tmp_path: Path, server: ModelServer
) -> None:
    project = make_project(tmp_path / "repo", files(server))
    priced = {**PRICES, "mystery": {"input": 0.0, "output": 0.0}}
    project.write({"config/model.yaml": "model: mystery\n", "gate.yml": gate_yml(server, priced)})
    (outcome,) = check(project.path)
    c = outcome.comparison
    assert c.base_usage.cost_usd and c.head_usage.cost_usd is None  # unknown, not 0
    unmeasured = [x for x in c.findings if isinstance(x, f.BudgetUnmeasured)]
    assert [x.metric for x in unmeasured] == ["cost"]
    assert prose(sentence(unmeasured[0]), 400) in visible(outcome.markdown)
    assert c.verdict == "pass"  # a note: nothing was measured to fail


RUBRIC_ANSWER = re.compile(r"<<<ANSWER (\w+)>>>\n(.*)\n<<<END OF ANSWER \1>>>", re.DOTALL)


def grading(request: ChatRequest) -> str:
    """The judge (model `judge-m`) gives full marks to any fenced answer; others echo."""
    if request.model != "judge-m":
        return echo_model(request)
    assert RUBRIC_ANSWER.search(request.user), "the judge prompt must fence the answer"
    (listed,) = re.findall(r"^Rubric dimensions: (.*)$", request.user, re.MULTILINE)
    return json.dumps({"scores": {d: {"score": 2, "reason": "fine"} for d in listed.split(", ")}})


def test_the_heads_instrument_asks_the_judge_only_what_it_changes(tmp_path: Path) -> None:
    """Re-judging with the head's instrument: no system call; the judge only for a rubric the
    PR changes (what it kept is the same request, answered by the cache)."""
    with ModelServer(api_key=KEY, responder=grading) as server:
        base = files(server)
        rows = [json.loads(line) for line in base["cases.jsonl"].splitlines()]
        rows = [{**r, "expect": {**r["expect"], "rubric": {"helpful": 1}}} for r in rows]
        judge = {"kind": "openai", "model": "judge-m", "base_url": server.openai_base_url,
                 "api_key_env": "TEST_KEY"}  # fmt: skip
        config = yaml.safe_load(base["gate.yml"]) | {"judge": judge}
        base |= {"cases.jsonl": jsonl(rows), "gate.yml": yaml.safe_dump(config)}
        project = make_project(tmp_path / "repo", base)
        project.write({"cases.jsonl": jsonl(rows[1:]), "config/model.yaml": "model: small\n\n"})
        server.reset_counts()
        (outcome,) = check(project.path)
        # the two sides ask the same (the PR's model config says the same), once each, and the
        # head's instrument asks nothing more
        models = Counter(entry.body["model"] for entry in server.log)
        assert models == {"small": len(WORDS), "judge-m": len(WORDS)}
        (answer,) = [x for x in outcome.comparison.findings if isinstance(x, f.HeadInstrument)]
        assert answer.judge_calls == answer.judge_cached == 2 * (len(WORDS) - 1)

        more = [
            {**r, "expect": {**r["expect"], "rubric": {"helpful": 1, "brief": 1}}} for r in rows
        ]
        project.write({"cases.jsonl": jsonl(more)})
        server.reset_counts()
        (outcome,) = check(project.path)
        asked = Counter(entry.body["model"] for entry in server.log)
        assert asked == {"judge-m": len(WORDS)}  # the new rubric, once per answer (the same)
        (answer,) = [x for x in outcome.comparison.findings if isinstance(x, f.HeadInstrument)]
        assert (answer.judge_calls, answer.judge_cached) == (2 * len(WORDS), len(WORDS))
        said = f"{2 * len(WORDS)} judge calls, {len(WORDS)} of them from the cache"
        assert said in sentence(answer)
