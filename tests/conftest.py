"""Shared fixtures: real temp projects, real `gate` subprocesses (see `helpers.cli`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import ECHO_APP, Project


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
