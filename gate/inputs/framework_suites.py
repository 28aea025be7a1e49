"""gate.yml's suites from other frameworks: `inspect:` (an inspect_ai task) and `pytest:` (a
pytest selection), and the `system` block each of them stands for.

Such a suite has no case files and no `system:` of its own: its cases are the task's samples
or the selected tests, and its system is the checkout's own code (and, for inspect, the
model it names). The measuring keys (the task, its arguments, the scorer and what passes,
the epochs; the tests pytest selects) are the base's in the PR flow, like a suite's cases;
the model is each side's own, like a chat system's model config. See docs/frameworks.md.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

FRAMEWORKS = ("inspect", "pytest")
DEFAULT_TIMEOUT_S = 3600.0


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class InspectSuite(_Closed):
    """`inspect:` an inspect_ai task, run on each side with `inspect eval`'s semantics."""

    task: str = Field(
        description="`FILE.py@task` (or `FILE.py` with one task), relative to the repository root"
    )
    model: str | None = Field(
        None, description="inspect's model, e.g. openai/gpt-4o-mini (each side's own)"
    )
    model_args: dict[str, JsonValue] = Field(
        default_factory=dict, description="inspect's -M model arguments (each side's own)"
    )
    task_args: dict[str, JsonValue] = Field(
        default_factory=dict, description="inspect's -T task arguments"
    )
    epochs: int | None = Field(
        None,
        ge=1,
        le=100,
        description="Runs of each sample (default: gate.yml's `repeats`, round 0 of auto)",
    )
    pass_: str | float | bool = Field(
        "C",
        alias="pass",
        description="What passes: a letter grade (C, or P for partial credit too), true, or "
        "a number each score must reach",
    )
    scorer: str | None = Field(
        None, description="The scorer that decides (default: every scorer must pass)"
    )
    timeout_s: float = Field(
        DEFAULT_TIMEOUT_S, gt=0, description="Wall-clock limit of one `inspect eval` run"
    )

    @field_validator("task")
    @classmethod
    def _task_file(cls, value: str) -> str:
        file = value.partition("@")[0]
        if not file.endswith(".py"):
            raise ValueError(f"task must name a Python file, `FILE.py@task`; got {value!r}")
        return value

    @property
    def file(self) -> str:
        return self.task.partition("@")[0].removeprefix("./")


class PytestSuite(_Closed):
    """`pytest:` the tests pytest selects with `args`, each test (node id) a case."""

    args: list[str] = Field(
        min_length=1,
        description="pytest's arguments: test paths (relative to the repository root) and "
        "selection options (-k, -m)",
    )
    timeout_s: float = Field(
        DEFAULT_TIMEOUT_S, gt=0, description="Wall-clock limit of one pytest run"
    )

    @field_validator("args")
    @classmethod
    def _no_result_options(cls, args: list[str]) -> list[str]:
        """Options that change how results are reported or repeated are the gate's own."""
        owned = ("-p", "--lf", "--ff", "--last-failed", "--failed-first", "-n", "--numprocesses")
        for arg in args:
            name = arg.partition("=")[0]
            if name in owned or (arg.startswith("-p") and len(arg) > 2):
                raise ValueError(f"{arg!r} is the gate's to set (see docs/frameworks.md)")
        return args

    @property
    def paths(self) -> list[str]:
        """The arguments that name test files or folders (with or without `::test`)."""
        paths, skip_next = [], False
        for arg in self.args:
            if skip_next:
                skip_next = False
                continue
            if arg in ("-k", "-m", "-c", "--rootdir", "--confcutdir", "--deselect", "--ignore"):
                skip_next = True
                continue
            if not arg.startswith("-"):
                paths.append(arg.partition("::")[0].removeprefix("./").rstrip("/") or ".")
        return paths


class InspectSystem(_Closed):
    """The system of an `inspect:` suite: the checkout's code and the model it names."""

    kind: Literal["inspect"]
    model: str | None = None
    model_args: dict[str, JsonValue] = Field(default_factory=dict)


class PytestSystem(_Closed):
    """The system of a `pytest:` suite: the checkout's code the tests import."""

    kind: Literal["pytest"]


def framework_system(entry: dict[str, Any]) -> dict[str, Any]:
    """A suite entry with `inspect:` or `pytest:` given the system block it stands for; a
    `system:` or `cases:` beside them is refused (their tests and task are both)."""
    present = [k for k in FRAMEWORKS if k in entry]
    if not present:
        return entry
    if len(present) > 1:
        raise ValueError("a suite takes one of `inspect` and `pytest`")
    for key in ("system", "cases", "promptfoo"):
        if key in entry:
            raise ValueError(
                f"a suite with `{present[0]}` takes no `{key}`: its tests are the cases and "
                "the checkout's code is the system"
            )
    settings = entry[present[0]]
    system: dict[str, Any] = {"kind": present[0]}
    if present[0] == "inspect" and isinstance(settings, dict):
        system |= {k: settings[k] for k in ("model", "model_args") if k in settings}
    return {**entry, "system": system}
