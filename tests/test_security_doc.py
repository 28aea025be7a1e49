"""docs/security.md names a test for each defence: every test it names exists."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMED = re.compile(r"`(tests/[\w/]+\.py)(?:::(\w+))?`")


def test_every_test_the_threat_model_names_exists() -> None:
    named = NAMED.findall((ROOT / "docs" / "security.md").read_text(encoding="utf-8"))
    assert len(named) >= 15
    for file, function in named:
        path = ROOT / file
        assert path.is_file(), file
        if function:
            tree = ast.parse(path.read_text(encoding="utf-8"))
            defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
            assert function in defined, f"{file}::{function}"
