"""The response cache: exact-request keys, atomic entries, corrupt entries, several processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO, Project, gate_here
from helpers.servers.model_server import ModelServer

from gate.providers.cache import ResponseCache, cache_key, default_cache_dir

KEY = "sk-cache-test-5f1e2d3c4b"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 0}


def test_the_key_covers_endpoint_body_and_repeat() -> None:
    base = cache_key("http://h/v1/chat/completions", BODY, 0)
    assert base == cache_key("http://h/v1/chat/completions", json.loads(json.dumps(BODY)), 0)
    variants = [
        cache_key("http://other/v1/chat/completions", BODY, 0),
        cache_key("http://h/v1/chat/completions", BODY, 1),
        cache_key("http://h/v1/chat/completions", {**BODY, "model": "m2"}, 0),
        cache_key("http://h/v1/chat/completions", {**BODY, "temperature": 0.5}, 0),
        cache_key(
            "http://h/v1/chat/completions",
            {**BODY, "messages": [{"role": "user", "content": "hi!"}]},
            0,
        ),
    ]
    assert len({base, *variants}) == 6


def test_put_then_get(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key("u", BODY, 0)
    assert cache.get(key) is None
    cache.put(key, {"answer": 42})
    assert cache.get(key) == {"answer": 42}
    assert (cache.hits, cache.misses) == (1, 1)
    assert not list(tmp_path.rglob("*.tmp"))


@pytest.mark.parametrize(
    "damage",
    [b"", b'{"key": "x", "resp', b"\x00\xff garbage", b'{"key": "another", "response": {}}', b"[]"],
)
def test_corrupt_entries_are_misses_and_get_overwritten(tmp_path: Path, damage: bytes) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key("u", BODY, 0)
    cache.put(key, {"answer": 1})
    cache.path(key).write_bytes(damage)
    assert cache.get(key) is None
    cache.put(key, {"answer": 2})
    assert cache.get(key) == {"answer": 2}


def test_disabled_cache_reads_and_writes_nothing(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c", enabled=False)
    cache.put("k" * 64, {"a": 1})
    assert cache.get("k" * 64) is None and not (tmp_path / "c").exists()


def test_concurrent_writers_and_readers_never_see_half_an_entry(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    keys = [cache_key("u", BODY, n) for n in range(5)]
    big = {"text": "x" * 200_000}
    seen: list[Any] = []

    def work() -> None:
        for _ in range(30):
            for key in keys:
                cache.put(key, big)
                seen.append(cache.get(key))

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(seen) == 8 * 30 * 5 and all(value == big for value in seen)
    assert not list(tmp_path.rglob("*.tmp"))


# --- through `gate run` ------------------------------------------------------------------


def chat_project(project: Project, server: ModelServer, n: int = 12) -> Project:
    project.write("config/model.yaml", "model: m\ntemperature: 0\n")
    project.write("prompts/ask.j2", "{{ question }}")
    project.cases(
        "cases/ask.jsonl",
        [
            {
                "id": f"q{i}",
                "input": {"question": f"topic {i}"},
                "expect": {"must_include": ["topic"]},
            }
            for i in range(n)
        ],
    )
    project.config(
        {
            "concurrency": 4,
            "suites": [
                {
                    "name": "ask",
                    "cases": "cases/ask.jsonl",
                    "system": {
                        "kind": "openai",
                        "model_config": "config/model.yaml",
                        "prompt": "prompts/ask.j2",
                        "base_url": server.openai_base_url,
                        "api_key_env": "CACHE_TEST_KEY",
                    },
                }
            ],
        }
    )
    return project


def gate_env(project: Project) -> dict[str, str]:
    return {"GATE_CACHE_DIR": str(project.root / "cache"), "CACHE_TEST_KEY": KEY}


def test_an_unchanged_rerun_makes_zero_requests(project: Project, server: ModelServer) -> None:
    chat_project(project, server)
    first = gate_here("run", "-q", "--label", "base", cwd=project.root, env=gate_env(project))
    assert first.code == 0, first.err
    assert server.requests == 12
    server.reset_counts()
    again = gate_here("run", "-q", "--label", "again", cwd=project.root, env=gate_env(project))
    assert again.code == 0, again.err
    assert server.requests == 0
    _, base_lines, base_summary = project.read_report(label="base")
    _, lines, summary = project.read_report(label="again")
    assert base_summary["cache"] == {"hits": 0, "misses": 12}
    assert summary["cache"] == {"hits": 12, "misses": 0}
    assert [x["output"] for x in lines] == [x["output"] for x in base_lines]
    assert all(x["cached"] for x in lines) and summary["tokens"] == base_summary["tokens"]


def test_no_cache_calls_again_and_writes_nothing(project: Project, server: ModelServer) -> None:
    chat_project(project, server)
    done = gate_here("run", "-q", "--no-cache", cwd=project.root, env=gate_env(project))
    assert done.code == 0, done.err
    assert server.requests == 12 and not (project.root / "cache").exists()
    gate_here("run", "-q", cwd=project.root, env=gate_env(project))
    gate_here("run", "-q", "--no-cache", cwd=project.root, env=gate_env(project))
    assert server.requests == 36


def test_corrupt_entries_cost_one_call_each_and_are_repaired(
    project: Project, server: ModelServer
) -> None:
    chat_project(project, server)
    gate_here("run", "-q", cwd=project.root, env=gate_env(project))
    entries = sorted((project.root / "cache").rglob("*.json"))
    assert len(entries) == 12
    for entry in entries[:5]:
        entry.write_text(entry.read_text()[:20])
    server.reset_counts()
    done = gate_here("run", "-q", cwd=project.root, env=gate_env(project))
    assert done.code == 0, done.err
    assert server.requests == 5
    assert project.read_report()[2]["cache"] == {"hits": 7, "misses": 5}
    server.reset_counts()
    gate_here("run", "-q", cwd=project.root, env=gate_env(project))
    assert server.requests == 0


def test_two_processes_share_one_cache(project: Project, server: ModelServer) -> None:
    chat_project(project, server, n=40)
    env = {**os.environ, "PYTHONPATH": str(REPO), **gate_env(project)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gate", "run", "-q", "--label", label],
            cwd=project.root,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for label in ("one", "two")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    assert 40 <= server.requests <= 80
    entries = list((project.root / "cache").rglob("*.json"))
    assert len(entries) == 40 and all(json.loads(e.read_text())["response"] for e in entries)
    assert not list((project.root / "cache").rglob("*.tmp"))
    server.reset_counts()
    gate_here("run", "-q", "--label", "three", cwd=project.root, env=gate_env(project))
    assert server.requests == 0
    outputs = [
        [x["output"] for x in project.read_report(label=label)[1]] for label in ("one", "two")
    ]
    assert outputs[0] == outputs[1]


def test_a_changed_key_still_hits_and_no_key_is_stored(
    project: Project, server: ModelServer
) -> None:
    chat_project(project, server, n=3)
    gate_here("run", "-q", cwd=project.root, env=gate_env(project))
    rotated = {**gate_env(project), "CACHE_TEST_KEY": "sk-rotated-key-000111222"}
    server.reset_counts()
    gate_here("run", "-q", cwd=project.root, env=rotated)
    assert server.requests == 0
    for entry in (project.root / "cache").rglob("*"):
        if entry.is_file():
            assert KEY not in entry.read_text() and KEY not in entry.name


def test_a_cached_answer_reports_the_latency_of_the_call_it_replaces(project: Project) -> None:
    with ModelServer(latency_s=0.08) as slow:
        chat_project(project, slow, n=4)
        assert (
            gate_here("run", "-q", "--label", "fresh", cwd=project.root, env=gate_env(project)).code
            == 0
        )
        assert (
            gate_here(
                "run", "-q", "--label", "cached", cwd=project.root, env=gate_env(project)
            ).code
            == 0
        )
        assert slow.requests == 4
    _, fresh, _ = project.read_report(label="fresh")
    _, cached, summary = project.read_report(label="cached")
    assert all(x["cached"] for x in cached) and summary["cache"]["hits"] == 4
    for before, after in zip(fresh, cached, strict=True):
        assert 80 <= after["latency_ms"] <= before["latency_ms"]  # the HTTP call, as it was


def test_default_cache_dir_for_both_the_flow_and_a_side(tmp_path: Path) -> None:
    assert default_cache_dir({"GATE_CACHE_DIR": "/c", "XDG_CACHE_HOME": "/x"}) == Path("/c")
    assert default_cache_dir({"GATE_CACHE_DIR": "", "XDG_CACHE_HOME": "/x"}) == Path("/x/eval-gate")
    assert default_cache_dir({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "eval-gate"


def test_the_same_request_asked_at_once_costs_one_call(tmp_path: Path) -> None:
    """Two workers (each with its own cache object on one folder, as the base's and the head's
    judges) ask the same slow request at once: one call, the other reads its answer."""
    from gate.inputs.config import ProviderSettings
    from gate.providers.client import open_client
    from gate.providers.endpoints import openai_endpoint
    from gate.providers.wire_formats import Message, OpenAIChatFormat

    with ModelServer(api_key=KEY, latency_s=0.3) as server:
        environ = {"TEST_KEY": KEY}
        endpoint = openai_endpoint(server.openai_base_url, "TEST_KEY", environ, "system")
        settings = ProviderSettings()
        replies: list[Any] = []

        def ask(other: str) -> None:
            client = open_client(
                endpoint, settings, cache=ResponseCache(tmp_path), environ=environ, concurrency=2
            )
            for text in ("same", other):
                messages = [Message(role="user", content=text)]
                reply = client.chat(OpenAIChatFormat(), "m", messages, {}, repeat=0, deadline=None)
                replies.append((text, reply.text, reply.cached))
            client.close()

        workers = [threading.Thread(target=ask, args=(name,)) for name in ("a", "b")]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        assert server.requests == 3  # "same" once, "a" and "b" once each
        same = [r for r in replies if r[0] == "same"]
        assert len(same) == 2 and same[0][1] == same[1][1]
        assert sorted(r[2] for r in same) == [False, True]
