"""Shards: a stable, balanced subset of a suite chosen by a hash of each case id."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Protocol, TypeVar

from gate.errors import InputError


class HasId(Protocol):
    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=HasId)


@dataclass(frozen=True)
class Shard:
    index: int  # 1-based, as written on the command line
    total: int

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"

    @classmethod
    def parse(cls, text: str) -> Shard:
        match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not match:
            raise InputError(f"--shard must look like I/N (e.g. 2/4), got {text!r}", key="--shard")
        index, total = int(match.group(1)), int(match.group(2))
        if total < 1 or not 1 <= index <= total:
            raise InputError(f"--shard {text}: I must be between 1 and N", key="--shard")
        return cls(index, total)


def shard_of(case_id: str, total: int) -> int:
    """1-based shard of a case; depends only on its id, so it never moves when others change."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % total + 1


def select_shard(items: list[tuple[int, T]], shard: Shard | None) -> list[tuple[int, T]]:
    if shard is None:
        return items
    return [(i, c) for i, c in items if shard_of(c.id, shard.total) == shard.index]
