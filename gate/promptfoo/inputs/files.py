"""The files a promptfoo config names, read from one checkout (or one commit): `file://` paths
and globs, relative to the file that names them and never outside the checkout.

A `Files` reads paths relative to its root (a checkout's folder, or a commit through git) and
remembers every path and glob it was asked for, so change detection can watch them all.
`load_ref` is promptfoo's `maybeLoadFromExternalFile`: JSON and YAML become data, CSV becomes
its rows, anything else its text.
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from gate.errors import InputError
from gate.inputs.globs import glob_regex
from gate.promptfoo.inputs.js import js_json_loads
from gate.promptfoo.inputs.yaml12 import load_yaml12

FILE = "file://"
WILDCARDS = "*?["
SKIPPED = {".git", "node_modules", ".venv", "venv", "__pycache__"}


class Files(Protocol):
    """A checkout's files by relative POSIX path."""

    seen: list[str]

    def text(self, path: str) -> str | None:
        """The file's text; None when there is no such file."""
        ...

    def listing(self, folder: str) -> list[str]:
        """Every file below `folder` (`""`: the whole checkout), relative to the root."""
        ...


class DiskFiles:
    """Files of a folder on disk (a checkout)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.seen: list[str] = []

    def text(self, path: str) -> str | None:
        file = self.root / path
        if not file.is_file():
            return None
        if not file.resolve().is_relative_to(self.root):  # a symlink out of the checkout
            raise InputError("leads outside the checkout (a symlink): not read", file=path)
        try:
            return file.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text: {exc.reason}", file=path) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror}", file=path) from None

    def listing(self, folder: str) -> list[str]:
        base = self.root / folder
        found: list[str] = []
        for here, dirs, names in os.walk(base):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
            rel = Path(here).relative_to(self.root).as_posix()
            found += [n if rel == "." else f"{rel}/{n}" for n in sorted(names)]
        return found


def resolve(base: str, ref: str, where: str | None = None) -> str:
    """`ref` (relative to the folder `base`, or absolute within the checkout) as a path
    relative to the checkout; one that leaves the checkout is an error."""
    ref = ref.removeprefix(FILE)
    parts: list[str] = (
        [] if ref.startswith("/") else [p for p in base.split("/") if p not in ("", ".")]
    )
    for part in ref.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise InputError(f"{ref!r} is outside the checkout", file=where)
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def folder_of(path: str) -> str:
    parent = PurePosixPath(path).parent.as_posix()
    return "" if parent == "." else parent


def read(files: Files, path: str, where: str | None = None) -> str:
    files.seen.append(path)
    text = files.text(path)
    if text is None:
        raise InputError(f"file {path!r} not found", file=where)
    return text


def is_glob(ref: str) -> bool:
    return any(c in ref for c in WILDCARDS)


def glob(files: Files, pattern: str, where: str | None = None) -> list[str]:
    """The files matching `pattern` (relative to the checkout), sorted; none is an error."""
    files.seen.append(pattern)
    literal = folder_of(pattern.split("*")[0].split("?")[0].split("[")[0] + "x")
    regex = glob_regex(pattern)
    found = sorted(p for p in files.listing(literal) if regex.fullmatch(p))
    if not found:
        raise InputError(f"no files match {pattern!r}", file=where)
    return found


def expand(files: Files, base: str, ref: str, where: str | None = None) -> list[str]:
    """A `file://` reference or a glob, as the files it names."""
    path = resolve(base, ref, where)
    return glob(files, path, where) if is_glob(path) else [path]


def parse_file(text: str, path: str) -> Any:
    """A file's content as promptfoo reads a referenced file."""
    if path.endswith(".json"):
        try:
            return js_json_loads(text)
        except ValueError as exc:
            raise InputError(f"malformed JSON: {exc}", file=path) from None
    if path.endswith((".yaml", ".yml")):
        return load_yaml12(text, path)[0]
    if path.endswith(".csv"):
        rows = list(csv.DictReader(io.StringIO(text.removeprefix("\ufeff"))))
        if rows and len(rows[0]) == 1:
            return [next(iter(row.values())) for row in rows]
        return rows
    return text


def load_ref(files: Files, base: str, value: Any, where: str | None = None) -> Any:
    """promptfoo's `maybeLoadFromExternalFile`: a `file://` string becomes the file's content
    (a glob: every file's, lists spread), anything else stays."""
    if isinstance(value, list):
        return [load_ref(files, base, item, where) for item in value]
    if not isinstance(value, str) or not value.startswith(FILE):
        return value
    paths = expand(files, base, value, where)
    if not is_glob(value):
        return parse_file(read(files, paths[0], where), paths[0])
    contents: list[Any] = []
    for path in paths:
        parsed = parse_file(read(files, path, where), path)
        if parsed is None:
            continue
        contents += parsed if isinstance(parsed, list) else [parsed]
    return contents


def load_refs(files: Files, base: str, value: Any, where: str | None = None) -> Any:
    """promptfoo's `maybeLoadConfigFromExternalFile`: every `file://` string in the data,
    except those of `vars` and a python or javascript assertion's `value` (read later)."""
    if isinstance(value, list):
        return [load_refs(files, base, item, where) for item in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        script = value.get("type") in ("python", "javascript")
        for key, item in value.items():
            keep = key == "vars" or (key == "value" and script)
            out[key] = item if keep else load_refs(files, base, item, where)
        return out
    return load_ref(files, base, value, where)


def walk_strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from walk_strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from walk_strings(item)


class Checkout:
    """Where a gate.yml's promptfoo configs are read: `files` (a checkout, or a commit) and
    the folder of gate.yml in it."""

    def __init__(self, files: Files, folder: str) -> None:
        self.files = files
        self.folder = folder
