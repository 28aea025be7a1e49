"""The releases the security story rests on: pyproject.toml's floors exclude every release with a
known sandbox escape, injection or credential leak (docs/security.md, "Dependencies"), what
is installed meets them, and CI audits the rest (`.ci/audit`)."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The first release that fixed each package's last known advisory (see pyproject.toml).
FIXED = {
    "jinja2": (3, 1, 6),
    "requests": (2, 33, 1),
    "urllib3": (2, 6, 3),
    "certifi": (2024, 7, 4),
    "gitpython": (3, 1, 59),
    "pyyaml": (6, 0, 1),
    "cmarkgfm": (2024, 1, 14),
}


def release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def floors() -> dict[str, tuple[int, ...]]:
    data = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    found = {}
    for requirement in data["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9.]+)(,.*)?", requirement)
        assert match, f"{requirement!r}: every dependency has a floor"
        found[match.group(1).lower()] = release(match.group(2))
    return found


@pytest.mark.parametrize("name", sorted(FIXED))
def test_the_floor_excludes_every_release_with_a_known_advisory(name: str) -> None:
    assert floors()[name] >= FIXED[name]


@pytest.mark.parametrize("name", sorted(FIXED))
def test_what_is_installed_meets_the_floor(name: str) -> None:
    assert release(version(name)) >= FIXED[name]


def test_ci_audits_the_dependencies_and_says_when_it_cannot() -> None:
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    audit = (REPO / ".ci" / "audit").read_text(encoding="utf-8")
    assert "bash .ci/audit" in ci
    assert "--strict" in audit and "SKIPPED" in audit and "GATE_AUDIT" in audit
