"""What `gate init` finds in a repository: prompt templates, model configs, a Python entry point.

Nothing is imported or executed: files are matched by name and read as text, YAML or Python
syntax trees. The rules, also in docs/init.md:

- **Files looked at**: those git tracks or would track (`git ls-files --cached --others
  --exclude-standard`, so `.gitignore`d folders such as virtualenvs are skipped); outside git,
  every file except hidden, virtualenv, cache and `node_modules` folders.
- **Prompt template**: a `.j2`, `.jinja`, `.jinja2` or `.prompt` file, or a `.md`/`.txt` file
  in a folder named `prompt`/`prompts`/`templates` or whose name contains `prompt`. README,
  CHANGELOG and LICENSE files are never prompts.
- **Model config**: a `.yml`/`.yaml` file whose top level is a mapping with a string `model:`
  (outside `.github/`, and not `gate.yml`). Its `provider:`, else a `claude…` model name,
  makes it anthropic, else openai; its key variable is `api_key_env:` or the provider's.
- **Python entry point** (`module:function`): a top-level public function with exactly one
  required parameter, in a module that imports an LLM SDK (openai, anthropic, litellm, ...) or
  names one of the prompt or model-config files found; the function must be named like an
  entry point (`answer`, `respond`, `chat`, ...), call its parameter like an input (`question`,
  `request`, ...) or read keys from it (`question["text"]`). Test files are skipped. Among
  several, an entry-point name wins, then the shortest path.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

import yaml

PROMPT_SUFFIXES = {".j2", ".jinja", ".jinja2", ".prompt"}
PROMPT_TEXT_SUFFIXES = {".md", ".txt"}
PROMPT_FOLDERS = {"prompt", "prompts", "templates"}
NOT_PROMPTS = {"readme", "changelog", "license", "contributing", "code_of_conduct", "security"}
SKIPPED_FOLDERS = {"node_modules", "__pycache__", "venv", "env", "site-packages", "dist", "build"}
LLM_SDKS = {
    "openai", "anthropic", "litellm", "langchain", "langchain_openai", "langchain_anthropic",
    "llama_index", "mistralai", "cohere", "ollama", "google", "vertexai", "groq", "boto3",
}  # fmt: skip
ENTRY_NAMES = ("answer", "respond", "reply", "chat", "ask", "generate", "complete", "run")
INPUT_PARAMS = {"input", "inputs", "request", "case", "payload", "query", "question", "message"}
MAX_BYTES = 512 * 1024  # bigger files are data, not prompts or configs


# An example input value's shape: a string, an (empty) list, or a mapping with these keys.
Shape = Literal["text", "list"] | tuple[str, ...]


@dataclass(frozen=True)
class Prompt:
    path: str  # relative to the repository root, with forward slashes
    variables: tuple[str, ...]  # the keys the template needs in the case input, sorted
    shapes: dict[str, Shape] = field(default_factory=dict)  # by key; "text" when absent


@dataclass(frozen=True)
class PythonTarget:
    target: str  # module:function
    path: str
    input_keys: tuple[str, ...]  # keys the function reads from its argument, in order
    sdks: tuple[str, ...] = ()  # the LLM SDKs its module imports, sorted


@dataclass(frozen=True)
class ModelConfig:
    model: str  # its `model:`
    kind: str  # the suite's system kind: openai or anthropic
    key_env: str  # the variable the provider's key is read from


@dataclass
class Findings:
    prompts: list[Prompt] = field(default_factory=list)
    model_configs: list[str] = field(default_factory=list)
    models: dict[str, ModelConfig] = field(default_factory=dict)  # by model config path
    targets: list[PythonTarget] = field(default_factory=list)


def repository_files(root: Path) -> list[str]:
    """Relative paths of the files worth looking at, sorted."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "replace")
        paths = [p for p in listed.split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        paths = []
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS]
            rel = Path(folder).relative_to(root)
            paths += [(rel / name).as_posix() for name in files]
    return sorted(
        p
        for p in paths
        if not set(PurePosixPath(p).parts[:-1]) & SKIPPED_FOLDERS and (root / p).is_file()
    )


def is_prompt_path(path: str) -> bool:
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    if pure.stem.lower() in NOT_PROMPTS or pure.parts[0] in {".github", "docs"}:
        return False
    if suffix in PROMPT_SUFFIXES:
        return True
    if suffix in PROMPT_TEXT_SUFFIXES:
        folders = {part.lower() for part in pure.parts[:-1]}
        return bool(folders & PROMPT_FOLDERS) or "prompt" in pure.stem.lower()
    return False


def template_inputs(text: str) -> dict[str, Shape] | None:
    """The keys a jinja2 template needs in the case input, each with the shape of an example
    value that renders; None if it does not parse.

    Its undeclared variables, except `input` (the whole input, given by the gate): the keys the
    template reads from that (`input.question`, `input["lang"]`) count instead. A variable
    the template loops over is a list (`{% for d in docs %}`: an empty one); one it reads keys
    from (`{{ user.name }}`, not a method call such as `name.upper()`) a mapping of them."""
    from jinja2 import TemplateSyntaxError, meta, nodes
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    try:  # parsed only, never rendered; in the sandbox the prompts render in
        tree = ImmutableSandboxedEnvironment().parse(text)
    except TemplateSyntaxError:
        return None

    def key_of(node: nodes.Node) -> str | None:
        if isinstance(node, nodes.Getattr):
            return node.attr
        if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            return node.arg.value if isinstance(node.arg.value, str) else None
        return None

    def from_input(node: nodes.Node) -> str | None:
        """`input.key` or `input["key"]`: the key."""
        if isinstance(node, nodes.Getattr | nodes.Getitem) and isinstance(node.node, nodes.Name):
            key = key_of(node) if node.node.name == "input" else None
            return key if key != "id" else None
        return None

    def variable(node: nodes.Node) -> str | None:
        if isinstance(node, nodes.Name):
            return None if node.name == "input" else node.name
        return from_input(node)

    shapes: dict[str, Shape] = {
        name: "text" for name in meta.find_undeclared_variables(tree) - {"input"}
    }
    lookups = [
        n for n in tree.find_all((nodes.Getattr, nodes.Getitem))
        if isinstance(n, nodes.Getattr | nodes.Getitem)
    ]  # fmt: skip
    for lookup in lookups:
        key = from_input(lookup)
        if key is not None:
            shapes.setdefault(key, "text")
    for loop in tree.find_all(nodes.For):
        name = variable(loop.iter) if isinstance(loop, nodes.For) else None
        if name in shapes:
            shapes[name] = "list"
    methods = {id(call.node) for call in tree.find_all(nodes.Call) if isinstance(call, nodes.Call)}
    for lookup in lookups:
        name, key = variable(lookup.node), key_of(lookup)
        if name not in shapes or key is None or id(lookup) in methods:
            continue
        shape = shapes[name]
        if shape != "list":
            shapes[name] = tuple(sorted({*(shape if isinstance(shape, tuple) else ()), key}))
    return dict(sorted(shapes.items()))


def model_of(text: str) -> ModelConfig | None:
    """The model config's model, provider and key variable; None if it names no model."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, str) or not model.strip():
        return None
    provider = data.get("provider")
    if provider not in ("openai", "anthropic"):
        provider = "anthropic" if model.lower().startswith("claude") else "openai"
    key_env = data.get("api_key_env")
    if not isinstance(key_env, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key_env):
        key_env = f"{provider.upper()}_API_KEY"
    return ModelConfig(model, provider, key_env)


def read_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


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
            found.append(PythonTarget(f"{module}:{node.name}", path, keys, sdks))
    return found


def rank(target: PythonTarget) -> tuple[int, int, str]:
    name = target.target.rpartition(":")[2]
    preferred = ENTRY_NAMES.index(name) if name in ENTRY_NAMES else len(ENTRY_NAMES)
    return (preferred, target.path.count("/"), target.target)


def scan(root: Path) -> Findings:
    found = Findings()
    files = repository_files(root)
    for path in files:
        pure = PurePosixPath(path)
        if is_prompt_path(path):
            text = read_text(root / path)
            inputs = template_inputs(text) if text is not None else None
            if inputs is not None:
                found.prompts.append(Prompt(path, tuple(inputs), inputs))
        elif (
            pure.suffix in {".yml", ".yaml"}
            and pure.parts[0] != ".github"
            and pure.name not in {"gate.yml", "gate.yaml"}
        ):
            text = read_text(root / path)
            model = model_of(text) if text is not None else None
            if model:
                found.model_configs.append(path)
                found.models[path] = model
    known = {p.path for p in found.prompts} | set(found.model_configs)
    for path in files:
        if path.endswith(".py"):
            text = read_text(root / path)
            if text is not None:
                found.targets += entry_points(path, text, known)
    found.targets.sort(key=rank)
    return found


def nearest(prompt: str, configs: list[str]) -> str:
    """The model config closest to the prompt in the tree (longest shared folder prefix)."""

    def shared(config: str) -> int:
        a, b = PurePosixPath(prompt).parts[:-1], PurePosixPath(config).parts[:-1]
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    return max(configs, key=lambda c: (shared(c), -configs.index(c)))
