"""Test code (`expect.test_code`) in the strict form it runs in, and the modules it imports.

`strict_tree` rewrites the test code so that its verdicts cannot be bent by the objects the
candidate returns: comparisons, truth tests, `isinstance`, `all`/`any`, `bool()` and dict
lookups go through helpers that refuse to run comparison methods defined by candidate code.
Pure functions over source text, run in the zygote; the helpers themselves live in
`gate.sandbox.zygote.safe_compare`. Which tests the code defines is `gate.inputs.testcode`.
"""

from __future__ import annotations

import ast

_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
}
_CALLS = {"isinstance": "__gate_isinstance", "all": "__gate_all", "any": "__gate_any"}
SOURCE_LIMIT = 160


def _parse(source: str) -> ast.Module:
    try:
        return ast.parse(source, "<test>")
    except SyntaxError as exc:
        raise ValueError(f"test_code does not parse: {exc.msg} (line {exc.lineno})") from None


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


def _helper(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=list(args), keywords=[])


def _thunk(body: ast.expr) -> ast.Lambda:
    empty = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(args=empty, body=body)


class _SafeCompareRewriter(ast.NodeTransformer):
    """Routes every verdict-bearing operation through the helpers of `safe_compare`."""

    def __init__(self, source: str, shadowed: set[str]) -> None:
        self.lines = source.splitlines(keepends=True)
        self.shadowed = shadowed

    def segment(self, node: ast.expr) -> str:
        """The source text of `node` (like `ast.get_source_segment`, without re-splitting)."""
        end_line, end_col = node.end_lineno or node.lineno, node.end_col_offset or 0
        lines = self.lines[node.lineno - 1 : end_line]
        if not lines:
            return "<expression>"
        if len(lines) == 1:
            text = lines[0].encode()[node.col_offset : end_col].decode(errors="replace")
        else:
            first = lines[0].encode()[node.col_offset :].decode(errors="replace")
            last = lines[-1].encode()[:end_col].decode(errors="replace")
            text = first + "".join(lines[1:-1]) + last
        text = " ".join(text.split())
        return text if len(text) <= SOURCE_LIMIT else text[: SOURCE_LIMIT - 1] + "…"

    def truth(self, node: ast.expr) -> ast.expr:
        """`node` in a truth context: the result becomes an exact bool decided strictly."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return node
        return ast.copy_location(_helper("__gate_truth", node), node)

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        ops = [_OPS[type(op)] for op in node.ops]
        if len(ops) == 1:
            call = _helper("__gate_cmp", ast.Constant(ops[0]), node.left, node.comparators[0])
        else:
            pairs: list[ast.expr] = [
                ast.Tuple(elts=[ast.Constant(op), _thunk(right)], ctx=ast.Load())
                for op, right in zip(ops, node.comparators, strict=True)
            ]
            call = _helper("__gate_chain", node.left, ast.Tuple(elts=pairs, ctx=ast.Load()))
        return ast.copy_location(call, node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        kind = "and" if isinstance(node.op, ast.And) else "or"
        thunks = ast.Tuple(elts=[_thunk(v) for v in node.values], ctx=ast.Load())
        return ast.copy_location(_helper("__gate_boolop", ast.Constant(kind), thunks), node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self.truth(node.operand)
        return node

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        source = self.segment(node.test)
        test = self.truth(self.visit(node.test))
        message = self.visit(node.msg) if node.msg is not None else ast.Constant(None)
        fail = ast.Raise(exc=_helper("__gate_fail", ast.Constant(source), message), cause=None)
        check = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=test), body=[fail], orelse=[])
        return ast.copy_location(check, node)

    def _test_context(self, node: ast.If | ast.While | ast.IfExp) -> ast.AST:
        self.generic_visit(node)
        node.test = self.truth(node.test)
        return node

    visit_If = visit_While = visit_IfExp = _test_context

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs = [self.truth(test) for test in node.ifs]
        return node

    def visit_Call(self, node: ast.Call) -> ast.expr:
        self.generic_visit(node)
        func = node.func
        if not isinstance(func, ast.Name) or func.id in self.shadowed:
            return node
        if func.id in _CALLS:
            node.func = ast.copy_location(ast.Name(id=_CALLS[func.id], ctx=ast.Load()), func)
        elif func.id == "bool" and len(node.args) == 1 and not node.keywords:
            return ast.copy_location(_helper("__gate_truth", node.args[0]), node)
        return node

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        return ast.copy_location(_helper("__gate_getitem", node.value, node.slice), node)


def imported_modules(source: str) -> list[str]:
    """Absolute imports of the test code: the sandbox imports and watches them before the
    candidate runs, so that the candidate cannot swap them for fakes."""
    names: list[str] = []
    for node in ast.walk(_parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return list(dict.fromkeys(names))


def strict_tree(source: str) -> ast.Module:
    """The test code with every verdict-bearing operation routed through the strict helpers."""
    tree = _parse(source)
    rewritten = _SafeCompareRewriter(source, _bound_names(tree)).visit(tree)
    return ast.fix_missing_locations(rewritten)
