"""A step's log read the way GitHub's runner reads it for workflow commands.

The runner (actions/runner, `ActionCommandManager`) splits what a step prints on stdout and
stderr into lines (`\\n`, `\\r\\n` or `\\r`) and tries each as a command:
- `::name props::data`: the line, its leading white space trimmed, starts with `::` and holds
  a second `::`; `name` runs to the first space;
- else the legacy `##[name props]data`, anywhere in the line;
either only when `name` is a command the runner knows (case-insensitively). After
`::stop-commands::TOKEN` it processes nothing until a command named `TOKEN` (either form).
`data` is unescaped (`%25`, `%0D`, `%0A`) as the runner does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KNOWN = {
    "add-mask", "add-matcher", "remove-matcher", "warning", "error", "notice", "debug",
    "group", "endgroup", "echo", "save-state", "set-output", "set-env", "add-path",
    "stop-commands", "internal-set-repo-path",
}  # fmt: skip
LINES = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Command:
    name: str
    properties: str
    data: str
    form: str  # "v2" (`::name::`) or "legacy" (`##[name]`)
    line: str


def _unescape(data: str) -> str:
    return data.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def _v2(line: str, known: set[str]) -> Command | None:
    text = line.lstrip()
    if not text.startswith("::"):
        return None
    end = text.find("::", 2)
    if end < 0:
        return None
    info = text[2:end]
    name, _, props = info.partition(" ")
    if name.lower() not in known:
        return None
    return Command(name.lower(), props, _unescape(text[end + 2 :]), "v2", line)


def _legacy(line: str, known: set[str]) -> Command | None:
    start = line.find("##[")
    if start < 0:
        return None
    end = line.find("]", start)
    if end < 0:
        return None
    name, _, props = line[start + 3 : end].partition(" ")
    if name.lower() not in known:
        return None
    return Command(name.lower(), props, _unescape(line[end + 1 :]), "legacy", line)


def processed_commands(log: str) -> list[Command]:
    """The commands the runner would process in `log`, in order (stop-commands included; the
    resume command is reported with the token as its name)."""
    found: list[Command] = []
    token: str | None = None
    for line in LINES.split(log):
        known = KNOWN | ({token.lower()} if token else set())
        command = _v2(line, known) or _legacy(line, known)
        if command is None:
            continue
        if token is not None:
            if command.name == token.lower():
                found.append(command)
                token = None
            continue
        found.append(command)
        if command.name == "stop-commands" and command.data:
            token = command.data
    return found
