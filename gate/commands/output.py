"""What more than one command prints with: the default format of standard output and whether
it takes colour. The line that sums up a side's report is `gate.run.summary_line`'s."""

from __future__ import annotations

import os
import sys


def terminal_default(out: str | None = None) -> str:
    """`text` for a person at a terminal, `markdown` for a pipe, a file or a script."""
    return "text" if out is None and sys.stdout.isatty() else "markdown"


def use_colour() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ
