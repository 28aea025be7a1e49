"""What `gate init` finds in a repository: prompt templates, model configs, a Python entry point.

Nothing is imported or executed: files are matched by name and read as text, YAML or Python
syntax trees (`entry_points`). The rules, also in docs/init.md:

- **Files looked at**: those git tracks or would track (`git ls-files --cached --others
  --exclude-standard`, so `.gitignore`d folders such as virtualenvs are skipped); outside git,
  every file except hidden, virtualenv, cache and `node_modules` folders.
- **Prompt template**: a `.j2`, `.jinja`, `.jinja2` or `.prompt` file, or a `.md`/`.txt` file
  in a folder named `prompt`/`prompts`/`templates` or whose name contains `prompt`. README,
  CHANGELOG and LICENSE files are never prompts.
  A template that does not compile (a syntax error, or a filter neither jinja2 nor nunjucks
  has: nunjucks' `dump` and `nl2br` and promptfoo's `load` are the gate's too) is skipped,
  with its reason. A `.txt` prompt file holding several prompts separated by lines
  of `---` (promptfoo's format) is that many prompts: each is written to its own file under
  `evals/prompts/`, which the suites evaluate.
- **Model config**: a `.yml`/`.yaml` file whose top level is a mapping with a string `model:`
  (outside `.github/`, and not `gate.yml`). Its `provider:`, else a `claude…` model name,
  makes it anthropic, else openai; its key variable is `api_key_env:` or the provider's. The
  file its `system:` names is its system prompt, not a prompt of its own.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

import yaml

from gate.init.entry_points import PythonTarget, entry_points, rank

if TYPE_CHECKING:
    from jinja2 import nodes  # at run time, imported only where a template is read

    Lookup = nodes.Getattr | nodes.Getitem

PROMPT_SUFFIXES = {".j2", ".jinja", ".jinja2", ".prompt"}
PROMPT_TEXT_SUFFIXES = {".md", ".txt"}
PROMPT_FOLDERS = {"prompt", "prompts", "templates"}
NOT_PROMPTS = {"readme", "changelog", "license", "contributing", "code_of_conduct", "security"}
SKIPPED_FOLDERS = {"node_modules", "__pycache__", "venv", "env", "site-packages", "dist", "build"}
MAX_BYTES = 512 * 1024  # bigger files are data, not prompts or configs
PARTS_DIR = "evals/prompts"  # where the prompts of a `---`-separated file are written
PART_SEPARATOR = "---"


# An example input value's shape: a string, an (empty) list, or a mapping with these keys.
Shape = Literal["text", "list"] | tuple[str, ...]


@dataclass(frozen=True)
class Prompt:
    path: str  # relative to the repository root, with forward slashes
    variables: tuple[str, ...]  # the keys the template needs in the case input, sorted
    shapes: dict[str, Shape] = field(default_factory=dict)  # by key; "text" when absent
    text: str | None = None  # a prompt of a `---` file: gate init writes it to `path`
    source: str | None = None  # ... the file it comes from


@dataclass(frozen=True)
class ModelConfig:
    model: str  # its `model:`
    kind: str  # the suite's system kind: openai or anthropic
    key_env: str  # the variable the provider's key is read from
    system: str | None = None  # its `system:` prompt file, relative to the repository root
    tools: tuple[str, ...] = ()  # the names of the tools it offers the model (`tools:`)


@dataclass
class Findings:
    prompts: list[Prompt] = field(default_factory=list)
    model_configs: list[str] = field(default_factory=list)
    models: dict[str, ModelConfig] = field(default_factory=dict)  # by model config path
    targets: list[PythonTarget] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (prompt file, why)
    promptfoo: list[str] = field(default_factory=list)  # promptfoo configs (`gate.init.promptfoo`)


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


def _environment() -> Any:
    """The environment prompts render in (jinja2's sandbox) with their filters (nunjucks'
    too), to parse templates: never to render them."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from gate.promptfoo.inputs.nunjucks import NUNJUCKS_FILTERS

    environment = ImmutableSandboxedEnvironment()
    environment.filters.update(NUNJUCKS_FILTERS)
    return environment


def template_problem(text: str) -> str | None:
    """Why the text is no template the gate can render (a syntax error, a filter neither
    jinja2 nor nunjucks has), with its line; None when it is one."""
    import jinja2
    from jinja2 import meta

    from gate.promptfoo.inputs.nunjucks import unknown_filter

    environment = _environment()
    problem = unknown_filter(environment, text, "")
    if problem is not None:
        return f"{problem.message.split(':')[0]} (line {problem.line})"
    try:  # parsed, never rendered, by the environment prompts render in
        meta.find_undeclared_variables(environment.parse(text))
    except jinja2.TemplateError as exc:
        line = getattr(exc, "lineno", None)
        message = (exc.message or type(exc).__name__).rstrip(".")
        return message + (f" (line {line})" if line else "")
    return None


def prompt_parts(path: str, text: str) -> list[str]:
    """The prompts of a file: a `.txt` file's parts between lines of `---`, as promptfoo
    reads them (blank parts dropped); any other file is one prompt."""
    if PurePosixPath(path).suffix.lower() != ".txt":
        return [text]
    parts: list[list[str]] = [[]]
    for line in text.splitlines():
        if line.strip() == PART_SEPARATOR:
            parts.append([])
        else:
            parts[-1].append(line)
    kept = ["\n".join(part).strip() + "\n" for part in parts if "".join(part).strip()]
    return kept if len(parts) > 1 else [text]


def _prompts_of(path: str, text: str, found: Findings) -> None:
    parts = prompt_parts(path, text)
    for number, part in enumerate(parts, start=1):
        own = PurePosixPath(path)
        where = path if len(parts) == 1 else f"{path} (prompt {number} of {len(parts)})"
        problem = template_problem(part)
        if problem is not None:
            found.skipped.append((where, f"not a jinja2 template: {problem}"))
            continue
        inputs = template_inputs(part) or {}
        if len(parts) == 1:
            found.prompts.append(Prompt(path, tuple(inputs), inputs))
        else:
            written = f"{PARTS_DIR}/{own.stem}-{number}{own.suffix}"
            found.prompts.append(Prompt(written, tuple(inputs), inputs, part, path))


def template_inputs(text: str) -> dict[str, Shape] | None:
    """The keys a jinja2 template needs in the case input, each with the shape of an example
    value that renders; None if it does not parse.

    Its undeclared variables, except `input` (the whole input, given by the gate): the keys the
    template reads from that (`input.question`, `input["lang"]`) count instead. A variable
    the template loops over is a list (`{% for d in docs %}`: an empty one); one it reads keys
    from (`{{ user.name }}`, not a method call such as `name.upper()`) a mapping of them."""
    from jinja2 import nodes

    if template_problem(text) is not None:
        return None
    tree = _environment().parse(text)
    shapes: dict[str, Shape] = {name: "text" for name in _undeclared(tree) - {"input"}}
    lookups = [
        n for n in tree.find_all((nodes.Getattr, nodes.Getitem))
        if isinstance(n, nodes.Getattr | nodes.Getitem)
    ]  # fmt: skip
    for lookup in lookups:
        key = _from_input(lookup)
        if key is not None:
            shapes.setdefault(key, "text")
    for loop in tree.find_all(nodes.For):
        name = _variable(loop.iter) if isinstance(loop, nodes.For) else None
        if name in shapes:
            shapes[name] = "list"
    _add_keys(shapes, lookups, tree)
    return dict(sorted(shapes.items()))


def _add_keys(shapes: dict[str, Shape], lookups: list[Lookup], tree: nodes.Template) -> None:
    """A variable read by key (not a method call such as `name.upper()`) is a mapping of the
    keys read; a list stays a list."""
    from jinja2 import nodes

    methods = {id(call.node) for call in tree.find_all(nodes.Call) if isinstance(call, nodes.Call)}
    for lookup in lookups:
        name, key = _variable(lookup.node), _key_of(lookup)
        if name not in shapes or key is None or id(lookup) in methods:
            continue
        shape = shapes[name]
        if shape != "list":
            shapes[name] = tuple(sorted({*(shape if isinstance(shape, tuple) else ()), key}))


def _key_of(node: nodes.Node) -> str | None:
    from jinja2 import nodes

    if isinstance(node, nodes.Getattr):
        return node.attr
    if isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
        return node.arg.value if isinstance(node.arg.value, str) else None
    return None


def _from_input(node: nodes.Node) -> str | None:
    """`input.key` or `input["key"]`: the key."""
    from jinja2 import nodes

    if isinstance(node, nodes.Getattr | nodes.Getitem) and isinstance(node.node, nodes.Name):
        key = _key_of(node) if node.node.name == "input" else None
        return key if key != "id" else None
    return None


def _variable(node: nodes.Node) -> str | None:
    from jinja2 import nodes

    if isinstance(node, nodes.Name):
        return None if node.name == "input" else node.name
    return _from_input(node)


def _undeclared(tree: Any) -> set[str]:
    from jinja2 import meta

    found: set[str] = meta.find_undeclared_variables(tree)
    return found


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
    system = data.get("system")
    shown = system if isinstance(system, str) else None
    return ModelConfig(model, provider, key_env, shown, tool_names(data))


def tool_names(data: dict[str, Any]) -> tuple[str, ...]:
    """The tools a model config offers: OpenAI's `tools` (and legacy `functions`) or
    Anthropic's, by name."""
    names: list[str] = []
    for key in ("tools", "functions"):
        value = data.get(key)
        for tool in value if isinstance(value, list) else []:
            if not isinstance(tool, dict):
                continue
            function = tool.get("function")
            name = function.get("name") if isinstance(function, dict) else tool.get("name")
            if isinstance(name, str) and name and name not in names:
                names.append(name)
    return tuple(names)


def read_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def scan(root: Path) -> Findings:
    found = Findings()
    files = repository_files(root)
    found.promptfoo = [f for f in files if PurePosixPath(f).name.startswith("promptfooconfig.")]
    for path in files:
        pure = PurePosixPath(path)
        if is_prompt_path(path):
            text = read_text(root / path)
            if text is not None:
                _prompts_of(path, text, found)
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
    _drop_system_prompts(found)
    known = {p.source or p.path for p in found.prompts} | set(found.model_configs)
    for path in files:
        if path.endswith(".py"):
            text = read_text(root / path)
            if text is not None:
                found.targets += entry_points(path, text, known)
    found.targets.sort(key=rank)
    return found


def _drop_system_prompts(found: Findings) -> None:
    """A model config's `system:` file is the system message of that config's suites, not a
    prompt of its own: a suite sending it as the user message would evaluate nothing real."""
    owners = {
        PurePosixPath(m.system).as_posix(): path
        for path, m in found.models.items()
        if m.system is not None
    }
    for prompt in [p for p in found.prompts if p.path in owners]:
        found.prompts.remove(prompt)
        found.skipped.append((prompt.path, f"the system prompt of {owners[prompt.path]}"))


def nearest(prompt: str, configs: list[str]) -> str:
    """The model config closest to the prompt in the tree (longest shared folder prefix)."""

    def shared(config: str) -> int:
        a, b = PurePosixPath(prompt).parts[:-1], PurePosixPath(config).parts[:-1]
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n]:
            n += 1
        return n

    return max(configs, key=lambda c: (shared(c), -configs.index(c)))
