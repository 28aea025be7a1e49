"""What `gate init` finds in Python files: a function that answers one input (`module:function`).

Read as syntax trees, never imported: a top-level public function with exactly one required
parameter, in a module that imports an LLM SDK (openai, anthropic, litellm, ...) or names one of
the prompt or model-config files found; the function must be named like an entry point
(`answer`, `respond`, `chat`, ...), call its parameter like an input (`question`, `request`, ...)
or read keys from it (`question["text"]`). Test files are skipped. Among several, one that can
take the case's input dict wins (`def reply(question: str)` cannot: `gate.inputs.signature`),
then an entry-point name, then the shortest path.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import PurePosixPath

from gate.inputs.signature import Param, input_problem

LLM_SDKS = {
    "openai", "anthropic", "litellm", "langchain", "langchain_openai", "langchain_anthropic",
    "llama_index", "mistralai", "cohere", "ollama", "google", "vertexai", "groq", "boto3",
}  # fmt: skip
ENTRY_NAMES = ("answer", "respond", "reply", "chat", "ask", "generate", "complete", "run")
INPUT_PARAMS = {"input", "inputs", "request", "case", "payload", "query", "question", "message"}


@dataclass(frozen=True)
class PythonTarget:
    target: str  # module:function
    path: str
    input_keys: tuple[str, ...]  # keys the function reads from its argument, in order
    sdks: tuple[str, ...] = ()  # the LLM SDKs its module imports, sorted
    problem: str | None = None  # why it cannot take the case's input dict (`input_problem`)
    line: int | None = None  # of its `def`


def _annotation(arg: ast.arg) -> str | None:
    return ast.unparse(arg.annotation) if arg.annotation else None


def parameters(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[Param]:
    """A function's parameters as `gate.inputs.signature` judges them, read from its syntax."""
    args = func.args
    positional = [*args.posonlyargs, *args.args]
    defaults = len(positional) - len(args.defaults)
    params = [
        Param(
            a.arg,
            "positional_only" if a in args.posonlyargs else "positional_or_keyword",
            i >= defaults,
            _annotation(a),
        )
        for i, a in enumerate(positional)
    ]
    if args.vararg:
        params.append(Param(args.vararg.arg, "var_positional", True, _annotation(args.vararg)))
    params += [
        Param(a.arg, "keyword_only", d is not None, _annotation(a))
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    if args.kwarg:
        params.append(Param(args.kwarg.arg, "var_keyword", True))
    return params


def signature_problem(text: str, target: str) -> tuple[str | None, int | None]:
    """Why the top-level function `target` names in the module `text` cannot take the case's
    input dict, and the line of its `def`; (None, None) when it can, or is not found there
    (imported from elsewhere, built at run time: `gate validate` checks it imported)."""
    name = target.partition(":")[2]
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return None, None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name:
            return input_problem(parameters(node), target), node.lineno
    return None, None


def module_name(path: str) -> str | None:
    pure = PurePosixPath(path)
    parts = [*pure.parts[:-1], pure.stem]
    if pure.stem == "__init__":
        parts = parts[:-1]
    if not parts or not all(part.isidentifier() for part in parts):
        return None
    return ".".join(parts)


def is_test_path(path: str) -> bool:
    pure = PurePosixPath(path)
    return (
        pure.name.startswith("test_")
        or pure.stem.endswith("_test")
        or pure.name in {"conftest.py", "setup.py", "noxfile.py"}
        or bool({"tests", "test"} & set(pure.parts[:-1]))
    )


def imported_tops(tree: ast.Module) -> set[str]:
    tops: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            tops |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            tops.add(node.module.split(".")[0])
    return tops


def strings_in(tree: ast.Module) -> set[str]:
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }


def keys_read(func: ast.FunctionDef, param: str) -> tuple[str, ...]:
    """Keys of `param["key"]` and `param.get("key")` in the function's body, in order."""
    keys: list[str] = []
    for node in ast.walk(func):
        key = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == param
            and isinstance(node.slice, ast.Constant)
        ):
            key = node.slice.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == param
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            key = node.args[0].value
        if isinstance(key, str) and key != "id" and key not in keys:
            keys.append(key)
    return tuple(keys)


def entry_points(path: str, text: str, known_files: set[str]) -> list[PythonTarget]:
    module = module_name(path)
    if module is None or is_test_path(path):
        return []
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    names = {PurePosixPath(f).name for f in known_files}
    mentions = any(name in s for s in strings_in(tree) for name in names)
    sdks = tuple(sorted(imported_tops(tree) & LLM_SDKS))
    if not (sdks or mentions):
        return []
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        required = len(positional) - len(args.defaults)
        required_kw = [
            a for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is None
        ]
        if required != 1 or required_kw:
            continue
        param = positional[0].arg
        keys = keys_read(node, param)
        # A loader such as `load_config(path)` is no entry point: ask for a sign of one.
        if node.name in ENTRY_NAMES or param in INPUT_PARAMS or keys:
            target = f"{module}:{node.name}"
            problem = input_problem(parameters(node), target)
            found.append(PythonTarget(target, path, keys, sdks, problem, node.lineno))
    return found


def rank(target: PythonTarget) -> tuple[bool, int, int, str]:
    """One that can take the input dict first; then an entry-point name, the shortest path."""
    name = target.target.rpartition(":")[2]
    preferred = ENTRY_NAMES.index(name) if name in ENTRY_NAMES else len(ENTRY_NAMES)
    return (target.problem is not None, preferred, target.path.count("/"), target.target)
