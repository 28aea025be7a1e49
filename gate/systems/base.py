"""The system under test: what production runs, called once per case and repeat."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from gate.errors import InputError
from gate.providers.traffic import Traffic


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


@dataclass(frozen=True)
class SystemRequest:
    case_id: str
    input: dict[str, Any]
    repeat: int = 0
    timeout_s: float = 120.0


class System(Protocol):
    kind: str

    def call(self, request: SystemRequest) -> SystemOutput: ...

    def describe(self) -> dict[str, Any]:
        """Metadata for the report: kind, model, provider; never a secret."""
        ...

    def files(self) -> list[Path]:
        """Files of the checkout this system reads (hashed into the report)."""
        ...

    def close(self) -> None: ...


@dataclass
class SystemEnv:
    """Everything a system may need from outside: passed in, never read from globals."""

    root: Path
    config_dir: Path
    environ: dict[str, str]
    cache_dir: Path | None = None
    use_cache: bool = True
    prices: dict[str, Any] = field(default_factory=dict)
    concurrency: int = 8
    extras: dict[str, Any] = field(default_factory=dict)
    # HTTP counts of each provider client of the run, by role ("system", "judge")
    traffic: dict[str, Traffic] = field(default_factory=dict)

    def checkout_file(self, name: str, key: str) -> Path:
        """A file of the side's checkout (`--root`); errors name the config key."""
        path = (self.root / name).resolve()
        if not path.is_file():
            raise InputError(f"file {name!r} not found in checkout {self.root}", key=key)
        return path


SystemFactory = Callable[[Any, SystemEnv], System]
