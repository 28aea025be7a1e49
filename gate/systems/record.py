"""`gate run --record FILE`: wrap the system and write its answers as a `replay` file.

The file (JSONL, one `{id, repeat, model, text, usage, ...}` per call, with `tool_calls`,
`finish_reason`, and a conversation's `messages` and `trajectory` when the answer has them,
the same format
`gate.systems.replay` reads) is written atomically when the run closes, sorted by case and
repeat. Failed calls are not recorded: replaying them would turn an error into an answer.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from gate.report.files import atomic_write
from gate.report.output import SystemOutput
from gate.systems.base import System, SystemRequest

_RECORD_KEYS = (
    "id", "repeat", "model", "text", "usage", "tool_calls", "finish_reason", "messages",
    "trajectory",
)  # fmt: skip


def record_of(request: SystemRequest, output: SystemOutput) -> dict[str, Any]:
    extra = {k: v for k, v in output.data.items() if k not in _RECORD_KEYS}
    record: dict[str, Any] = {
        "id": request.case_id,
        "repeat": request.repeat,
        "model": output.model,
        "text": output.text,
        "usage": output.usage.model_dump() if output.usage else None,
    }
    if output.tool_calls:
        record["tool_calls"] = [call.model_dump() for call in output.tool_calls]
    if output.finish_reason is not None:
        record["finish_reason"] = output.finish_reason
    if output.messages:
        record["messages"] = [m.model_dump() for m in output.messages]
    if output.trajectory:
        record["trajectory"] = [s.model_dump() for s in output.trajectory]
    return {**record, **extra}


class RecordingSystem:
    """Delegates to `system`; `close` writes the file but leaves closing `system` to its owner."""

    def __init__(self, system: System, path: Path) -> None:
        self.system = system
        self.kind = system.kind
        self.path = path
        self._records: dict[tuple[str, int], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._closed = False

    def call(self, request: SystemRequest) -> SystemOutput:
        output = self.system.call(request)
        record = record_of(request, output)
        with self._lock:
            self._records[(request.case_id, request.repeat)] = record
        return output

    def describe(self) -> dict[str, Any]:
        return self.system.describe()

    def files(self) -> list[Path]:
        return self.system.files()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            lines = [
                json.dumps(self._records[key], ensure_ascii=False) + "\n"
                for key in sorted(self._records)
            ]
        atomic_write(self.path, "".join(lines))
