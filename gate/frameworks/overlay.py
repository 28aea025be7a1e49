"""A side's run folder: a private copy of its checkout with the instrument's files taken from
the checkout that measures (the base's, in the PR flow).

The copy is the side's code as it is (its system); every file the instrument's globs match is
the measuring checkout's: edited ones are the base's again, ones the PR added are gone, ones it
removed are back. A symlink on the way to an instrument file is replaced by a folder, so that
no file is written outside the copy. As root the copy stays the gate's: the system's
unprivileged uid reads it and cannot rewrite a test or a scorer while the run goes on. Nothing
in it bears a name of the gate's runner modules (`RESERVED`), which the run folder's place first
on the import path would let stand in for them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gate.frameworks.instrument import SKIPPED, checkout_files, instrument_files
from gate.inputs.globs import watched

RESERVED = "_eval_gate_"  # the prefix of the gate's runner modules (gate.frameworks.process)


@contextmanager
def scratch_folder() -> Iterator[Path]:
    """A private folder others may enter (the system's uid must read what lies in it)."""
    folder = Path(tempfile.mkdtemp(prefix="gate-framework-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def build_overlay(side_root: Path, instrument_root: Path, globs: list[str], dest: Path) -> Path:
    """`dest`: `side_root` copied, with the files of `instrument_root` that `globs` match."""
    side_root, instrument_root = side_root.resolve(), instrument_root.resolve()
    skipped = shutil.ignore_patterns(*SKIPPED, f"{RESERVED}*")
    shutil.copytree(side_root, dest, symlinks=True, ignore=skipped, dirs_exist_ok=True)
    if instrument_root != side_root:
        _lay_instrument(instrument_root, globs, dest)
    return dest


def _lay_instrument(instrument_root: Path, globs: list[str], dest: Path) -> None:
    """The files `globs` match in `dest` replaced by `instrument_root`'s (none of the gate's
    reserved names)."""
    for rel in checkout_files(dest):
        if watched(rel, globs):
            (dest / rel).unlink()
    for rel in instrument_files(instrument_root, globs):
        if rel.startswith(RESERVED):
            continue
        source = instrument_root / rel
        target = _safe_target(dest, rel)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        else:
            shutil.copy2(source, target)


def _safe_target(dest: Path, rel: str) -> Path:
    """`dest/rel` with every folder on the way a real folder of the copy (a symlink there is
    removed first) and nothing at `rel` itself."""
    current = dest
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(mode=0o755, exist_ok=True)
    target = current / Path(rel).name
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    return target
