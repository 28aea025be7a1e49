"""The plain-text style of the view, for a terminal (`--format text`).

The same pieces as the Markdown comment, without Markdown: untrusted text shown as it is but
inert (control and direction-changing characters made visible, so a model's output cannot
move the cursor, clear the screen or change colours), blocks and diffs indented, diff lines
red and green when the terminal takes colour. Links show their label; the full report's and
the run's their address too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup

from gate.render.links import URL
from gate.render.markdown import Md, block_body, one_line, sanitize, shorten
from gate.render.style import Style

_SPACES = re.compile(r"\s+")
INDENT = "    "
RESET = "\x1b[0m"
DIFF_COLOURS = {"-": "\x1b[31m", "+": "\x1b[32m", "@": "\x1b[36m"}


def indented(body: str) -> str:
    return "\n".join(f"{INDENT}{line}".rstrip() for line in body.split("\n"))


@dataclass(frozen=True)
class PlainStyle(Style):
    """Plain text; `colour`: ANSI colours for the lines of diffs."""

    colour: bool = False

    def text(self, value: object, limit: int = 300) -> Md:
        return Md(shorten(one_line(str(value)), limit))

    def code(self, value: object, limit: int = 120) -> Md:
        return self.text(value, limit)

    def block(self, value: str, *, max_chars: int = 600, max_lines: int = 12, lang: str = "") -> Md:
        return Md(indented(block_body(value, max_chars=max_chars, max_lines=max_lines)))

    def diff(self, lines: Sequence[str]) -> Md:
        out = []
        for line in lines:
            start = DIFF_COLOURS.get(line[:1]) if self.colour else None
            out.append(f"{INDENT}{start}{line}{RESET}" if start else f"{INDENT}{line}".rstrip())
        return Md("\n".join(out))

    def strong(self, piece: str) -> Md:
        return Md(piece)  # colour is for the diff lines alone

    def emphasis(self, piece: str) -> Md:
        return Md(piece)

    def link(self, label: Md, url: str | None) -> Md:
        return label

    def destination(self, label: Md, url: str | None) -> Md:
        """The label and the address, which terminals let one open."""
        safe = url if url and URL.fullmatch(url) else None
        return Md(f"{label} <{safe}>") if safe else label

    def lines(self, parts: Sequence[str]) -> Md:
        return Md("; ".join(parts))

    def highlight(self, before: str, phrase: str, after: str) -> Md:
        return Md(f"{_inline(before)}{self.strong(_inline(phrase))}{_inline(after)}")

    def dollars(self, amount: str) -> Md:
        return Md(amount)


def _inline(value: str) -> str:
    """Untrusted text as part of an inline run: one line, its edge spaces kept."""
    return _SPACES.sub(" ", sanitize(value))


def width(value: str) -> int:
    """Columns a string takes on a terminal: wide characters (CJK, emoji, and a character that
    a variation selector asks to show as emoji, like ✏️) take two; joiners, combining marks and
    the selectors themselves none."""
    total = 0
    for i, char in enumerate(value):
        following = value[i + 1 : i + 2]
        if unicodedata.combining(char) or "\ufe00" <= char <= "\ufe0f" or char == "\u200d":
            continue
        wide = unicodedata.east_asian_width(char) in ("W", "F") or following == "\ufe0f"
        total += 2 if wide else 1
    return total


def _cell(row: object, key: str) -> str:
    value = row[key] if isinstance(row, Mapping) else getattr(row, key)
    if isinstance(value, Markup):
        return str(value)
    return "" if value is None else PlainStyle().text(value)


def columns(rows: Iterable[object], keys: Sequence[str], header: Sequence[str]) -> Md:
    """Rows (mappings or objects) as aligned columns under `header`, indented: the terminal's
    table. Cells that are not already trusted text are made inert."""
    table = [list(header), *([_cell(row, key) for key in keys] for row in rows)]
    widths = [max(width(line[i]) for line in table) for i in range(len(keys))]
    lines = [
        "  " + "  ".join(cell + " " * (widths[i] - width(cell)) for i, cell in enumerate(line))
        for line in table
    ]
    return Md("\n".join(line.rstrip() for line in lines))
