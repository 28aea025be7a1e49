"""`watch` globs as GitHub's `paths` filters read them (pure): what the user wrote in
gate.yml, matched against the paths a PR changed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as GitHub's `paths` filters read it: `*` and `?` stay within a folder, `**`
    crosses folders, `[abc]` is a class; a trailing `/` means everything below."""
    glob = pattern.strip().removeprefix("./").lstrip("/")
    if glob.endswith("/"):
        glob += "**"
    out: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 2 :]:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end]
            negate = body[:1] in ("!", "^")
            body = re.escape(body[1:] if negate else body).replace("\\-", "-")
            out.append(f"[{'^' if negate else ''}{body}]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_matches(pattern: str, path: str) -> bool:
    """A pattern without wildcards also matches everything inside the folder it names."""
    regex = glob_regex(pattern)
    if regex.fullmatch(path):
        return True
    if any(c in pattern for c in "*?["):
        return False
    folder = pattern.strip().removeprefix("./").strip("/")
    return bool(folder) and path.startswith(folder + "/")


def watched(path: str, patterns: Sequence[str]) -> bool:
    """Whether `path` is watched; a later `!pattern` excludes, like GitHub's filters."""
    verdict = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if glob_matches(pattern[1:], path):
                verdict = False
        elif glob_matches(pattern, path):
            verdict = True
    return verdict


def reaches_below(pattern: str, folder: str) -> bool:
    """Whether `pattern` matches `folder` or may match a path inside it (a submodule's folder,
    whose files git does not list): segment by segment, `**` anywhere before the folder's
    end counting as a match."""
    if pattern.startswith("!"):
        return False
    if glob_matches(pattern, folder):
        return True
    glob = pattern.strip().removeprefix("./").strip("/").split("/")
    parts = folder.strip("/").split("/")
    if len(glob) <= len(parts) and "**" not in glob:
        return False
    for segment, part in zip(glob, parts, strict=False):
        if segment == "**" or "**" in segment:
            return True
        if not glob_regex(segment).fullmatch(part):
            return False
    return True
