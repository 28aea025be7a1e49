"""The way out of a fail: a PR label that the base's policy names (`accept_label`).

Pure. A `fail` of a PR that carries the label (or an `inconclusive` suite that blocks, under
`inconclusive: block`) becomes a pass whose first finding says so,
by which label, and holds the findings that failed it (`Accepted`), so the comment, the job
summary and the json format still show what would have failed. Without the label a fail
stays a fail; an `error` is never accepted (nothing was measured), nor is a pass changed.
"""

from __future__ import annotations

from collections.abc import Collection

from gate.compare.findings import Accepted
from gate.compare.models import Comparison


def accept(comparison: Comparison, label: str | None, labels: Collection[str]) -> Comparison:
    """`comparison`, accepted when it blocks (a fail, or an inconclusive suite under
    `inconclusive: block`) and the PR carries `label`."""
    blocks = comparison.verdict == "fail" or (
        comparison.verdict == "inconclusive" and comparison.exit_code != 0
    )
    if not blocks or label is None or label not in labels:
        return comparison
    decided = ("fail", "inconclusive")
    failed = [f for f in comparison.findings if f.outcome in decided]
    kept = [f for f in comparison.findings if f.outcome not in decided]
    return comparison.model_copy(
        update={"verdict": "pass", "findings": [Accepted(label=label, overruled=failed), *kept]}
    )
