"""What a system answered for one call: the text and usage the checks read and the runner
records as an attempt. Below systems and checks, so both (and the providers' wire formats)
speak it without importing each other."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Usage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class SystemOutput(BaseModel):
    """What the system answered. `data` keeps any extra fields the checks may read."""

    text: str
    usage: Usage | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    cached: bool = False
    cost_usd: float | None = None
    model: str | None = None
    latency_ms: float | None = Field(
        None, description="A cached answer reports the latency of the call it replaces"
    )

    @classmethod
    def from_value(cls, value: Any, *, where: str) -> SystemOutput:
        """Accept the protocol's shapes: a string, or an object carrying `text`."""
        if isinstance(value, str):
            return cls(text=value)
        if isinstance(value, dict):
            text = value.get("text")
            if not isinstance(text, str):
                raise TypeError(f"{where} returned an object without a string `text`")
            usage = value.get("usage")
            extra = {k: v for k, v in value.items() if k not in ("text", "usage")}
            return cls(
                text=text,
                usage=Usage.model_validate(usage) if isinstance(usage, dict) else None,
                data=extra,
            )
        raise TypeError(f"{where} returned {type(value).__name__}, expected str or dict")
