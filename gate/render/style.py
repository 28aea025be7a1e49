"""How the view's pieces are written: GitHub Markdown (the comment, the job summary) or plain
text (`--format text`, `gate.render.plain`).

The view (`gate.render.view`, `diff`, `metadata`, `usage`) builds the same pieces for every
format and asks a `Style` only how to write them. Untrusted text enters only through `text`,
`code` and `block`, which make it inert in either style; what a style returns is `Md`, trusted
output of that style (a `Markup`, so the templates print it as it is).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from gate.render.markdown import Md, code, code_block, fence_for, highlight, link, prose, text


class Style(ABC):
    """The writing of one output format."""

    @abstractmethod
    def text(self, value: object, limit: int = 300) -> Md:
        """Untrusted text as one inline run."""

    @abstractmethod
    def code(self, value: object, limit: int = 120) -> Md:
        """Untrusted text in monospace."""

    def prose(self, value: object, limit: int = 300) -> Md:
        """The gate's own sentence, its `backtick spans` shown as code (plain text keeps the
        backticks)."""
        return self.text(value, limit)

    @abstractmethod
    def block(self, value: str, *, max_chars: int = 600, max_lines: int = 12, lang: str = "") -> Md:
        """Untrusted text as a block of lines (`lang`: its language, where the format shows it)."""

    @abstractmethod
    def diff(self, lines: Sequence[str]) -> Md:
        """`-`/`+`/` ` lines (already made safe and cut) as a diff block."""

    @abstractmethod
    def strong(self, piece: str) -> Md:
        """Trusted words, stressed."""

    @abstractmethod
    def emphasis(self, piece: str) -> Md:
        """Trusted words, set apart (a remark rather than content)."""

    @abstractmethod
    def link(self, label: Md, url: str | None) -> Md:
        """`label`, linked to `url` where the format has links (a case, a commit)."""

    @abstractmethod
    def destination(self, label: Md, url: str | None) -> Md:
        """A link to a place the reader goes to (the full report, the workflow run): where the
        format has no links, its address is shown."""

    @abstractmethod
    def lines(self, parts: Sequence[str]) -> Md:
        """Trusted pieces, one under the other within one cell or item."""

    @abstractmethod
    def highlight(self, before: str, phrase: str, after: str) -> Md:
        """Untrusted text with `phrase` stressed, as one inline run."""

    @abstractmethod
    def dollars(self, amount: str) -> Md:
        """An amount of money, `$` and digits."""


class MarkdownStyle(Style):
    """GitHub-flavoured Markdown, escaped by `gate.render.markdown`."""

    def text(self, value: object, limit: int = 300) -> Md:
        return text(value, limit)

    def code(self, value: object, limit: int = 120) -> Md:
        return code(value, limit)

    def prose(self, value: object, limit: int = 300) -> Md:
        return prose(value, limit)

    def block(self, value: str, *, max_chars: int = 600, max_lines: int = 12, lang: str = "") -> Md:
        return code_block(value, max_chars=max_chars, max_lines=max_lines, lang=lang)

    def diff(self, lines: Sequence[str]) -> Md:
        body = "\n".join(lines)
        fence = fence_for(body)
        return Md(f"{fence}diff\n{body}\n{fence}")

    def strong(self, piece: str) -> Md:
        return Md(f"**{piece}**")

    def emphasis(self, piece: str) -> Md:
        return Md(f"*{piece}*")

    def link(self, label: Md, url: str | None) -> Md:
        return link(label, url)

    def destination(self, label: Md, url: str | None) -> Md:
        return link(label, url)

    def lines(self, parts: Sequence[str]) -> Md:
        return Md("<br>".join(parts))

    def highlight(self, before: str, phrase: str, after: str) -> Md:
        return highlight(before, phrase, after)

    def dollars(self, amount: str) -> Md:
        return Md("\\" + amount)  # `$` would start GitHub math


MARKDOWN = MarkdownStyle()
