"""What every finding is: a frozen model told apart by `kind`, with the outcome it stands for.

`gate.compare.findings` holds the kinds of the verdict's rules and the union of every kind;
`gate.compare.instrument_findings` the kinds that say what a PR changes in the instrument.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

SideName = Literal["base", "head"]
BudgetMetric = Literal["cost", "tokens", "latency_p95"]
# what resolves a suite that cannot enforce its threshold: `fixed`, the threshold rule alone
# (fixed repeats); `tested`, the drop test at fixed repeats; `budget`, repeats: auto's rounds
Advice = Literal["fixed", "tested", "budget"]


class FindingBase(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: str  # each kind narrows it to its own name; first in the json


class ErrorFinding(FindingBase):
    """The comparison cannot be trusted: the verdict is error."""

    outcome: Literal["error"] = "error"


class FailFinding(FindingBase):
    """A rule that blocks the PR."""

    outcome: Literal["fail"] = "fail"


class PassFinding(FindingBase):
    """A rule that held."""

    outcome: Literal["pass"] = "pass"


class InconclusiveFinding(FindingBase):
    """A rule that could not decide: the verdict is inconclusive (blocking or not by policy)."""

    outcome: Literal["inconclusive"] = "inconclusive"


class NoteFinding(FindingBase):
    """Worth knowing; decides nothing."""

    outcome: Literal["note"] = "note"
