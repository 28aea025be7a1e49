"""What a side's runner process and the flow say to each other, one JSON object a line.

The flow writes the `SideSpec` first, then requests (`RunMore`, `Close`) on the runner's
request pipe; the runner answers on a pipe of its own (never its stdout, which its system's
processes may share): `Ready` once its services are open, a `Result` per case as it finishes,
`Done` after each request, or `Failed` when it cannot go on.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, TypeAdapter

from gate.report.models import CaseResult, RunMeta


class RunMore(BaseModel):
    """Run each case of `ids` (None: every case of the side's shard) `repeats` more times."""

    op: Literal["run"] = "run"
    ids: list[str] | None = None
    repeats: int = Field(1, ge=1)


class Close(BaseModel):
    op: Literal["close"] = "close"


Request = Annotated[RunMore | Close, Field(discriminator="op")]
REQUEST: TypeAdapter[RunMore | Close] = TypeAdapter(Request)


class Ready(BaseModel):
    type: Literal["ready"] = "ready"
    meta: RunMeta


class Result(BaseModel):
    type: Literal["result"] = "result"
    result: CaseResult


class Done(BaseModel):
    """A request is answered; the HTTP counts of the side's clients so far."""

    type: Literal["done"] = "done"
    http: dict[str, dict[str, int]] = Field(default_factory=dict)


class Failed(BaseModel):
    """The runner cannot go on: its message, and the exit code it ends with (2: its input)."""

    type: Literal["failed"] = "failed"
    message: str
    exit_code: int


Record = Annotated[Ready | Result | Done | Failed, Field(discriminator="type")]
RECORD: TypeAdapter[Ready | Result | Done | Failed] = TypeAdapter(Record)
