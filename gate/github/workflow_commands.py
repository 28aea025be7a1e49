"""GitHub Actions I/O: workflow commands, step outputs and the job summary.

Formatting is pure (strings in, strings out); the two writers append to the files the runner
names in `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY`. Text from the PR, a model or the code
under test can hold workflow commands (`::name::` at a line's start, `##[name]` anywhere), so
the message of every command is escaped (one line: the runner reads the command and nothing
in its message), a line of ours that carries such text is defused (`plain`,
`gate.joblog.defuse`), and output we do not control is streamed inside `::stop-commands::`
with an unguessable token.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from gate.joblog import defuse

SUMMARY_LIMIT = 1024 * 1024  # the runner rejects a step summary above 1 MiB


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str = "", **properties: str | int | None) -> str:
    props = ",".join(
        f"{key}={escape_property(str(value))}"
        for key, value in properties.items()
        if value is not None and value != ""
    )
    return f"::{name}{' ' + props if props else ''}::{escape_data(message)}"


def plain(text: str) -> str:
    """A log line (or lines) of text the PR or a model may have written: no command."""
    return defuse(text)


def error(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    return command("error", message, file=file, line=line or None, title=title)


def warning(
    message: str, *, file: str | None = None, line: int | None = None, title: str | None = None
) -> str:
    return command("warning", message, file=file, line=line or None, title=title)


def notice(message: str) -> str:
    return command("notice", message)


def add_mask(value: str) -> str:
    return command("add-mask", value)


def output_block(name: str, value: str, delimiter: str | None = None) -> str:
    """One `GITHUB_OUTPUT` entry in the heredoc form, safe for multi-line values."""
    if not name or any(c in name for c in "\r\n=<"):
        raise ValueError(f"bad output name {name!r}")
    delimiter = delimiter or f"ghadelimiter_{secrets.token_hex(16)}"
    if delimiter in name or delimiter in value:
        raise ValueError("the output delimiter occurs in the value")
    return f"{name}<<{delimiter}\n{value}\n{delimiter}\n"


def write_outputs(path: Path, outputs: Mapping[str, str]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for name, value in outputs.items():
            handle.write(output_block(name, value))


def append_summary(path: Path, markdown: str) -> bool:
    """Append to the job summary; False (and a short note) when it would pass 1 MiB."""
    data = (markdown if markdown.endswith("\n") else markdown + "\n").encode("utf-8")
    used = path.stat().st_size if path.exists() else 0
    fits = used + len(data) <= SUMMARY_LIMIT
    if not fits:
        data = b"\n> The job summary is full (1 MiB): see the reports.\n"
        if used + len(data) > SUMMARY_LIMIT:
            return False
    with path.open("ab") as handle:
        handle.write(data)
    return fits


@contextmanager
def commands_paused(stream: TextIO) -> Iterator[None]:
    """Within the block the runner treats `::...::` lines as plain text."""
    token = secrets.token_hex(16)
    stream.write(f"::stop-commands::{token}\n")
    stream.flush()
    try:
        yield
    finally:
        stream.write(f"::{token}::\n")
        stream.flush()
