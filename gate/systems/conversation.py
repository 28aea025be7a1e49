"""A case's conversation: the turns a system takes, whatever its kind (docs/agents.md).

A case with `tools`, `turns` or `user` is held as a conversation. The first user turn is the
case's `input`; each scripted turn (`turns`) or, with `user`, each message of the simulated
user follows the system's answer to the one before. A turn is what the system's `Session`
makes of it: a chat model's tool loop (`gate.systems.tool_loop`), or one call of the team's
own code with the conversation so far (`gate.systems.own_agent`). The conversation stops early
when a turn reaches `max_steps` without an answer, or when the simulated user is done.

The answer it returns is the last turn's, with the whole transcript (`messages`), every tool
call with its result (`trajectory`), and what all its model calls cost.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gate.errors import SystemCallError
from gate.report.output import SystemOutput, Usage
from gate.systems.base import System, SystemEnv, SystemRequest
from gate.systems.own_agent import OwnCodeSession
from gate.systems.turns import Session, TurnResult

if TYPE_CHECKING:
    from gate.systems.simulated_user import SimulatedUserModel


def deadline_of(request: SystemRequest) -> float:
    return time.monotonic() + request.timeout_s


def _sum_usage(outputs: list[SystemOutput]) -> Usage | None:
    used = [o.usage for o in outputs if o.usage is not None]
    if not used:
        return None
    return Usage(
        prompt_tokens=sum(u.prompt_tokens for u in used),
        completion_tokens=sum(u.completion_tokens for u in used),
    )


def _sum_cost(outputs: list[SystemOutput]) -> float | None:
    costs = [o.cost_usd for o in outputs if o.cost_usd is not None]
    return round(sum(costs), 8) if costs else None


def combined(turns: list[TurnResult]) -> SystemOutput:
    """The conversation as one answer: the last turn's, with everything said and done."""
    outputs = [o for t in turns for o in t.outputs]
    last = turns[-1]
    latencies = [o.latency_ms for o in outputs if o.latency_ms is not None]
    final = outputs[-1] if outputs else SystemOutput(text="")
    return SystemOutput(
        text=last.text,
        tool_calls=[s.call() for s in last.steps],
        finish_reason=last.stopped or last.finish_reason,
        usage=_sum_usage(outputs),
        data=final.data,
        cached=bool(outputs) and all(o.cached for o in outputs),
        cost_usd=_sum_cost(outputs),
        model=final.model,
        latency_ms=round(sum(latencies), 3) if latencies else None,
        messages=[m for t in turns for m in t.messages],
        trajectory=[s for t in turns for s in t.steps],
    )


def converse(
    session: Session, request: SystemRequest, user: SimulatedUserModel | None
) -> SystemOutput:
    """Play the case's turns with `session`; `user` plays a simulated user's."""
    agent = request.agent
    assert agent is not None
    if agent.user is not None and user is None:
        raise SystemCallError("a simulated `user` needs gate.yml's `simulated_user`")
    turns: list[TurnResult] = []
    if agent.user is not None and agent.user_first:
        assert user is not None
        opening = user.next(agent.user, [], request.repeat, deadline_of(request))
        if opening is None:  # done before it began: nothing was said
            return SystemOutput(text="", finish_reason="stop")
        turns.append(session.turn(1, opening))
    else:
        turns.append(session.turn(1, None))
    for number, said in enumerate((t.user for t in agent.turns), start=2):
        if turns[-1].stopped:
            break
        turns.append(session.turn(number, said))
    if agent.user is not None:
        assert user is not None
        _simulate(session, request, user, turns)
    output = combined(turns)
    finish = getattr(session, "finish", None)
    return finish(output) if finish is not None else output


def _simulate(
    session: Session, request: SystemRequest, user: SimulatedUserModel, turns: list[TurnResult]
) -> None:
    """The simulated user's turns, until it is done, a turn stops early or `max_turns`."""
    agent = request.agent
    assert agent is not None and agent.user is not None
    deadline = deadline_of(request)
    while not turns[-1].stopped and len(turns) < agent.user.max_turns:
        transcript = [m for t in turns for m in t.messages]
        message = user.next(agent.user, transcript, request.repeat, deadline)
        if message is None:
            break
        turns.append(session.turn(len(turns) + 1, message))


class ConversationSystem:
    """A system that holds a case's conversation when the case has one, and otherwise answers
    as it always did. Chat systems bring their own session (`session(request)`: the tool
    loop); the team's own code is called once per turn with the conversation so far."""

    def __init__(self, system: System, env: SystemEnv) -> None:
        self.system = system
        self.kind = system.kind
        self.env = env
        self._user: SimulatedUserModel | None = None
        self._lock = threading.Lock()

    def call(self, request: SystemRequest) -> SystemOutput:
        if request.agent is None:
            return self.system.call(request)
        opener = getattr(self.system, "session", None)
        if opener is not None:
            session: Session = opener(request)
        else:
            session = OwnCodeSession(self.system, request)
        return converse(session, request, self._simulated_user(request))

    def _simulated_user(self, request: SystemRequest) -> SimulatedUserModel | None:
        if request.agent is None or request.agent.user is None:
            return None
        # imported here: a run with no simulated user needs no provider's client (jinja2, ...)
        from gate.systems.simulated_user import SimulatedUserModel

        with self._lock:
            if self._user is None and self.env.simulated_user is not None:
                self._user = SimulatedUserModel(self.env.simulated_user, self.env)
            return self._user

    def describe(self) -> dict[str, Any]:
        return self.system.describe()

    def files(self) -> list[Path]:
        return self.system.files()

    def close(self) -> None:
        if self._user is not None:
            self._user.close()
        self.system.close()
