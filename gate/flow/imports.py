"""The local modules a Python file imports: its import closure inside the repository.

Found by reading the code with `ast`, never by importing or running it (the PR's code must not
run in the gate's process): `import a.b` (the packages `a` and `a.b`, each package's
`__init__.py` too), `from a import b` (`a`, and `a.b` when it is a module), relative imports
(`from . import x`, `from ..pkg import y`), and imports inside functions or `try` blocks. A
module is looked up in the given roots (the checkout, `sandbox.pythonpath`, a script's own
folder) and kept only when its file lies inside the repository; the standard library and
installed packages are never found there. Not seen: names built at run time
(`importlib.import_module(name)`, `__import__`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path

MAX_MODULES = 2000


def module_files(name: str, roots: Sequence[Path]) -> list[Path]:
    """The files `import name` executes from the first root that has it: each package's
    `__init__.py` on the way, then the module (`a/b.py` or `a/b/__init__.py`)."""
    parts = name.split(".")
    for root in roots:
        found = []
        for depth in range(1, len(parts) + 1):
            base = root.joinpath(*parts[:depth])
            for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
                if candidate.is_file():
                    found.append(candidate)
                    break
            else:
                if not base.is_dir():  # neither a module nor a (namespace) package
                    found = []
                    break
        if found:
            return found
    return []


def _package(path: Path, roots: Sequence[Path]) -> list[str] | None:
    """The package a file's relative imports start from: `a` for `a/b.py` and for
    `a/__init__.py`; None outside the roots."""
    for root in roots:
        if path.is_relative_to(root):
            return list(path.relative_to(root).with_suffix("").parts[:-1])
    return None


def _imported(tree: ast.AST, package: list[str] | None) -> Iterator[str]:
    """Every module name the code may import, absolute."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None or node.level - 1 > len(package):
                    continue
                base = package[: len(package) - (node.level - 1)]
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            if module:
                yield module
            yield from (f"{module}.{a.name}" if module else a.name for a in node.names)


def import_closure(files: Sequence[Path], roots: Sequence[Path], within: Path) -> list[Path]:
    """`files` and every module of `roots` inside `within` they import, transitively."""
    within = within.resolve()
    seen: dict[Path, None] = {}
    queue = [f for f in files if f.is_file()]
    while queue and len(seen) < MAX_MODULES:
        path = queue.pop(0)
        real = path.resolve()
        if real in seen or not real.is_relative_to(within):
            continue
        seen[real] = None
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError, OSError):
            continue  # watched as it is; its imports cannot be read
        package = _package(path, roots)
        for name in _imported(tree, package):
            queue += module_files(name, roots)
    return list(seen)
