"""GitHub's own Markdown engine (cmarkgfm) and what the tests read of its HTML: the tags, the
attributes, and the text GitHub would scan for mentions and references."""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

from gate.render import RenderContext

CTX = RenderContext(
    suite="support",
    repository="acme/ledgerly",
    head_sha="b" * 40,
    base_sha="a" * 40,
    run_url="https://github.com/acme/ledgerly/actions/runs/7",
)
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
LIVE_MENTION = re.compile(r"(?<![\w/`])@[A-Za-z0-9]")
LIVE_REFERENCE = re.compile(r"#[0-9]")
IGNORED_PARENTS = {"code", "pre", "a"}  # where GitHub links no mention or reference


def github_html(markdown: str) -> str:
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


class Structure(HTMLParser):
    """Tags, attributes and the text GitHub would scan for mentions."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: list[str] = []
        self.stack: list[str] = []
        self.scanned_text: list[str] = []
        self.all_text: list[str] = []
        self.cells: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        if tag in {"td", "th"}:
            self.cells.append("")
        self.attributes += [name for name, _ in attrs]
        if tag not in {"br", "img", "hr", "input"}:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self.stack:
            while self.stack and self.stack.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        self.all_text.append(data)
        if {"td", "th"} & set(self.stack):
            self.cells[-1] += data
        if not IGNORED_PARENTS & set(self.stack):
            self.scanned_text.append(data)


def structure(markdown: str) -> Structure:
    parser = Structure()
    parser.feed(github_html(markdown))
    parser.close()
    return parser
