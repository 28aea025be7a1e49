"""Join the reports of shards (`gate run --shard I/N`) into the report of the whole suite.

Missing or duplicated shards, or shards of different suites, are errors that name them: a merged
report is never silently smaller than the suite.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from gate.errors import InputError
from gate.inputs.shard import Shard
from gate.report.io import ReportWriter, dump_line, iter_report, write_report, write_summary
from gate.report.models import RunMeta, Summary
from gate.report.plan import merged_record


def _shard_of(meta: RunMeta, path: Path) -> Shard:
    if meta.shard is None:
        raise InputError("not a shard report (it was run without --shard)", file=path, line=1)
    return Shard.parse(meta.shard)


def check_shards(metas: list[tuple[Path, RunMeta]]) -> tuple[int, int | None]:
    """Validate the set of shards; return (N, suite size)."""
    shards = [(path, _shard_of(meta, path)) for path, meta in metas]
    totals = {s.total for _, s in shards}
    if len(totals) != 1:
        raise InputError(
            f"shards of different splits: {', '.join(f'{p} is {s}' for p, s in shards)}"
        )
    total = totals.pop()
    suites = {meta.suite for _, meta in metas}
    if len(suites) > 1:
        raise InputError(f"shards of different suites: {', '.join(sorted(suites))}")
    counts = Counter(s.index for _, s in shards)
    dupes = sorted(i for i, c in counts.items() if c > 1)
    if dupes:
        named = ", ".join(
            f"{i}/{total} ({', '.join(str(p) for p, s in shards if s.index == i)})" for i in dupes
        )
        raise InputError(f"duplicated shard(s): {named}")
    missing = sorted(set(range(1, total + 1)) - set(counts))
    if missing:
        raise InputError(f"missing shard(s): {', '.join(f'{i}/{total}' for i in missing)}")
    sizes = {meta.suite_size for _, meta in metas}
    if len(sizes) > 1:
        raise InputError("shards were run on different versions of the suite (sizes differ)")
    return total, sizes.pop()


def merge_reports(paths: list[Path], out_dir: Path, label: str) -> Summary:
    """Write OUT/LABEL.jsonl and its summary; the result equals an unsharded run's."""
    if not paths:
        raise InputError("no shard reports given")
    metas: list[tuple[Path, RunMeta]] = []
    lines: list[tuple[int, str]] = []
    writer = ReportWriter(out_dir, label)
    seen: dict[str, Path] = {}
    for path in paths:
        meta, results = iter_report(path)
        metas.append((path, meta))
        for result in results:
            if result.id in seen:
                raise InputError(
                    f"case {result.id!r} is in two shards ({seen[result.id]})", file=path
                )
            seen[result.id] = path
            writer.builder.add(result)
            lines.append((result.index, dump_line(result)))
    total, suite_size = check_shards(metas)
    if suite_size is not None and len(lines) != suite_size:
        raise InputError(f"the shards hold {len(lines)} cases but the suite has {suite_size}")
    first = metas[0][1]
    records = [(m.shard, m.auto) for _, m in metas if m.auto is not None and m.shard]
    meta = first.model_copy(
        update={
            "label": label,
            "shard": None,
            "shards": [f"{i}/{total}" for i in range(1, total + 1)],
            "n_cases": len(lines),
            "auto": merged_record(records) if records else first.auto,
        }
    )
    lines.sort(key=lambda item: item[0])
    write_report(writer.jsonl, meta, (line for _, line in lines))
    summary = writer.builder.build(meta, http=shard_traffic(paths))
    write_summary(writer.summary_path, summary)
    return summary


def shard_traffic(paths: list[Path]) -> dict[str, dict[str, int]]:
    """The HTTP counts of the shards' summaries beside their reports, added up (a summary
    that is missing or unreadable adds nothing: these counts are informational)."""
    total: dict[str, dict[str, int]] = {}
    for path in paths:
        summary = path.with_name(path.name.removesuffix(".jsonl") + ".summary.json")
        try:
            http = json.loads(summary.read_text(encoding="utf-8")).get("http") or {}
        except (OSError, ValueError, AttributeError):
            continue
        for role, counts in http.items() if isinstance(http, dict) else ():
            into = total.setdefault(role, {})
            for name, value in counts.items() if isinstance(counts, dict) else ():
                if isinstance(value, int):
                    into[name] = into.get(name, 0) + value
    return total
