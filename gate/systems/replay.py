"""`replay` kind: outputs recorded earlier (see `gate run --record`), keyed by case id.

File format (JSONL): `{"id": ..., "repeat": 0, "model": ..., "text": ..., "usage": {...}}`, and
for an answer that called tools `"tool_calls": [{"name": ..., "arguments": {...}}]` and
`"finish_reason"`; a conversation's `"messages"` (the transcript) and `"trajectory"` (its tool
calls and their results), given back as they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.errors import InputError, SystemCallError
from gate.inputs.config import ReplaySystem
from gate.providers.pricing import cost_usd
from gate.report.output import Step, SystemOutput, ToolCall, TranscriptMessage, Usage
from gate.systems.base import SystemEnv, SystemRequest


class Recording(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str
    repeat: int = 0
    model: str | None = None
    text: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    messages: list[TranscriptMessage] = Field(default_factory=list)
    trajectory: list[Step] = Field(default_factory=list)

    def output(self, **more: Any) -> SystemOutput:
        return SystemOutput(
            text=self.text,
            tool_calls=self.tool_calls,
            finish_reason=self.finish_reason,
            usage=self.usage,
            data=dict(self.model_extra or {}),
            model=self.model,
            messages=self.messages,
            trajectory=self.trajectory,
            **more,
        )


def load_recordings(path: Path, display: str) -> dict[tuple[str, int], Recording]:
    records: dict[tuple[str, int], Recording] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InputError(f"cannot read replay file: {exc.strerror}", file=display) from None
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            record = Recording.model_validate(json.loads(raw))
        except json.JSONDecodeError as exc:
            raise InputError(f"malformed JSON: {exc.msg}", file=display, line=number) from None
        except ValidationError as err:
            first = err.errors()[0]
            key = ".".join(str(p) for p in first["loc"]) or None
            raise InputError(first["msg"], file=display, line=number, key=key) from None
        records[(record.id, record.repeat)] = record
    return records


class ReplayFileSystem:
    kind = "replay"

    def __init__(self, config: ReplaySystem, env: SystemEnv) -> None:
        self.config = config
        self.path = env.checkout_file(config.file, "system.file")
        self.records = load_recordings(self.path, config.file)
        models = {r.model for r in self.records.values() if r.model}
        self.model = ", ".join(sorted(models)) or None

    def call(self, request: SystemRequest) -> SystemOutput:
        record = self.records.get((request.case_id, request.repeat)) or self.records.get(
            (request.case_id, 0)
        )
        if record is None:
            raise SystemCallError(
                f"no recorded output for case {request.case_id!r} in {self.config.file}"
            )
        return record.output()

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": self.config.file, "model": self.model}

    def files(self) -> list[Path]:
        return [self.path]

    def close(self) -> None:
        pass


class RecordedAnswers:
    """The answers a run recorded (`gate run --record`), given again to re-judge them with
    another instrument (`gate run --answers`): each (case, run) gets exactly its recorded
    answer, priced by this run's `prices`; one that was never recorded (its call failed, or
    it was never asked) is an error, never another run's answer."""

    kind = "answers"

    def __init__(self, path: Path, env: SystemEnv) -> None:
        self.path = path
        self.records = load_recordings(path, str(path))
        self.prices = env.prices

    def call(self, request: SystemRequest) -> SystemOutput:
        record = self.records.get((request.case_id, request.repeat))
        if record is None:
            raise SystemCallError(
                f"no recorded answer for run {request.repeat} of case {request.case_id!r}"
            )
        return record.output(cost_usd=cost_usd(self.prices, record.usage, record.model))

    def describe(self) -> dict[str, Any]:
        return {"kind": self.kind, "file": str(self.path)}

    def files(self) -> list[Path]:
        return []

    def close(self) -> None:
        pass
