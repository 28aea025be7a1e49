"""The comment's metadata pieces: each side's commit and system, the files that shaped each
run, and the policy that judged it.

Pure: no I/O; what comes from a report is escaped into `Md`.
"""

from __future__ import annotations

import json
from typing import TypedDict
from urllib.parse import urlsplit

from gate.compare.models import Comparison
from gate.render import values
from gate.render.links import RenderContext, safe_url, sha_link
from gate.render.markdown import Md
from gate.render.style import Style
from gate.report.descriptions import SystemInfo

SYSTEM_KEYS = ("kind", "provider", "model", "target", "temperature", "max_tokens")


def _flat(system: SystemInfo) -> dict[str, object]:
    """A system's description one level deep: a chat system's `params` by their own names
    (`temperature`, `tools`), other mappings' keys under theirs (`promptfoo.prompt`)."""
    flat: dict[str, object] = {}
    described: dict[str, object] = system.model_dump(mode="json")
    for key, value in described.items():
        if isinstance(value, dict):
            prefix = "" if key == "params" else f"{key}."
            flat.update({f"{prefix}{k}": v for k, v in value.items() if f"{prefix}{k}" not in flat})
        else:
            flat[key] = value
    return flat


def _brief(value: object) -> str:
    if isinstance(value, list):
        return f"{len(value)} {'entry' if len(value) == 1 else 'entries'}"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "none" if value is None else str(value)


def system_parts(system: SystemInfo, other: SystemInfo | None = None) -> dict[str, str]:
    """What a side's system is: its kind, provider, model, endpoint host, main parameters,
    and, against the other side's, every other setting that differs (`tools: 2 entries`)."""
    mine = _flat(system)
    parts = {key: _brief(mine[key]) for key in SYSTEM_KEYS if mine.get(key) is not None}
    host = urlsplit(system.base_url or "").netloc
    if host:
        parts["endpoint"] = host
    if other is not None:
        theirs = _flat(other)
        for key in sorted(set(mine) | set(theirs)):
            if key not in parts and key != "base_url" and mine.get(key) != theirs.get(key):
                parts[key] = _brief(mine.get(key))
    return parts


def system_cell(system: SystemInfo, other: SystemInfo | None, style: Style) -> Md:
    """One side's system; what differs from the other side's is in bold (what the PR changed)."""
    parts, theirs = system_parts(system, other), system_parts(other or SystemInfo(), system)
    if not parts:
        return Md(values.DASH)
    shown = []
    for key, value in parts.items():
        part = style.text(f"{key}: {value}", 120)
        changed = other is not None and theirs.get(key) != value
        shown.append(style.strong(part) if changed else part)
    return Md(" · ".join(shown))


class FileRow(TypedDict):
    """A file that shaped a run, with its hash on each side."""

    path: str
    base: Md
    head: Md
    changed: bool
    mark: Md


def file_rows(c: Comparison, style: Style) -> list[FileRow]:
    base = c.base_meta.files if c.base_meta else {}
    head = c.head_meta.files if c.head_meta else {}

    def short(digest: str | None) -> Md:
        return style.code(digest[:12], 12) if digest else Md(values.DASH)

    rows: list[FileRow] = [
        {
            "path": path,
            "base": short(base.get(path)),
            "head": short(head.get(path)),
            "changed": base.get(path) != head.get(path),
            "mark": Md("✏️ changed" if base.get(path) != head.get(path) else ""),
        }
        for path in sorted(set(base) | set(head))
    ]
    return sorted(rows, key=lambda row: not row["changed"])


def meta_rows(c: Comparison, ctx: RenderContext, style: Style) -> list[dict[str, Md]]:
    """Base against head: commit, system, report label, time, gate version, cases."""
    b, h = c.base_meta, c.head_meta
    if b is None or h is None:
        return []
    dirty = {True: " (uncommitted changes)", False: "", None: ""}
    return [
        {
            "label": Md("Commit"),
            "base": Md(sha_link(ctx.base_sha or b.git_sha, ctx, style) + dirty[b.git_dirty]),
            "head": Md(sha_link(ctx.head_sha or h.git_sha, ctx, style) + dirty[h.git_dirty]),
        },
        {
            "label": Md("System" + (" (changed)" if b.system != h.system else "")),
            "base": system_cell(b.system, h.system, style),
            "head": system_cell(h.system, b.system, style),
        },
        {"label": Md("Report"), "base": style.code(b.label, 80), "head": style.code(h.label, 80)},
        {
            "label": Md("Created"),
            "base": style.text(b.created_at, 40),
            "head": style.text(h.created_at, 40),
        },
        {
            "label": Md("Gate"),
            "base": style.text(b.gate_version, 20),
            "head": style.text(h.gate_version, 20),
        },
        {
            "label": Md("Cases · repeats"),
            "base": Md(f"{c.base.n:,} · {'auto' if b.auto else b.repeats}"),
            "head": Md(f"{c.head.n:,} · {'auto' if h.auto else h.repeats}"),
        },
    ]


def policy_line(c: Comparison, ctx: RenderContext, style: Style) -> Md:
    """`Policy: threshold 3 pts · blocking severities blocker (any) · …`"""
    p, budgets = c.policy, c.policy.budgets
    limits = [
        f" {name} +{values.g(limit)}%"
        for name, limit in (
            ("cost", budgets.cost_pct),
            ("tokens", budgets.tokens_pct),
            ("p95 latency", budgets.latency_p95_pct),
        )
        if limit is not None
    ]
    severities = ", ".join(style.text(s) for s in p.block_severities)
    run = safe_url(ctx.run_url)
    return Md(
        f"Policy: threshold {values.g(p.threshold)} pts · blocking severities {severities} "
        f"({style.text(p.blockers)})"
        + (" · budgets" + "".join(limits) if budgets.any else "")
        + f" · false-block rate {values.g(100 * p.false_block_rate)}% per PR · inconclusive "
        f"{'blocks' if p.inconclusive == 'block' else 'passes'}"
        + (" · require significance on" if p.require_significance else "")
        + f" · α {values.g(p.alpha)} · error limit {values.g(p.max_error_rate)}% per side"
        + (f" · {style.destination(Md('workflow run'), run)}" if run else "")
    )
