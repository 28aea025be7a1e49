"""What measures an inspect or pytest suite, as one value that travels in a side's `Measure`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from gate.frameworks.instrument import instrument_globs
from gate.inputs.config import SuiteConfig, SystemConfig
from gate.inputs.framework_suites import InspectSuite, InspectSystem, PytestSuite


class FrameworkSuite(BaseModel):
    """The measuring gate.yml's framework block (`inspect:` or `pytest:`: the task, its
    arguments, what passes, the epochs; the tests pytest selects) and the instrument's globs.
    The files those globs match are taken from the measure's `checks_root` on both sides."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    inspect: InspectSuite | None = None
    pytest: PytestSuite | None = None
    instrument: tuple[str, ...]

    @classmethod
    def of(cls, suite: SuiteConfig) -> FrameworkSuite:
        return cls(
            inspect=suite.inspect, pytest=suite.pytest, instrument=tuple(instrument_globs(suite))
        )

    @property
    def framework(self) -> Literal["inspect", "pytest"]:
        return "inspect" if self.inspect is not None else "pytest"

    @property
    def epochs(self) -> int | None:
        """The runs of each sample round 0 asks, when the task names them."""
        return self.inspect.epochs if self.inspect is not None else None

    def for_system(self, system: SystemConfig) -> FrameworkSuite:
        """The measuring settings with a side's own model (an inspect suite's `model` and
        `model_args` are each side's, like a chat system's model config)."""
        if self.inspect is None or not isinstance(system, InspectSystem):
            return self
        own = {"model": system.model, "model_args": system.model_args}
        return self.model_copy(update={"inspect": self.inspect.model_copy(update=own)})
