"""The wheel ships every subpackage, the templates and the bundled example project."""

from __future__ import annotations

import tomllib

from helpers.cli import REPO


def test_every_subpackage_is_listed_for_the_wheel() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in (REPO / "gate").rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    mapped = {f"gate.bundled.{p.parent.name}" for p in (REPO / "cases").glob("*/__init__.py")}
    assert mapped <= listed and "gate.templates" in listed and "gate.bundled" in listed
