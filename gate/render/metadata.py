"""The comment's metadata pieces: each side's system, and the files that shaped each run.

Pure: no I/O; what comes from a report is escaped into `Md`.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from gate.compare.models import Comparison
from gate.render import values
from gate.render.markdown import Md, code, text

SYSTEM_KEYS = ("kind", "provider", "model", "target", "temperature", "max_tokens")


def system_parts(system: dict[str, Any]) -> dict[str, str]:
    """What a side's system is: its kind, provider, model, endpoint host, main parameters."""
    parts = {key: str(system[key]) for key in SYSTEM_KEYS if system.get(key) is not None}
    host = urlsplit(str(system.get("base_url") or "")).netloc
    if host:
        parts["endpoint"] = host
    return parts


def system_cell(system: dict[str, Any], other: dict[str, Any] | None) -> Md:
    """One side's system; what differs from the other side's is in bold (what the PR changed)."""
    parts, theirs = system_parts(system), system_parts(other or {})
    if not parts:
        return Md(values.DASH)
    shown = []
    for key, value in parts.items():
        part = text(f"{key}: {value}", 120)
        shown.append(Md(f"**{part}**") if other is not None and theirs.get(key) != value else part)
    return Md(" · ".join(shown))


def file_rows(c: Comparison) -> list[dict[str, Any]]:
    base = c.base_meta.files if c.base_meta else {}
    head = c.head_meta.files if c.head_meta else {}

    def short(digest: str | None) -> Md:
        return code(digest[:12], 12) if digest else Md(values.DASH)

    rows = [
        {
            "path": path,
            "base": short(base.get(path)),
            "head": short(head.get(path)),
            "changed": base.get(path) != head.get(path),
        }
        for path in sorted(set(base) | set(head))
    ]
    return sorted(rows, key=lambda row: not row["changed"])
