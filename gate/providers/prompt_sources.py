"""A prompt template and every file it includes, imports or extends, read from the checkout.

`{% include %}`, `{% import %}`, `{% from … import %}` and `{% extends %}` name a file of the
side's checkout by a string literal: first relative to the prompt's folder, then to the
checkout's root (`{% include "partials/rules.md" %}` next to `prompts/support.md.j2`, or
`{% include "prompts/partials/rules.md" %}`). Everything is read once, before any case
renders, so every file a prompt reads is known: it is hashed into the report and watched for
changes. Refused, with an error naming the prompt file and line: an absolute path, a path
that leaves the checkout (`..`, or a symlink pointing outside), a missing file, a name
computed at render time (which could not be checked or watched), and a file that includes
itself (directly or through others).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, TemplateSyntaxError, nodes

from gate.errors import InputError
from gate.inputs.paths import relative_posix
from gate.inputs.text_files import read_utf8

LOADS = (nodes.Extends, nodes.Include, nodes.Import, nodes.FromImport)
MAX_FILES = 200


@dataclass(frozen=True)
class Source:
    """One template file: the name it is loaded by, its text, its path and how it is shown."""

    name: str
    text: str
    path: Path
    display: str


@dataclass(frozen=True)
class Load:
    """One `{% include %}`-like tag: the names it tries in order, where it is, and whether a
    missing file is allowed (`ignore missing`, or another name of its list exists)."""

    names: tuple[str, ...]
    line: int
    optional: bool


def _literal_names(expr: nodes.Node | None) -> list[str] | None:
    """The names a load's expression spells out; None when one is computed at render time."""
    if isinstance(expr, nodes.Const) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, nodes.List | nodes.Tuple):
        names = [_literal_names(item) for item in expr.items]
        return None if any(n is None for n in names) else [x for n in names for x in n or []]
    return None


def _loads(env: Environment, source: Source) -> Iterator[Load]:
    """Each file-loading tag of the template, parsed without running anything."""
    try:
        tree = env.parse(source.text, source.name, source.display)
    except TemplateSyntaxError as exc:
        raise InputError(
            f"template error: {exc.message}", file=source.display, line=exc.lineno
        ) from None
    for node in tree.find_all(LOADS):
        names = _literal_names(getattr(node, "template", None))
        if not names:
            tag = {"FromImport": "from", "Extends": "extends"}.get(type(node).__name__, "")
            raise InputError(
                f"`{{% {tag or type(node).__name__.lower()} %}}` must name its file as a string: "
                "a name computed when the prompt renders cannot be checked or watched",
                file=source.display,
                line=node.lineno,
            )
        optional = bool(getattr(node, "ignore_missing", False))
        yield Load(tuple(names), node.lineno, optional)


class PromptSources:
    """The prompt at `path` (shown as `display`) and the closure of what it loads; `mark`
    rewrites each file's text before it is compiled (the message markers)."""

    def __init__(
        self, env: Environment, root: Path, path: Path, display: str, mark: Callable[[str], str]
    ) -> None:
        self.root = root.resolve()
        self.search = list(dict.fromkeys([path.resolve().parent, self.root]))
        self.mark = mark
        top = Source(display, mark(read_utf8(path, display, "prompt template")), path, display)
        self.by_name: dict[str, Source] = {display: top}
        self.missing: list[str] = []  # optional names not found: watched, they may be added
        self._done: set[Path] = set()
        self._walk(env, top, ())

    @property
    def files(self) -> list[Path]:
        return list(dict.fromkeys(s.path.resolve() for s in self.by_name.values()))

    def get(self, name: str) -> Source | None:
        return self.by_name.get(name)

    def _walk(self, env: Environment, source: Source, chain: tuple[Path, ...]) -> None:
        chain = (*chain, source.path.resolve())
        for load in _loads(env, source):
            for found in self._resolve(load, source.display):
                if found.path.resolve() in chain:
                    raise InputError(
                        f"{found.name!r} loads itself ({source.display} → {found.display}): "
                        "a prompt may not include itself",
                        file=source.display,
                        line=load.line,
                    )
                self.by_name.setdefault(found.name, found)
                if len(self.by_name) > MAX_FILES:
                    raise InputError(f"loads more than {MAX_FILES} files", file=source.display)
                if found.path.resolve() not in self._done:
                    self._walk(env, found, chain)
        self._done.add(source.path.resolve())

    def _resolve(self, load: Load, including: str) -> list[Source]:
        """The files of a load that exist; an error when none does and one must."""
        found: list[Source] = []
        errors: list[InputError] = []
        for name in load.names:
            try:
                found.append(self.by_name.get(name) or self._read(name, including, load.line))
            except _Missing as missing:
                errors.append(missing.error)
                self.missing += missing.candidates
        if not found and errors and not load.optional:
            raise errors[0]
        return found

    def _read(self, name: str, including: str, line: int) -> Source:
        def refuse(why: str) -> InputError:
            return InputError(f"cannot load {name!r}: {why}", file=including, line=line)

        if Path(name).is_absolute() or name.startswith("\\"):
            raise refuse("an absolute path; name a file of the checkout")
        candidates = []
        for folder in self.search:
            candidate = folder / name
            shown = relative_posix(candidate, self.root)
            if shown is None:  # `..` or a symlink leads out
                raise refuse("it is outside the checkout (a `..` or a symlink leads out of it)")
            if candidate.is_file():
                text = self.mark(read_utf8(candidate, shown, "included template"))
                return Source(name, text, candidate, shown)
            candidates.append(shown)
        folders = " or ".join(str(relative_posix(f, self.root) or ".") for f in self.search)
        raise _Missing(refuse(f"no such file in {folders} of the checkout"), candidates)


class _Missing(Exception):
    def __init__(self, error: InputError, candidates: list[str]) -> None:
        self.error = error
        self.candidates = candidates
