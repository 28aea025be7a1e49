"""A case's conversation and tool loop (docs/agents.md): `tools`, `max_steps`, `turns` and
`user`. Pure.

- `tools`: the result of each tool the model may call, by name: `returns` for every call, or
  `when: [{arguments, returns}]` chosen by the call's arguments (the first whose arguments are
  a subset of the call's), with an optional `otherwise`. What the model is offered stays in the
  model config; the results come from the case, so a run is deterministic and cacheable.
- `max_steps`: model calls per turn (default 10) before the turn stops unanswered.
- `turns`: user turns after the first (the case's `input` is the first), each with its own
  `expect`.
- `user`: a model plays the user (`persona`, `goal`) for up to `max_turns` user turns, the
  first included.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from gate.inputs.arguments import short, subset_mismatch
from gate.inputs.expect import Expect

DEFAULT_MAX_STEPS = 10
DEFAULT_MAX_TURNS = 5


class ToolCase(BaseModel):
    """One `when` entry: the result for calls whose arguments contain these."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    arguments: dict[str, Any] = Field(description="A subset of the call's arguments")
    returns: Any = Field(description="The result (any JSON)")


class ToolResults(BaseModel):
    """What a tool returns in this case: `returns` always, or `when` (+ `otherwise`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    returns: Any = Field(None, description="The result of every call (any JSON)")
    when: list[ToolCase] = Field(
        default_factory=list, description="Results by arguments (the first that matches)"
    )
    otherwise: Any = Field(None, description="The result when no `when` entry matches")

    @model_serializer(mode="wrap")
    def _as_written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the keys the case gives: which were given is what the result means (a side's
        runner reads the case back from this)."""
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if k in self.model_fields_set}

    @model_validator(mode="after")
    def _one_source(self) -> ToolResults:
        given = self.model_fields_set
        if ("returns" in given) == ("when" in given):
            raise ValueError(
                "give a tool either `returns` or `when` (with an optional `otherwise`)"
            )
        if "when" in given and not self.when:
            raise ValueError("`when` needs at least one `{arguments, returns}`")
        if "otherwise" in given and "when" not in given:
            raise ValueError("`otherwise` goes with `when`")
        return self

    def result(self, arguments: Any) -> tuple[bool, Any]:
        """(found, result) for a call with these arguments."""
        if "returns" in self.model_fields_set:
            return True, self.returns
        for case in self.when:
            if subset_mismatch(case.arguments, arguments) is None:
                return True, case.returns
        return ("otherwise" in self.model_fields_set), self.otherwise


class UserTurn(BaseModel):
    """A scripted user turn after the first, with what its answer must hold."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    user: str = Field(min_length=1, description="What the user says")
    expect: Expect = Field(default_factory=Expect, description="Checks of this turn's answer")


class SimulatedUser(BaseModel):
    """A model plays the user (gate.yml's `simulated_user`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    persona: str = Field("", description="Who the user is")
    goal: str = Field(min_length=1, description="What the user wants out of the conversation")
    max_turns: int = Field(
        DEFAULT_MAX_TURNS, ge=1, le=50, description="User turns at most, the first included"
    )


class AgentCase(BaseModel):
    """What a system needs of a case to hold its conversation and its tool loop."""

    model_config = ConfigDict(frozen=True)

    tools: dict[str, ToolResults] = Field(default_factory=dict)
    max_steps: int = DEFAULT_MAX_STEPS
    turns: list[UserTurn] = Field(default_factory=list)
    user: SimulatedUser | None = None
    user_first: bool = Field(
        False,
        description="the simulated user opens the conversation, and the system's prompt "
        "is its system message (promptfoo's simulated-user provider)",
    )
    forbidden: tuple[str, ...] = Field(
        (),
        description="`forbidden_tools` of the case and its turns: a call of one with no "
        "result ends the conversation there (its check fails), instead of an error",
    )


class UnansweredCall(LookupError):
    """A tool call the case gives no result for."""


def shown_call(name: str, arguments: Any) -> str:
    if isinstance(arguments, str):
        return f"{name}({short(arguments, raw=True)})"
    return f"{name}({short(json.loads(json.dumps(arguments, sort_keys=True)))})"


def tool_result(tools: dict[str, ToolResults], name: str, arguments: Any) -> Any:
    """The case's result for this call; `UnansweredCall` naming the call when there is none."""
    found = tools.get(name)
    if found is None:
        known = ", ".join(sorted(tools)) or "none"
        raise UnansweredCall(
            f"the model called {shown_call(name, arguments)}, and the case's `tools` has no "
            f"result for {name} (it has: {known})"
        )
    ok, result = found.result(arguments)
    if not ok:
        raise UnansweredCall(
            f"the model called {shown_call(name, arguments)}, and no `when` of the case's "
            f"`tools.{name}` matches those arguments (add one, or an `otherwise`)"
        )
    return result
