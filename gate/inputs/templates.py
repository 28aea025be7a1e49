"""The comment templates a gate.yml names (`templates:`), read once into data.

The renderer is handed the files' text, never a folder: it reads nothing from disk, and a
template cannot reach a file by a symlink or a path. A folder is read whole here, its files
checked to lie inside the repository (a symlink pointing outside is refused) and decoded as
UTF-8. Each file keeps the name it is shown by in errors (`tpl/comment.md.j2`, or with the
commit it was read from), so a broken template is named at its file and line.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from gate.errors import InputError
from gate.inputs.text_files import decode_utf8

MAX_FILES = 200
MAX_BYTES = 1024 * 1024


class TemplateFile(BaseModel):
    """One template: its name for jinja2 (`comment.md.j2`, `parts/x.j2`), its text, and how
    errors show it."""

    model_config = ConfigDict(frozen=True)

    name: str
    source: str
    display: str


class TemplateSet(BaseModel):
    """A folder of templates as data; `origin` is the folder as shown (`tpl`)."""

    model_config = ConfigDict(frozen=True)

    origin: str
    files: tuple[TemplateFile, ...] = ()

    def get(self, name: str) -> TemplateFile | None:
        return next((f for f in self.files if f.name == name), None)


def _inside(path: Path, root: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _files_below(folder: Path, within: Path, display: str) -> list[Path]:
    """Every file below `folder` (symlinked folders inside `within` followed once)."""
    found: list[Path] = []
    seen: set[Path] = set()
    for top, dirs, names in os.walk(folder, followlinks=True):
        real = Path(top).resolve()
        if real in seen or not _inside(real, within):
            dirs[:] = []
            continue
        seen.add(real)
        dirs.sort()
        found += [Path(top) / n for n in sorted(names)]
        if len(found) > MAX_FILES:
            raise InputError(
                f"more than {MAX_FILES} files in the template folder", file=display, key="templates"
            )
    return found


def read_template_folder(folder: Path, display: str, *, within: Path) -> TemplateSet:
    """The templates of `folder`, shown as `display`; nothing may lie outside `within`."""
    if not folder.is_dir():
        raise InputError("template folder not found", file=display, key="templates")
    if not _inside(folder, within):
        raise InputError(f"the template folder is outside {within}", file=display, key="templates")
    files: list[tuple[str, bytes]] = []
    for path in _files_below(folder, within, display):
        name = path.relative_to(folder).as_posix()
        shown = f"{display.rstrip('/')}/{name}"
        if not _inside(path, within):
            raise InputError(
                f"a symlink to {os.path.realpath(path)}, outside the repository: a template "
                "is read from the repository only",
                file=shown,
                key="templates",
            )
        if path.stat().st_size > MAX_BYTES:
            raise InputError(f"larger than {MAX_BYTES:,} bytes", file=shown, key="templates")
        files.append((name, path.read_bytes()))
    return template_set(display, files)


def template_set(origin: str, files: Iterable[tuple[str, bytes]]) -> TemplateSet:
    """Templates from their names (relative to the folder) and contents, e.g. read from a
    commit; shown as `origin/name`."""
    decoded = []
    for name, data in files:
        shown = f"{origin.rstrip('/')}/{name}"
        decoded.append(TemplateFile(name=name, source=decode_utf8(data, shown), display=shown))
    return TemplateSet(origin=origin, files=tuple(decoded))
