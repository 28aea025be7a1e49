"""Which tests `expect.test_code` defines: one `test:<name>` check each.

Pure function over source text, used to validate gate.yml's cases and by the sandbox to know
which tests to expect evidence for (`gate.sandbox.zygote.rewrite` rewrites the code itself).
"""

from __future__ import annotations

import ast
import functools

TEST_PREFIX = "test_"


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source, "<test>")
    except SyntaxError as exc:
        raise ValueError(f"test_code does not parse: {exc.msg} (line {exc.lineno})") from None


@functools.lru_cache(maxsize=1024)
def _declared(source: str) -> tuple[str, ...]:
    return tuple(_scan(source))


def declared_tests(source: str) -> list[str]:
    """Top-level `test_*` functions in definition order; ValueError for tests we cannot run."""
    return list(_declared(source))


def _scan(source: str) -> list[str]:
    names: list[str] = []
    for node in _parse(source).body:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        if not node.name.startswith(TEST_PREFIX):
            continue
        if isinstance(node, ast.AsyncFunctionDef):
            raise ValueError(f"{node.name} (line {node.lineno}): async tests are not supported")
        if _required_args(node.args):
            raise ValueError(f"{node.name} (line {node.lineno}): test functions take no arguments")
        if _is_generator(node):
            raise ValueError(f"{node.name} (line {node.lineno}): test functions must not yield")
        if node.name not in names:
            names.append(node.name)
    if not names:
        raise ValueError("test_code defines no `test_*` function")
    return names


def _required_args(args: ast.arguments) -> int:
    positional = len(args.posonlyargs) + len(args.args) - len(args.defaults)
    keyword = sum(1 for d in args.kw_defaults if d is None)
    return positional + keyword


def _is_generator(func: ast.FunctionDef) -> bool:
    pending: list[ast.AST] = list(func.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Yield | ast.YieldFrom):
            return True
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            continue
        pending.extend(ast.iter_child_nodes(node))
    return False
