"""Folders and files any uid may write, outside the test's closed temporary folders: where a
system that runs as an unprivileged uid (the gate as root) leaves what it did, for the test
to read."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def open_folder(prefix: str) -> Iterator[Path]:
    """A folder in /tmp anyone may write (sticky, as /tmp is), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    folder.chmod(0o1777)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def open_file(prefix: str, name: str) -> Iterator[Path]:
    """An empty file anyone may append to, in an `open_folder`."""
    with open_folder(prefix) as folder:
        path = folder / name
        path.touch()
        path.chmod(0o666)
        yield path
