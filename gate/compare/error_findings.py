"""The findings that make a comparison untrustworthy: a side failed, errors past the limit,
nothing compared, shards missing, stale or incomplete. Their outcome is `error` (a head that
left no results at all is `skip`); the verdict is `error` when one is present.

Pure data, like every finding (`gate.compare.findings` holds the union of all kinds).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from gate.compare.finding_base import ErrorFinding, SideName


class NoHeadResults(ErrorFinding):
    kind: Literal["no_head_results"] = "no_head_results"


class ErrorRate(ErrorFinding):
    """More of a side's cases ended in an error than `max_error_rate` allows."""

    kind: Literal["error_rate"] = "error_rate"
    side: SideName
    errors: int
    cases: int
    rate_pct: float
    limit_pct: float


class BlockingError(ErrorFinding):
    """Cases of a blocking severity ended in an error on a side."""

    kind: Literal["blocking_error"] = "blocking_error"
    side: SideName
    ids: list[str]


class NothingCompared(ErrorFinding):
    """There is a baseline, but no case ran on both sides."""

    kind: Literal["nothing_compared"] = "nothing_compared"
    base_cases: int
    head_cases: int


class SideFailed(ErrorFinding):
    """A side's `gate run` (of one shard, in the sharded mode) ended without a report."""

    kind: Literal["side_failed"] = "side_failed"
    side: SideName
    shard: str | None = Field(None, description="I/N in the sharded mode")
    exit_code: int | None = Field(None, description="None: the run never came to an end")
    error: str | None = Field(None, description="the run's last error line")


class BaseUnreadable(ErrorFinding):
    """The base's gate.yml or case files cannot be read: nothing measures the PR (the head's
    instrument never takes the base's place)."""

    kind: Literal["base_unreadable"] = "base_unreadable"
    problem: str


class NoBaseResults(ErrorFinding):
    """The base side could not run: without its results nothing is compared, never a pass."""

    kind: Literal["no_base_results"] = "no_base_results"


class ShardsMissing(ErrorFinding):
    """`mode: finish` found no shard report of the suite."""

    kind: Literal["shards_missing"] = "shards_missing"
    suite: str
    folder: str


class ShardFile(BaseModel):
    shard: str
    path: str


class ShardsStale(ErrorFinding):
    """Shard reports of other commits than the ones this job compares."""

    kind: Literal["shards_stale"] = "shards_stale"
    base_sha: str
    head_sha: str
    stale: list[ShardFile]


class ShardsIncomplete(ErrorFinding):
    """A shard is missing or there twice (`problem`: which, as the merge check says)."""

    kind: Literal["shards_incomplete"] = "shards_incomplete"
    problem: str


class ShardsUnmerged(ErrorFinding):
    """A side's shard reports do not merge into one report."""

    kind: Literal["shards_unmerged"] = "shards_unmerged"
    side: SideName
    problem: str
