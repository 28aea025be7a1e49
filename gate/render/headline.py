"""The comment's top: the marker and the verdict line, written by the gate, never a template.

A template renders only the body below them. A user's template (possibly the PR's) has its
output defused before it is put there: what would read as a marker (`<!-- eval-gate:…`) is
escaped, so a comment carries exactly one, on its first line (where the PR flow looks for
it); a paragraph outside code blocks that reads as a verdict (`✅ **Eval Gate: pass**`, also
spelt with entities, emphasis, tags, zero-width or full-width characters, or over several
lines) is shown quoted and escaped, so the verdict on the first line is the only one that
renders as one. The built-in templates escape every untrusted text themselves. Pure.
"""

from __future__ import annotations

import html
import re
import unicodedata

from gate.compare.models import Comparison
from gate.render import values
from gate.render.markdown import Md, text
from gate.render.view import ICONS, delta_digits, headline_parts

_MARKER = re.compile(r"<!--(?=\s*eval-gate)", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_TAG = re.compile(r"<[^>]*>")
_EMPHASIS = re.compile(r"[*_~`\\]")
_CLAIM = re.compile(r"eval\W*gate\W*(pass|fail|error|skip)", re.IGNORECASE)


def reason_headline(c: Comparison) -> bool:
    """Nothing was compared (skipped, or a side could not run): the reason is the headline."""
    return c.verdict == "skipped" or (c.verdict == "error" and not c.head.n)


def verdict_line(c: Comparison, reason_chars: int) -> Md:
    """`❌ **Eval Gate: fail** (support) — pass rate 92.0% → 85.3% (−6.7 pts, threshold 3) · …`"""
    suite = f" ({text(c.suite, 60)})" if c.suite != "default" else ""
    start = f"{ICONS[c.verdict]} **Eval Gate: {c.verdict}**{suite} — "
    if reason_headline(c):
        return Md(start + text(c.reasons[0] if c.reasons else "nothing to compare", reason_chars))
    parts = "".join(f" · {part}" for part in headline_parts(c))
    if c.delta_points is None:
        why = (
            "this suite is new, so there is no baseline"
            if c.base_meta is None
            else ("no case ran on both sides")
        )
        return Md(f"{start}{why}; head pass rate {values.pct(c.head.pass_rate)}{parts}")
    return Md(
        f"{start}pass rate {values.pct(c.base_pass_rate)} → {values.pct(c.head_pass_rate)} "
        f"({values.pts(c.delta_points, delta_digits(c))} pts, "
        f"threshold {values.g(c.policy.threshold)}){parts}"
    )


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
