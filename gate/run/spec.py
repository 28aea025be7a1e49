"""One side of a comparison as a single typed value: what measures it, what runs, where.

`SideSpec` is built once, by the PR flow's plan (`gate.flow.instrument`) or by `gate run`'s
flags (`gate.commands.run`), and handed whole to the side's runner (`gate.run.side.SideRunner`),
in the same process or, for the flow, as JSON to a runner process of its own
(`gate.run.serve`). The runner reads no config: the cases, the checks' settings and the
system's block arrive parsed.

- `Measure` is the instrument: the cases (by id, as the measuring config defines them, with
  the ones a PR adds marked `added`), the judge, the simulated user (the model that plays a
  case's `user`), the prices, the sandbox's limits, the per-call timeout and the runs per
  case; and `checks_root`, the checkout whose code judges. In the PR flow it is the base's for
  both sides. An inspect or pytest suite's instrument is its `framework` block instead of
  cases: the runner lists its cases, running the instrument's files of `checks_root` against
  the side's own code.
- `OwnSystem` is what is measured: the side's own `system` block, the team's SDK on the
  sandbox's import path, and where the side's gate.yml lies (its relative paths).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from gate.frameworks import FrameworkSuite
from gate.inputs.cases import Case
from gate.inputs.config import (
    GateConfig,
    JudgeConfig,
    LoadedConfig,
    Price,
    SandboxConfig,
    SuiteConfig,
    SystemConfig,
)
from gate.inputs.policy import PolicyKeys
from gate.inputs.shard import Shard
from gate.report.plan import Plan

SideName = Literal["base", "head"]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Measure(Frozen):
    """What measures a side (the instrument)."""

    cases: tuple[Case, ...]
    judge: JudgeConfig | None = None
    simulated_user: JudgeConfig | None = None  # the model that plays a case's `user`
    prices: dict[str, Price] = Field(default_factory=dict)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    timeout_s: float = 120.0
    concurrency: int = 8
    repeats: int = 1  # round 0's runs of every case
    auto: Plan | None = None  # `repeats: auto`: the plan its later rounds follow
    checks_root: Path  # the checkout whose code judges (`expect.python`, the checks' SDK)
    config_file: str = ""  # the measuring gate.yml, as the report names it
    watch: tuple[str, ...] = ()  # the files whose hashes the report keeps
    framework: FrameworkSuite | None = None  # an inspect or pytest suite: no cases of its own


class OwnSystem(Frozen):
    """What a side runs: its own system, with its own SDK for generated code."""

    system: SystemConfig
    pythonpath: tuple[str, ...] = ()
    prelude: str = ""
    config_file: Path | None = None  # the side's own gate.yml (hashed into the report)


class SideSpec(Frozen):
    """Everything a side's runner needs."""

    label: str  # the report's name: `base`, `head`, `base.shard-2-of-4`, or gate run's
    suite: str
    side: SideName | None = None  # None: a plain `gate run`
    root: Path  # the checkout whose system runs
    measure: Measure
    own: OwnSystem
    cache_dir: Path | None = None  # None: no response cache
    use_cache: bool = True  # False: answers neither read from the cache nor written to it
    shard: str | None = None  # `I/N`
    record: Path | None = None  # write the answers of round 0 here (a replay file)
    answers: Path | None = None  # answer from this recording instead of calling the system
    show_progress: bool = True

    @field_validator("shard")
    @classmethod
    def _a_shard(cls, value: str | None) -> str | None:
        return None if value is None else str(Shard.parse(value))

    @property
    def shard_of(self) -> Shard | None:
        return Shard.parse(self.shard) if self.shard else None

    @property
    def sandbox(self) -> SandboxConfig:
        """The measuring limits with the side's own SDK on the import path (generated code)."""
        update = {"pythonpath": list(self.own.pythonpath), "prelude": self.own.prelude}
        return self.measure.sandbox.model_copy(update=update)


def auto_plan(keys: PolicyKeys) -> Plan:
    """The plan of `repeats: auto` under a policy's `max_repeats` (the flow's is the base's)."""
    return Plan(rule="spread", step=1, max_repeats=keys.max_repeats)


def first_repeats(config: GateConfig) -> int:
    """Round 0's runs of every case: `repeats`, or the first round of auto."""
    return auto_plan(config).first if config.repeats == "auto" else config.repeats


def measure_of(
    loaded: LoadedConfig, suite: SuiteConfig, cases: list[Case], checks_root: Path
) -> Measure:
    """The instrument `loaded` defines for `suite`, measuring `cases` (an inspect or pytest
    suite: its framework's, none here; round 0 runs the task's `epochs` when it names them)."""
    config = loaded.config
    framework = FrameworkSuite.of(suite) if suite.framework is not None else None
    epochs = framework.epochs if framework is not None else None
    return Measure(
        cases=tuple(cases),
        judge=config.judge,
        simulated_user=config.simulated_user,
        prices=config.prices,
        sandbox=config.sandbox,
        timeout_s=config.timeout_s,
        concurrency=config.concurrency,
        repeats=epochs or first_repeats(config),
        auto=auto_plan(config) if config.repeats == "auto" else None,
        checks_root=checks_root.resolve(),
        config_file=str(loaded.path),
        watch=(*config.watch, *suite.watch),
        framework=framework,
    )


def own_of(loaded: LoadedConfig, suite: SuiteConfig) -> OwnSystem:
    """The system `loaded`'s suite runs, with its SDK."""
    sandbox = loaded.config.sandbox
    return OwnSystem(
        system=suite.system,
        pythonpath=tuple(sandbox.pythonpath),
        prelude=sandbox.prelude,
        config_file=loaded.path,
    )
