"""Text for a CI job's log that the runner reads as no workflow command.

GitHub's runner reads every line a step prints, on stdout and on stderr, for commands: `::name
props::data` at a line's start (after spaces) and the legacy `##[name props]data` anywhere in
a line. Suite names, case ids, reasons, errors and answers are the PR's or a model's text; one
printed as it is could raise an annotation, mask a value or stop the processing of the gate's
own commands. `defuse` puts a zero-width space inside every `::` and `##[`, so neither form can
occur however the text's lines break, and a reader sees the same characters. `Defused` does it
to a whole stream (`gate` under Actions, but for `gate action`, which writes commands of its
own and prints what it does not control between paused commands).
"""

from __future__ import annotations

import io
import re
from typing import TextIO

BREAK = "\u200b"  # zero-width space: not white space to the runner, invisible to a reader
_COLONS = re.compile(r":(?=:)")


def defuse(text: str) -> str:
    """`text` without `::` and `##[`: neither form of a workflow command can occur in it."""
    return _COLONS.sub(":" + BREAK, text).replace("##[", "##" + BREAK + "[")


def _held(text: str) -> int:
    """How many of `text`'s last characters wait for the next write: its trailing run of `:`
    or of `#`, which the next write could make a `::` or a `##[`."""
    for char in ":#":
        size = len(text) - len(text.rstrip(char))
        if size:
            return size
    return 0


class Defused(io.TextIOBase):
    """A text stream whose writes reach `stream` defused; a tail that could begin a command
    with the next write (a run of `:` or `#`) waits for it, for the end of its line or for
    `close` (at exit): never for a flush, which would let writes build `::` between them."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.tail = ""

    def write(self, text: str) -> int:
        data = self.tail + text
        keep = 0 if data.endswith(("\n", "\r")) else _held(data)
        self.tail = data[len(data) - keep :] if keep else ""
        self.stream.write(defuse(data[: len(data) - keep]))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def close(self) -> None:
        if self.tail:
            self.stream.write(defuse(self.tail))
            self.tail = ""
        self.stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")


def defuse_job_log(*, stdout: bool = True) -> None:
    """Under GitHub Actions, stderr (and `stdout`) defused for the rest of the process."""
    import atexit
    import os
    import sys

    if os.environ.get("GITHUB_ACTIONS") != "true" or isinstance(sys.stderr, Defused):
        return
    for name in ("stdout", "stderr") if stdout else ("stderr",):
        stream = Defused(getattr(sys, name))
        setattr(sys, name, stream)
        atexit.register(stream.close)
