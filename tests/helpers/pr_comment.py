"""The PR's one comment, and a suite's section of it, as tests read them."""

from __future__ import annotations

from typing import Any

from gate.render.markdown import text
from gate.render.pr_comment import PR_MARKER, RULE


def section(body: str, suite: str) -> str:
    """The suite's section of a PR comment, under the comment's marker line (as a comment of
    its own would read): the whole comment when it holds one suite."""
    first, _, rest = body.partition("\n")
    assert first == PR_MARKER, first
    parts = rest.split(RULE)
    if len(parts) == 1:
        return body
    named = f"** ({text(suite, 60)})"
    found = [p for p in parts[1:] if named in p.split("\n", 1)[0].split(" — ")[0]]
    assert len(found) == 1, f"no section of {suite!r} in the comment:\n{body}"
    return f"{PR_MARKER}\n{found[0]}"


def the_comment(comments: list[Any]) -> str:
    """The body of the one comment whose first line is the PR's marker."""
    (body,) = [c.body for c in comments if c.body.split("\n", 1)[0] == PR_MARKER]
    return body
