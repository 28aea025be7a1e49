"""Reruns: the response cache replays the same answers, so a rerun cannot clear a noise fail;
`gate check --no-cache` (the Action's `no-cache` input) draws fresh ones."""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.noisy_world import commit, gate
from helpers.servers.git_http import git
from helpers.servers.model_server import ChatRequest, ModelServer

from gate.github.inputs import read_inputs


@pytest.fixture
def coin_server() -> Iterator[ModelServer]:
    """A model that answers yes or no at random, afresh for every request."""
    rng, lock = random.Random(11), threading.Lock()

    def coin(request: ChatRequest) -> str:
        with lock:
            return "yes" if rng.random() < 0.5 else "no"

    with ModelServer(responder=coin) as server:
        yield server


def _repo(root: Path, server: ModelServer, **keys: object) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    system = {
        "kind": "openai",
        "model_config": "config/model.yaml",
        "prompt": "prompts/ask.j2",
        "base_url": server.openai_base_url,
        "api_key_env": "COIN_KEY",
    }
    config = {
        **keys,
        "watch": ["config/**", "prompts/**"],
        "suites": [{"name": "coin", "cases": "cases.jsonl", "system": system}],
    }
    (root / "gate.yml").write_text(json.dumps(config))
    (root / "config").mkdir()
    (root / "config/model.yaml").write_text("model: coin-1\ntemperature: 1\n")
    (root / "prompts").mkdir()
    (root / "prompts/ask.j2").write_text("{{ q }}\n")
    rows = [
        {"id": f"c{i}", "input": {"q": f"question {i}"}, "expect": {"must_include": ["yes"]}}
        for i in range(20)
    ]
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    commit(root, "base")
    (root / "prompts/ask.j2").write_text("Q: {{ q }}\n")
    commit(root, "a PR that rewords the prompt, and changes nothing the coin does")
    return root


def _outputs(repo: Path) -> list[str]:
    lines = (repo / ".eval-gate/reports/coin/head.jsonl").read_text().splitlines()[1:]
    return [json.loads(line)["output"] for line in lines]


def _runs(repo: Path) -> dict[str, list[str]]:
    lines = (repo / ".eval-gate/reports/coin/head.jsonl").read_text().splitlines()[1:]
    return {r["id"]: [a["output"] for a in r["attempts"]] for r in map(json.loads, lines)}


def test_no_cache_draws_fresh_answers(tmp_path: Path, coin_server: ModelServer) -> None:
    repo = _repo(tmp_path / "repo", coin_server)
    env = {"COIN_KEY": "k"}
    first = gate("check", "--base", "HEAD~1", cwd=repo, env=env)
    assert first.returncode in (0, 1), first.stderr
    answers, calls = _outputs(repo), coin_server.requests
    again = gate("check", "--base", "HEAD~1", cwd=repo, env=env)
    assert (again.returncode, _outputs(repo)) == (first.returncode, answers)  # replayed
    assert coin_server.requests == calls  # nothing asked again
    fresh = gate("check", "--base", "HEAD~1", "--no-cache", cwd=repo, env=env)
    assert fresh.returncode in (0, 1), fresh.stderr
    assert coin_server.requests == calls + 40  # both sides asked every case again
    assert _outputs(repo) != answers


def test_the_action_input_no_cache() -> None:
    assert read_inputs({"INPUT_NO-CACHE": "true"}).no_cache
    assert not read_inputs({}).no_cache
    with pytest.raises(Exception, match="no-cache"):
        read_inputs({"INPUT_NO-CACHE": "maybe"})


def test_auto_rounds_replay_from_the_cache(tmp_path: Path, coin_server: ModelServer) -> None:
    """Under repeats: auto, run k of a case is its own cached answer: a rerun of the same PR
    asks nothing again, rounds included, and reaches the same reports. (A coin's 20 cases
    cannot reach the design's precision: the rounds end when every case has `max_repeats`
    runs, within the call budget, so the rerun's rounds, all from the cache, end there too.)"""
    repo = _repo(tmp_path / "repo", coin_server, repeats="auto", max_repeats=8)
    env = {"COIN_KEY": "k"}
    first = gate("check", "--base", "HEAD~1", cwd=repo, env=env)
    assert first.returncode in (0, 1), first.stderr
    report = _runs(repo)
    runs = sum(len(outputs) for outputs in report.values())
    assert runs > 3 * 20 and "round 2: " in first.stderr  # rounds beyond the uniform one ran
    calls = coin_server.requests
    assert calls == 2 * runs  # base and head: both sides of every run, each once
    again = gate("check", "--base", "HEAD~1", cwd=repo, env=env)
    assert coin_server.requests == calls  # every attempt, appended ones too, from the cache
    assert _runs(repo) == report  # the same answers, run by run
    assert again.returncode == first.returncode


def _auto(repo: Path) -> tuple[dict, dict[str, int]]:
    """The head report's `auto` record and each base case's runs."""
    head = (repo / ".eval-gate/reports/coin/head.jsonl").read_text().splitlines()
    base = (repo / ".eval-gate/reports/coin/base.jsonl").read_text().splitlines()[1:]
    return json.loads(head[0])["auto"], {r["id"]: r["repeats"] for r in map(json.loads, base)}


def test_cached_base_runs_cost_nothing_and_narrow_the_interval(
    tmp_path: Path, coin_server: ModelServer
) -> None:
    """The call budget counts paid calls only. A first PR samples the base (as main's push or an
    earlier PR would) and stops at its budget; a second PR on the same base gets every one of
    those base runs from the response cache for free: the model server is asked only for the
    head's runs and the base's runs beyond the cached ones, the same budget buys more runs per
    case, and the drop test's standard error is smaller."""
    repo = _repo(tmp_path / "repo", coin_server, repeats="auto", max_calls_per_case=4)
    env = {"COIN_KEY": "k", "GATE_CACHE_DIR": str(tmp_path / "cache")}
    first = gate("check", "--base", "HEAD~1", cwd=repo, env=env)
    assert first.returncode in (0, 1), first.stderr
    auto, base_runs = _auto(repo)
    assert auto["stop"] == "budget" and auto["paid_calls"] == coin_server.requests <= 2 * 4 * 20
    asked = coin_server.requests
    (repo / "prompts/ask.j2").write_text("Question: {{ q }}\n")  # another PR, the same base
    commit(repo, "a second PR on the same base")
    second = gate("check", "--base", "HEAD~2", cwd=repo, env=env)
    assert second.returncode in (0, 1), second.stderr
    again, more_base = _auto(repo)
    head_runs = again["calls"]
    fresh_base = sum(max(0, n - base_runs.get(i, 0)) for i, n in more_base.items())
    assert coin_server.requests - asked == head_runs + fresh_base  # cached base runs: free
    assert again["paid_calls"] == head_runs + fresh_base <= 2 * 4 * 20
    assert sum(more_base.values()) > sum(base_runs.values())  # the budget bought more runs
    assert again["looks"][-1]["se_points"] < auto["looks"][-1]["se_points"]
