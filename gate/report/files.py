"""Writing files so that a reader (or a second process) never sees half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, text: str, *, folder_mode: int = 0o777) -> None:
    """Write to a temporary file beside `path`, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=folder_mode)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
