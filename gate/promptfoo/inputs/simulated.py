"""promptfoo's simulated-user provider (`provider: promptfoo:simulated-user` on a test or on
`defaultTest`) as the gate's simulated user (docs/agents.md): its `instructions` (rendered
with the test's vars; by default `{{instructions}}`) are what the user wants, `maxTurns`
(default 10) its turns. As in promptfoo, the simulated user opens the conversation, the
rendered prompt is the agent's system message, and the output is the conversation (`User:
...`, `Assistant: ...`). The model that plays the user is gate.yml's `simulated_user`
(promptfoo asks its own service). What promptfoo's provider does and the gate does not is
refused by name: `initialMessages`, `stateful`, another `userProvider`.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from gate.inputs.agent import AgentCase, SimulatedUser
from gate.promptfoo.inputs.assertion_values import render
from gate.promptfoo.inputs.assertions import AssertionContext

PROMPTFOO_MAX_TURNS = 10
KEYS = {"instructions", "maxTurns"}
NOT_RUN = {
    "initialMessages": "a conversation to start from",
    "stateful": "a provider that keeps the conversation itself",
    "userProvider": "another model for the user: gate.yml's `simulated_user` plays it",
}


def simulated_agent(provider: Any, ctx: AssertionContext) -> AgentCase:
    """The case's conversation under promptfoo's simulated user."""
    config = provider.get("config") or {} if isinstance(provider, dict) else {}
    if not isinstance(config, dict):
        raise ctx.error("`provider.config` of promptfoo:simulated-user must be a mapping")
    for key, what in NOT_RUN.items():
        if config.get(key) not in (None, False, "", []):
            raise ctx.error(f"`provider.config.{key}` ({what}) is not supported")
    unknown = sorted(set(config) - KEYS - set(NOT_RUN))
    if unknown:
        raise ctx.error(f"`provider.config.{unknown[0]}`: unknown key of promptfoo:simulated-user")
    if ctx.vars.get("initialMessages") not in (None, "", []):
        raise ctx.error(
            f"the var `initialMessages` ({NOT_RUN['initialMessages']}) is not supported"
        )
    raw = config.get("instructions") or "{{instructions}}"
    instructions = render(str(raw), ctx).strip()
    turns = config.get("maxTurns", PROMPTFOO_MAX_TURNS)
    try:
        user = SimulatedUser(goal=instructions, max_turns=turns)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        shown = {"goal": "instructions", "max_turns": "maxTurns"}.get(where, where)
        raise ctx.error(f"promptfoo:simulated-user `{shown}`: {first['msg']}") from None
    return AgentCase(user=user, user_first=True)
