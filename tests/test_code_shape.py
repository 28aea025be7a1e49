"""The guide's rule on the code's shape: no function in gate/ is over 50 lines."""

from __future__ import annotations

import ast
from pathlib import Path

GATE = Path(__file__).resolve().parent.parent / "gate"
MOST_LINES = 50


def long_functions(root: Path, most: int = MOST_LINES) -> list[str]:
    """Each function (or method) below `root` longer than `most` lines, from its `def` line
    to its last, as `path:line name (n lines)`."""
    found = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                lines = node.end_lineno - node.lineno + 1
                if lines > most:
                    where = path.relative_to(root.parent)
                    found.append(f"{where}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_no_function_in_gate_is_over_50_lines() -> None:
    assert long_functions(GATE) == []


def test_a_long_function_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    body = "".join(f"        x{i} = {i}\n" for i in range(50))
    (package / "sub" / "long.py").write_text(
        f"def short():\n    return 1\n\n\nclass C:\n    async def long(self):\n{body}"
    )
    assert long_functions(package) == ["pkg/sub/long.py:6 long (51 lines)"]
    assert long_functions(package, most=51) == []
