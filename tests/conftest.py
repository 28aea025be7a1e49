"""Shared fixtures: real temp projects, real `gate` subprocesses (see `helpers.cli`)."""

from __future__ import annotations

import compileall
import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import ECHO_APP, REPO, Project
from helpers.servers.github_api import GitHubServer
from helpers.servers.model_server import ModelServer
from helpers.servers.world import World, serve_api, serve_world


def pytest_configure(config: pytest.Config) -> None:
    """Compile the gate's modules once, before the workers start: the tests start hundreds of
    gate processes, and where PYTHONDONTWRITEBYTECODE is set (and in the isolated Pythons the
    gate starts with -B) none would write the bytecode it compiled, so each compiled every
    module it imports again (~0.3 s a process). Reading bytecode is not writing it: -B stays."""
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist)
        compileall.compile_dir(REPO / "gate", quiet=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (the README's test command): one worker more than the cores. A good part of
    a test's time is spent waiting (on the sides' processes, a model server's latency, a
    keeper's wall-clock limit), and the extra worker fills it: on 2 cores, 3 workers run the
    suite in about 94% of the time 2 take."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cores or 1) + 1


@pytest.fixture
def api() -> Iterator[GitHubServer]:
    """The stateful GitHub API stand-in (a test file may serve it under another path)."""
    with serve_api() as server:
        yield server


@pytest.fixture
def world(tmp_path: Path, api: GitHubServer) -> Iterator[World]:
    """A repository, its PR and the Action's runner around `api` (see `helpers.servers.world`)."""
    with serve_world(tmp_path, api) as running:
        yield running


@pytest.fixture
def model_servers() -> Iterator[Callable[..., ModelServer]]:
    """Starts model servers (`ModelServer(**options)`) for one test; all stop at its end."""
    with contextlib.ExitStack() as in_use:
        yield lambda **options: in_use.enter_context(ModelServer(**options))


@pytest.fixture
def server(
    request: pytest.FixtureRequest, model_servers: Callable[..., ModelServer]
) -> ModelServer:
    """The model provider stand-in on 127.0.0.1 (`helpers.servers.model_server`), one a test.
    A test module configures it with a dict of `ModelServer` options named `MODEL_SERVER`
    (responder, api_key, faults, ...); without one it is the built-in echo model."""
    return model_servers(**getattr(request.module, "MODEL_SERVER", {}))


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def echo_project(project: Project) -> Callable[[list[dict[str, Any]]], Project]:
    """A project whose python system answers `input.say` (raises on `input.raise`)."""

    def make(rows: list[dict[str, Any]], **config: Any) -> Project:
        project.write("app.py", ECHO_APP)
        project.cases("cases/suite.jsonl", rows)
        project.config(
            {
                "suites": [
                    {
                        "name": "main",
                        "cases": "cases/suite.jsonl",
                        "system": {"kind": "python", "target": "app:answer"},
                    }
                ],
                **config,
            }
        )
        return project

    return make


@pytest.fixture(autouse=True)
def readable_tmp_path(request: pytest.FixtureRequest) -> None:
    """tmp_path readable by others, as a checkout is on CI: as root, the system under test runs
    as an unprivileged uid of its own (its parents stay closed; the worker sees through them)."""
    if "tmp_path" in request.fixturenames:
        request.getfixturevalue("tmp_path").chmod(0o755)
