"""What a PR changes in an inspect or pytest suite's instrument, as a finding for the comment
(`gate.frameworks.instrument_changes`: the instrument's files and the measuring settings)."""

from __future__ import annotations

from pathlib import Path

from gate.compare.findings import Finding
from gate.compare.instrument_findings import InstrumentFilesChanged, KeyChange
from gate.frameworks import instrument_changes
from gate.inputs.config import SuiteConfig


def framework_findings(
    base_root: Path, head_root: Path, base: SuiteConfig, head: SuiteConfig | None
) -> list[Finding]:
    changes = instrument_changes(base_root, head_root, base, head)
    if not changes:
        return []
    settings = [KeyChange(key=k, base=b, head=h) for k, b, h in changes.settings]
    return [InstrumentFilesChanged(files=changes.files, settings=settings)]
