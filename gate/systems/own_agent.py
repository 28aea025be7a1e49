"""A conversation with the team's own code (`python`, `http`, `command` systems).

Each turn is one call of the system with the case's input plus `messages`: what was said after
the input, `[{role, content}]`, ending with the user message to answer now (`[]` on the first
turn, whose user message is the input itself). The system runs its own tools and may say what
it did as `trajectory: [{name, arguments, result}]` beside `text`; the same checks read it.
A case's `tools:` are results for a chat model's tool loop: given to own code they are an
error, never silently unused.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from gate.errors import SystemCallError
from gate.providers.wire_formats import result_text
from gate.report.output import TranscriptMessage
from gate.systems.base import System, SystemRequest
from gate.systems.turns import TurnResult


def _opening(case_input: dict[str, Any]) -> str:
    """The first user turn as the transcript shows it: the input (its id left out)."""
    shown = {k: v for k, v in case_input.items() if k != "id"}
    return json.dumps(shown, ensure_ascii=False, sort_keys=True)


class OwnCodeSession:
    def __init__(self, system: System, request: SystemRequest) -> None:
        agent = request.agent
        if agent is not None and agent.tools:
            raise SystemCallError(
                f"the case gives results for {', '.join(sorted(agent.tools))} in `tools`, but "
                f"a {system.kind} system runs its own tools: `tools` is for a chat model's "
                "tool loop (return what your code called as `trajectory`)"
            )
        self.system = system
        self.request = request
        self.deadline = time.monotonic() + request.timeout_s
        self.said: list[dict[str, str]] = []

    def turn(self, number: int, user: str | None) -> TurnResult:
        if user is None:
            opening = TranscriptMessage(role="user", content=_opening(self.request.input))
        else:
            opening = TranscriptMessage(role="user", content=user, turn=number)
            self.said.append({"role": "user", "content": user})
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise SystemCallError(f"timed out after {self.request.timeout_s:g}s, in turn {number}")
        call = replace(
            self.request,
            input={**self.request.input, "messages": list(self.said)},
            timeout_s=left,
            agent=None,
        )
        started = time.perf_counter()
        output = self.system.call(call)
        if output.latency_ms is None or not output.cached:
            latency = round((time.perf_counter() - started) * 1000, 3)
            output = output.model_copy(update={"latency_ms": latency})
        steps = [s.model_copy(update={"turn": number}) for s in output.path]
        self.said.append({"role": "assistant", "content": output.text})
        tools = [
            TranscriptMessage(role="tool", name=s.name, content=result_text(s.result), turn=number)
            for s in steps
        ]
        answer = TranscriptMessage(role="assistant", content=output.text, turn=number)
        return TurnResult(
            text=output.text,
            finish_reason=output.finish_reason,
            messages=[opening, *tools, answer],
            steps=steps,
            outputs=[output],
        )
