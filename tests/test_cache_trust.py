"""Where the answers come from (issue 28, class 2b): the response cache's key covers everything
a side controls about a request, and an answer is taken only from an entry the gate wrote.

The system is the team's own service (`kind: http`, `cache: true`) on 127.0.0.1, which answers
by the `X-Prompt-Version` header it gets: `v2` no longer knows about fees (a regression). A PR
that changes only that header used to get the base's cached `v1` answers and pass; now its
requests are its own, and it fails. Good answers planted for the head's exact requests (written
as the gate would, but not by it) are not taken: in a cache folder that everyone may write the
whole cache is refused, and an entry another uid owns is ignored, each with a note in the log,
through `gate check` and `gate action`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import run_gate
from helpers.pr_scenarios import make_project
from helpers.servers.model_server import ModelServer
from helpers.servers.world import World

from gate.providers.cache import cache_key
from gate.providers.endpoints import anthropic_endpoint, openai_endpoint, service_endpoint

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="planting another uid's files")
WORDS = ["CAC", "fees", "licensed", "minutes", "statement", "card"]
OTHER_UID = 4_000_123  # nobody the gate knows: a system's uid, say


class Service:
    """Answers as its `X-Prompt-Version` says; `planting`: as well as it can, whatever that is."""

    def __init__(self) -> None:
        self.planting = False

    def __call__(self, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
        word = str(body.get("question", "")).rsplit(" ", 1)[-1]
        forgets = headers.get("x-prompt-version") == "v2" and word == "fees"
        return {"text": "I cannot say" if forgets and not self.planting else f"about {word}"}


@pytest.fixture
def service(model_servers: Callable[..., ModelServer]) -> tuple[ModelServer, Service]:
    answers = Service()
    return model_servers(service=answers), answers


def project_files(url: str, version: str) -> dict[str, str]:
    system = {"kind": "http", "url": url, "headers": {"X-Prompt-Version": version}, "cache": True}
    config = {"threshold": 3, "suites": [{"name": "support", "cases": "cases.jsonl", "system": system}]}  # fmt: skip
    rows = [
        {"id": f"faq-{i}", "input": {"question": f"tell me about {w}"}, "expect": {"must_include": [w]}}
        for i, w in enumerate(WORDS * 2, start=1)
    ]  # fmt: skip
    return {
        "gate.yml": yaml.safe_dump(config, sort_keys=False),
        "cases.jsonl": "".join(json.dumps(r) + "\n" for r in rows),
    }


def local(tmp: Path, url: str) -> Path:
    """A clone whose working tree is the PR: `X-Prompt-Version: v1 → v2`, nothing else."""
    author = make_project(tmp / "repo", project_files(url, "v1"))
    author.write({"gate.yml": project_files(url, "v2")["gate.yml"]})
    return author.path


def check(root: Path, cache: Path) -> tuple[int, str]:
    done = run_gate(
        "check", "--base", "main", "--format", "markdown", cwd=root, env={"GATE_CACHE_DIR": str(cache)}
    )  # fmt: skip
    return done.code, done.out + done.err


def plant(head: Path, into: Path, answers: Service) -> list[Path]:
    """Good answers for the head's exact requests, as the gate's cache holds them, moved into
    `into`: what a system that ran first, or anyone with write access, could leave there."""
    scratch = Path(tempfile.mkdtemp(prefix="gate-plant-"))
    answers.planting = True
    try:
        done = run_gate("run", "--out", str(scratch / "out"), cwd=head, env={"GATE_CACHE_DIR": str(scratch / "c")})  # fmt: skip
        assert done.code == 0, done.err
    finally:
        answers.planting = False
    mode = into.stat().st_mode if into.exists() else 0o700
    shutil.copytree(scratch / "c", into, dirs_exist_ok=True)
    into.chmod(mode)  # copytree copied the scratch folder's
    shutil.rmtree(scratch)
    entries = sorted(into.glob("v*/??/*.json"))
    assert len(entries) == len(WORDS) * 2
    return entries


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A cache folder everyone may write (what a workflow might choose in /tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="gate-shared-cache-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder)


# --- the key ---------------------------------------------------------------------------------


def test_a_changed_header_is_a_request_of_its_own(
    tmp_path: Path, service: tuple[ModelServer, Service]
) -> None:
    server, _ = service
    code, out = check(local(tmp_path, server.service_url), tmp_path / "cache")
    assert code == 1, out[-3000:]
    assert "❌ **Eval Gate: fail** (support)" in out
    sent = {e.headers.get("x-prompt-version") for e in server.log}
    assert sent == {"v1", "v2"}  # each side asked its own


def test_a_changed_header_is_a_request_of_its_own_in_the_action(
    world: World, service: tuple[ModelServer, Service]
) -> None:
    server, _ = service
    world.base(dict(project_files(server.service_url, "v1")))
    world.pr({"gate.yml": project_files(server.service_url, "v2")["gate.yml"]}, "prompt v2")
    world.checkout()
    run = world.run(world.environ(world.event()))
    assert run.code == 1, run.log[-3000:]
    assert run.outputs["verdict"] == "fail"


def test_the_key_covers_where_and_how_a_request_goes() -> None:
    """Every header and the whole URL; a secret by its variable, never by its value."""
    env = {"K": "sk-one", "L": "sk-two", "TOKEN": "t-1"}
    body = {"model": "m", "messages": []}

    def key(endpoint: Any, environ: dict[str, str] = env) -> str:
        return cache_key(endpoint.identity(), body, 0)

    service = service_endpoint("https://svc.example/a", {"X-V": "1"}, env, "s")
    assert key(service) != key(service_endpoint("https://svc.example/a", {"X-V": "2"}, env, "s"))
    assert key(service) != key(
        service_endpoint("https://svc.example/a?v=2", {"X-V": "1"}, env, "s")
    )
    assert key(service) != key(service_endpoint("https://u@svc.example/a", {"X-V": "1"}, env, "s"))
    auth = {"Authorization": "Bearer ${TOKEN}"}
    rotated = {**env, "TOKEN": "t-2"}
    assert key(service_endpoint("https://s/a", auth, env, "s")) == key(service_endpoint("https://s/a", auth, rotated, "s"))  # fmt: skip
    openai = openai_endpoint("https://api.example/v1", "K", env, "s")
    assert key(openai) != key(openai_endpoint("https://api.example/v1", "L", env, "s"))
    assert key(openai) == key(openai_endpoint("https://api.example/v1", "K", {"K": "sk-new"}, "s"))
    anthropic = anthropic_endpoint("https://api.example", "K", env, "s")
    assert key(anthropic) != key(anthropic_endpoint("https://api.example", "L", env, "s"))
    assert "sk-one" not in json.dumps(openai.identity()) + json.dumps(anthropic.identity())


# --- whose entries ---------------------------------------------------------------------------


def test_answers_in_a_folder_everyone_may_write_are_refused(
    tmp_path: Path, service: tuple[ModelServer, Service], shared_folder: Path
) -> None:
    server, answers = service
    root = local(tmp_path, server.service_url)
    plant(root, shared_folder, answers)
    code, out = check(root, shared_folder)
    assert code == 1, out[-3000:]
    assert f"response cache {shared_folder} not used: the folder is writable by everyone" in out


@needs_root
def test_answers_the_gate_did_not_write_are_ignored(
    tmp_path: Path, service: tuple[ModelServer, Service]
) -> None:
    server, answers = service
    root = local(tmp_path, server.service_url)
    cache = tmp_path / "cache"
    for entry in plant(root, cache, answers):
        os.chown(entry, OTHER_UID, OTHER_UID)
    code, out = check(root, cache)
    assert code == 1, out[-3000:]
    assert "an answer the gate did not write is ignored" in out
    assert f"belongs to uid {OTHER_UID}" in out


@needs_root
def test_answers_the_gate_did_not_write_are_ignored_in_the_action(
    world: World, service: tuple[ModelServer, Service]
) -> None:
    server, answers = service
    world.base(dict(project_files(server.service_url, "v1")))
    world.pr({"gate.yml": project_files(server.service_url, "v2")["gate.yml"]}, "prompt v2")
    workspace = world.checkout()
    env = world.environ(world.event())
    for entry in plant(workspace, Path(env["GATE_CACHE_DIR"]), answers):
        os.chown(entry, OTHER_UID, OTHER_UID)
    run = world.run(env)
    assert run.code == 1, run.log[-3000:]
    assert run.outputs["verdict"] == "fail"
    assert "an answer the gate did not write is ignored" in run.log
