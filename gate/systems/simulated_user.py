"""The simulated user: a model (gate.yml's `simulated_user`, shaped as `judge`) that plays a
case's `user: {persona, goal, max_turns}`, one message at a time, through the response cache.

It sees the conversation as text (the user's and the assistant's words, never the tools) and
answers with the user's next message, or `###STOP###` when its goal is met or out of reach
(promptfoo's simulated user's stop marker). Its calls are the instrument's, like the judge's:
they are counted apart (`simulated user` in the run's HTTP counts) and cost the system nothing.
"""

from __future__ import annotations

from gate.errors import SystemCallError
from gate.inputs.agent import SimulatedUser
from gate.inputs.config import JudgeConfig
from gate.providers.wire_formats import Message
from gate.report.output import TranscriptMessage
from gate.systems.base import SystemEnv
from gate.systems.chat import client_for, model_endpoint

STOP = "###STOP###"
ROLE = "simulated user"
INSTRUCTIONS = """\
You play a user who talks to an AI assistant. Stay in your role: write only what this user
says next, in the first person, in one short message; never answer as the assistant.
Who you are: {persona}
What you want out of this conversation: {goal}
When your goal is met, or the assistant cannot get you any closer to it, reply with exactly
{stop} and nothing else."""


def user_messages(spec: SimulatedUser, transcript: list[TranscriptMessage]) -> list[Message]:
    """The simulated user's prompt: pure, so the same conversation makes the same request."""
    system = INSTRUCTIONS.format(
        persona=spec.persona or "an ordinary customer", goal=spec.goal, stop=STOP
    )
    lines = [
        f"{'USER' if m.role == 'user' else 'ASSISTANT'}: {m.content}"
        for m in transcript
        if m.role in ("user", "assistant") and m.content
    ]
    said = "\n\n".join(lines)
    ask = (
        f"The conversation so far:\n\n{said}\n\nWrite the user's next message."
        if lines
        else "The conversation has not begun: write the user's first message."
    )
    return [Message(role="system", content=system), Message(role="user", content=ask)]


class SimulatedUserModel:
    def __init__(self, config: JudgeConfig, env: SystemEnv) -> None:
        endpoint, self.format = model_endpoint(config, env, "simulated_user")
        self.client = client_for(endpoint, config, env, role=ROLE)
        self.model = config.model or ""
        self.params = {"temperature": 0, "max_tokens": config.max_tokens}

    def next(
        self,
        spec: SimulatedUser,
        transcript: list[TranscriptMessage],
        repeat: int,
        deadline: float | None,
    ) -> str | None:
        """The user's next message; None when the user is done."""
        messages = user_messages(spec, transcript)
        try:
            reply = self.client.chat(
                self.format, self.model, messages, self.params, repeat=repeat, deadline=deadline
            )
        except SystemCallError as exc:
            raise SystemCallError(f"simulated user: {exc}") from None
        said = reply.text.strip()
        return None if not said or STOP in said else said

    def close(self) -> None:
        self.client.close()
