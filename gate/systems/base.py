"""The system under test: what production runs, called once per case and repeat."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gate.errors import InputError
from gate.inputs.agent import AgentCase
from gate.inputs.config import JudgeConfig
from gate.providers.traffic import Traffic
from gate.report.output import SystemOutput


@dataclass(frozen=True)
class SystemRequest:
    case_id: str
    input: dict[str, Any]
    repeat: int = 0
    timeout_s: float = 120.0
    agent: AgentCase | None = None  # the case's conversation and tool loop, if it has one


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
    # HTTP counts of each provider client of the run, by role ("system", "judge")
    traffic: dict[str, Traffic] = field(default_factory=dict)
    # the model that plays a case's `user` (the measuring gate.yml's `simulated_user`)
    simulated_user: JudgeConfig | None = None

    def checkout_file(self, name: str, key: str) -> Path:
        """A file of the side's checkout (`--root`); errors name the config key."""
        path = (self.root / name).resolve()
        if not path.is_file():
            raise InputError(f"file {name!r} not found in checkout {self.root}", key=key)
        return path
