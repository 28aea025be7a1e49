"""The messages between the gate and its zygote, validated where they enter the gate.

The gate sends `ZygoteSetup` (`boot`) first, then one `Job` each; the zygote answers `Hello`,
then one `Outcome` per job (built as plain dicts there: the zygote has no pydantic)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class Job(BaseModel):
    """One execution. `code`: the candidate's code and what to run against it (never `eq`).
    `check`: the team's own check `target` (`module:function`), called with `arguments`."""

    model_config = ConfigDict(frozen=True)

    id: int
    kind: Literal["code", "check"] = "code"
    code: str = ""
    must_compile: bool = False
    calls: list[str] = Field(default_factory=list)
    test_code: str | None = None
    tests: list[str] = Field(default_factory=list, description="test_* names, parsed here")
    target: str = ""
    arguments: list[Any] = Field(default_factory=list, description="plain data, for `check`")


class IsolationMode(BaseModel):
    """What isolation the zygote found this machine allows (`zygote.isolate.IsolationMode`)."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    root: bool
    user_ns: bool = False
    network: str = "not isolated"
    pid_ns: bool = False
    pid_via: str = ""
    mount_ns: bool = False
    uid_drop: bool = False
    first_uid: int = 0
    view_problem: str = ""


class Hello(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    type: Literal["hello"]
    pid: int
    mode: IsolationMode


class Outcome(BaseModel):
    """What the zygote saw: the process's fate, its capped output and the authentic frames."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: int
    status: Literal["ok", "setup_failed", "sandbox_failed"]
    error: str = ""
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    cpu_s: float = 0.0
    max_rss_kb: int = 0
    stdout: str = ""
    stderr: str = ""
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    records: list[list[Any]] = Field(default_factory=list)
    evidence_error: str | None = None
