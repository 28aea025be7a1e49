"""The tool loop of a chat model (`openai`, `anthropic`, `promptfoo` systems), one user turn at
a time.

The model is offered the tools of its model config; when it calls some, each call gets the
result the case gives it (`tools:`; a call with none is an error naming the call) and the
results go back in the vendor's format (OpenAI: a `tool` message per `tool_call_id` after the
assistant message that made the calls; Anthropic: `tool_result` blocks answering each
`tool_use` id, in the user message after it). The model goes on until it answers without a
tool call, or `max_steps` model calls were made in the turn. Every call goes through the
provider client: the response cache (so an unchanged loop costs nothing the second time) and
the retries.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gate.errors import SystemCallError
from gate.inputs.agent import AgentCase, UnansweredCall, tool_result
from gate.providers.client import ProviderClient
from gate.providers.wire_formats import (
    ChatFormat,
    Message,
    Reply,
    WireMessage,
    result_text,
)
from gate.report.output import Step, SystemOutput, TranscriptMessage
from gate.systems.turns import TurnResult

ToOutput = Callable[[Reply], SystemOutput]
MAX_STEPS = "max_steps"  # why a conversation ended early (its `finish_reason`)
FORBIDDEN = "forbidden_tool"


@dataclass
class ChatModel:
    """Where and how a chat system asks its model."""

    client: ProviderClient
    format: ChatFormat
    model: str
    params: dict[str, Any]
    to_output: ToOutput  # a reply priced and shaped as the system answers
    # what the system makes of the whole conversation's answer (promptfoo's output)
    finish: Callable[[SystemOutput], SystemOutput] | None = None


def transcript_of(messages: list[Message], turn: int) -> list[TranscriptMessage]:
    return [TranscriptMessage(role=m.role, content=m.content, turn=turn) for m in messages]


@dataclass
class ChatSession:
    """One conversation with a chat model: `opening` renders the first user turn (the prompt,
    with the system prompt), later turns are user messages."""

    chat: ChatModel
    agent: AgentCase
    opening: list[Message]
    repeat: int
    deadline: float
    wire: list[Message | WireMessage] = field(default_factory=list)

    def turn(self, number: int, user: str | None) -> TurnResult:
        said = [] if self.wire else list(self.opening)
        if user is not None:
            said.append(Message(role="user", content=user))
        self.wire += said
        result = TurnResult(text="", messages=transcript_of(said, number))
        for _ in range(self.agent.max_steps):
            reply, output = self._ask()
            result.outputs.append(output)
            result.text, result.finish_reason = reply.text, reply.finish_reason
            result.messages.append(
                TranscriptMessage(
                    role="assistant", content=reply.text, tool_calls=reply.tool_calls, turn=number
                )
            )
            self.wire.append(self.chat.format.assistant_message(reply))
            if not reply.tool_calls:
                return result
            self._answer_calls(reply, number, result)
            if result.stopped:
                return result
        result.stopped = MAX_STEPS
        return result

    def finish(self, output: SystemOutput) -> SystemOutput:
        return self.chat.finish(output) if self.chat.finish is not None else output

    def _ask(self) -> tuple[Reply, SystemOutput]:
        chat = self.chat
        started = time.perf_counter()
        reply = chat.client.chat(
            chat.format,
            chat.model,
            self.wire,
            chat.params,
            repeat=self.repeat,
            deadline=self.deadline,
        )
        output = chat.to_output(reply)
        if not reply.cached:
            latency = round((time.perf_counter() - started) * 1000, 3)
            output = output.model_copy(update={"latency_ms": latency})
        return reply, output

    def _answer_calls(self, reply: Reply, number: int, result: TurnResult) -> None:
        """Each call's result from the case, into the transcript and the next request."""
        texts = []
        for call in reply.tool_calls:
            try:
                value = tool_result(self.agent.tools, call.name, call.arguments)
            except UnansweredCall as exc:
                if call.name not in self.agent.forbidden:
                    raise SystemCallError(f"turn {number}: {exc}") from None
                ended = Step.of(call, None, number).model_copy(update={"unanswered": True})
                result.steps.append(ended)  # its check fails; no error
                result.stopped = FORBIDDEN
                return
            text = result_text(value)
            texts.append(text)
            result.steps.append(Step.of(call, value, number))
            result.messages.append(
                TranscriptMessage(role="tool", name=call.name, content=text, turn=number)
            )
        self.wire += self.chat.format.tool_messages(reply, texts)
