"""What a user's comment template writes, unable to pass for the gate's own top lines.

The gate writes the comment's top itself (`gate.render.headline`, put there by
`gate.render.render_comment`): the marker and the verdict line; a template renders only the
body below them. A user's template (possibly the PR's) has its output defused before it is put
there: what would read as a marker (`<!-- eval-gate:…`) is escaped, so a comment carries
exactly one, on its first line (where the PR flow looks for it); a paragraph outside code
blocks that reads as a verdict (`✅ **Eval Gate: pass**`, also spelt with entities, emphasis,
tags, zero-width or full-width characters, or over several lines) is shown quoted and escaped,
so the verdict on the first line is the only one that renders as one. The built-in templates
escape every untrusted text themselves. Pure.
"""

from __future__ import annotations

import html
import re
import unicodedata

from gate.render.markdown import text

_MARKER = re.compile(r"<!--(?=\s*eval-gate)", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TAG = re.compile(r"<[^>]*>")
_EMPHASIS = re.compile(r"[*_~`\\]")
_CLAIM = re.compile(r"eval\W*gate\W*(pass|fail|error|skip)", re.IGNORECASE)


def _plain(line: str) -> str:
    """The line as a reader sees it: entities decoded, tags, emphasis and invisible
    characters dropped, compatibility forms (full-width letters) folded."""
    line = unicodedata.normalize("NFKC", html.unescape(html.unescape(line)))
    line = "".join(ch for ch in line if unicodedata.category(ch) != "Cf")
    return _EMPHASIS.sub("", _TAG.sub("", line))


def _defused(block: list[str]) -> list[str]:
    """A paragraph that reads as a verdict line, shown quoted and escaped instead."""
    if not block or not _CLAIM.search(_plain(" ".join(block))):
        return block
    quoted = [f"> {text(line, 400)}" for line in block]
    return ["> ⚠️ not the verdict (text of the comment template):", *quoted, ""]


def defuse_body(body: str) -> str:
    """A user template's output, unable to add a marker or a verdict line (see the module's
    docstring). Paragraphs are checked whole: Markdown joins their lines into one."""
    out: list[str] = []
    block: list[str] = []
    fence: str | None = None
    for line in _MARKER.sub("&lt;!--", body).split("\n"):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if opened or not line.strip():
            out += _defused(block)
            block = []
            fence = opened.group(1) if opened else None
            out.append(line)
            continue
        block.append(line)
    return "\n".join(out + _defused(block))
