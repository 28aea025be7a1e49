"""Escaping for GitHub-flavoured Markdown: untrusted text in, inert Markdown out.

Model output and case text are hostile. Whatever they hold, the escaped form cannot end a
table row or cell, close a code span, fence or `<details>`, inject HTML, start a list or
heading, ping anyone (`@user`, `@org/team`), link an issue (`#123`) or a site, hide itself
with control or bidirectional-override characters, or typeset math (`$...$`).

`Md` marks text that is already safe Markdown; the template environment escapes every other
string it prints (see `gate.render.environment`).
"""

from __future__ import annotations

import re
import textwrap

from markupsafe import Markup

ZWJ = "\N{ZERO WIDTH JOINER}"
ELLIPSIS = "\N{HORIZONTAL ELLIPSIS}"
WRAP = 100
LONG_WORD = 40
ZWSP = "\N{ZERO WIDTH SPACE}"


class Md(Markup):
    """A string of trusted Markdown: printed as is by the templates.

    A `Markup` so that jinja2's autoescaping (which macros and `join` rely on) trusts it too."""

    __slots__ = ()


# C0 controls except tab/newline/carriage return, DEL and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Bidirectional embeddings, overrides, isolates and marks (Trojan Source), and separators
# that some renderers treat as line breaks.
_BIDI = re.compile(r"[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_SEPARATORS = re.compile(r"[\u2028\u2029\x85]")
_SPACES = re.compile(r"\s+")
_LONG_RUN = re.compile(rf"\S{{{LONG_WORD + 1},}}")
# Backslash-escapable punctuation that means something to CommonMark, GFM or GitHub
# (emphasis, code, links, images, tables, headings, lists, strikethrough, math).
_PUNCT = re.compile(r"([\\`*_{}\[\]()#+\-!|~$])")
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}
_ENTITY = re.compile(r'[&<>"]')
# What GitHub would turn into a mention or an issue/PR reference after rendering.
# A trailing `@` or `#` too: the markup that follows a piece of escaped text (`<br>`, a cell
# border, a quote) may put a name or a number right after it.
_MENTION = re.compile(r"@(?=[A-Za-z0-9]|$)")
_REFERENCE = re.compile(r"#(?=[0-9]|$)")
_AUTOLINK = re.compile(r"(?i)\b(?:https?|ftp|mailto|www)(?=:|\.)")


def _visible_control(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ ␁ … ␛ …
    if code == 0x7F:
        return "\N{SYMBOL FOR DELETE}"
    return "\N{REPLACEMENT CHARACTER}"


def sanitize(text: str) -> str:
    """Make control and direction-changing characters visible; keep tabs and newlines."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _SEPARATORS.sub("\n", text)
    text = _CONTROL.sub(_visible_control, text)
    return _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def shorten(text: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when cut."""
    if limit <= 0:
        return ""
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + ELLIPSIS


def one_line(text: str) -> str:
    return _SPACES.sub(" ", sanitize(text)).strip()


def unlink(text: str) -> str:
    """Break what GFM's autolink extension would link: `https://`, `www.`, `a@b.com`.

    Needed even inside `<code>`, whose content cmark still parses as text."""
    return _AUTOLINK.sub(lambda m: m.group() + ZWJ, _MENTION.sub("@" + ZWJ, text))


def defuse(text: str) -> str:
    """Also break `@mentions` and `#123` references (the joiner after `@` does both), so the
    output can neither notify anyone nor link an issue or a site."""
    return _REFERENCE.sub("#" + ZWJ, unlink(text))


def _escape(text: str) -> str:
    escaped = _ENTITY.sub(lambda m: _ENTITIES[m.group()], text)
    return _PUNCT.sub(r"\\\1", escaped)


def breakable(text: str, every: int = LONG_WORD) -> str:
    """Let browsers wrap long unbroken runs (hashes, base64, "xxxx…") inside table cells."""
    return _LONG_RUN.sub(lambda m: ZWSP.join(textwrap.wrap(m.group(), every)), text)


def text(value: object, limit: int = 300) -> Md:
    """Untrusted text as one inline run: safe in paragraphs, list items and table cells."""
    return Md(defuse(_escape(breakable(shorten(one_line(str(value)), limit)))))


def prose(value: object, limit: int = 300) -> Md:
    """The gate's own sentence (a reason, a note) as one inline run, its `backtick spans` in
    monospace as the sentence means them; the rest escaped as `text` escapes it. An unpaired
    backtick (a sentence cut short, or one that quotes a backtick) leaves it all text."""
    flat = shorten(one_line(str(value)), limit)
    parts = flat.split("`")
    if len(parts) % 2 == 0:
        return text(flat, limit)
    spans = [
        defuse(_escape(breakable(part))) if i % 2 == 0 else f"<code>{unlink(_escape(part))}</code>"
        for i, part in enumerate(parts)
    ]
    return Md("".join(spans))


def code(value: object, limit: int = 120) -> Md:
    """Untrusted text in monospace. `<code>` with escaped content works inside table cells
    (a backtick span would need `\\|` there and not elsewhere); GitHub links no mention in it."""
    return Md(f"<code>{unlink(_escape(shorten(one_line(str(value)), limit)))}</code>")


def fence_for(content: str, char: str = "`") -> str:
    longest = max((len(m) for m in re.findall(re.escape(char) + "+", content)), default=0)
    return char * max(3, longest + 1)


def block_body(value: str, *, max_chars: int, max_lines: int) -> str:
    """Untrusted text as the lines of a block: control characters made visible, long lines
    wrapped (model answers are often one long paragraph), cut to `max_lines` and `max_chars`."""
    lines = [
        piece
        for line in sanitize(value).expandtabs(4).split("\n")
        for piece in (textwrap.wrap(line, WRAP, drop_whitespace=False) or [""])
    ]
    body = "\n".join(lines)
    if len(lines) > max_lines:
        body = "\n".join(lines[:max_lines]) + "\n" + ELLIPSIS
    return shorten(body, max_chars)


def code_block(value: str, *, max_chars: int = 600, max_lines: int = 12, lang: str = "") -> Md:
    """A fenced block longer than any backtick run inside, so nothing can close it early.

    The block must start at the beginning of a line, outside lists: the templates put it at
    the top level."""
    body = block_body(value, max_chars=max_chars, max_lines=max_lines)
    fence = fence_for(body)
    info = re.sub(r"[^A-Za-z0-9_+-]", "", lang)
    return Md(f"{fence}{info}\n{body}\n{fence}")


def link(label: Md, url: str | None) -> Md:
    """`label` linked to `url` when the url is a plain http(s) address, else just `label`."""
    if not url or not re.fullmatch(r"https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'*+,;=%]+", url):
        return label
    safe = url.replace("(", "%28").replace(")", "%29")
    return Md(f"[{label}]({safe})")


def mermaid_label(value: str, limit: int = 24) -> str:
    """A chart label: letters, digits and a few separators only, inside double quotes."""
    cleaned = re.sub(r"[^A-Za-z0-9 _.\-/]", "_", one_line(value))
    return shorten(cleaned, limit) or "_"


def _inline(value: str) -> str:
    """Untrusted text as part of an inline run: like `text`, but its edge spaces are kept."""
    return defuse(_escape(breakable(_SPACES.sub(" ", sanitize(value)))))


def highlight(before: str, phrase: str, after: str) -> Md:
    """`before` **`phrase`** `after` as one inline run with the phrase in bold: each piece is
    escaped on its own and a zero-width joiner closes each piece, so nothing that spans the
    pieces (a mention, a reference, an autolink) can come alive."""
    return Md(f"{_inline(before)}{ZWJ}<b>{_inline(phrase)}{ZWJ}</b>{_inline(after)}")
