"""A side's report, held by the flow while the side ran, written once when it is done.

The reports folder (an artifact anyone with read access can download) holds held-out cases
redacted; the held-out detail folder, when asked for (`gate check --heldout-detail`), holds
them whole. Both get the summary beside the report.
"""

from __future__ import annotations

from pathlib import Path

from gate.report.io import dump_line, report_paths, write_report, write_summary
from gate.report.models import Report, Summary
from gate.report.summary import SummaryBuilder


def write_side_report(
    report: Report,
    folder: Path,
    label: str,
    *,
    duration_s: float | None,
    http: dict[str, dict[str, int]],
    heldout_detail: Path | None = None,
) -> tuple[Report, Summary]:
    """Write `report` as `folder/label.jsonl` (and its summary); the report as written, and
    its summary."""
    path, summary_path = report_paths(folder, label)
    shown = [r.redacted() if r.heldout else r for r in report.results]
    summary = summarise(report, duration_s, http)
    write_report(path, report.meta, (dump_line(r) for r in shown))
    write_summary(summary_path, summary)
    if heldout_detail is not None:
        detail, detail_summary = report_paths(heldout_detail, label)
        write_report(detail, report.meta, (dump_line(r) for r in report.results))
        write_summary(detail_summary, summary)
    return Report(meta=report.meta, results=report.results, path=path), summary


def summarise(report: Report, duration_s: float | None, http: dict[str, dict[str, int]]) -> Summary:
    builder = SummaryBuilder()
    for result in report.results:
        builder.add(result)
    return builder.build(report.meta, duration_s, http)
