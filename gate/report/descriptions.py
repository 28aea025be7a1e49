"""What a report's metadata line says ran: the side's system and the sandbox's protections.

The systems (`System.describe`) and the sandbox (`protections`) describe themselves as plain
data; `RunMeta` reads it into these models. Keys this gate does not know are kept (a newer
system's description reads whole), and a description's unset keys are not written.
"""

from __future__ import annotations

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
)


class PromptfooSource(BaseModel):
    """Where a promptfoo system comes from: its config, prompt and provider."""

    config: str
    prompt: str
    provider: str


class SystemInfo(BaseModel):
    """A side's system, by kind: what it calls and with which settings; never a secret."""

    model_config = ConfigDict(extra="allow")

    kind: str | None = None
    provider: str | None = Field(None, description="chat and http: who answers")
    model: str | None = None
    base_url: str | None = Field(None, description="chat: the endpoint, as shown")
    url: str | None = Field(None, description="http: the service, as shown")
    target: str | None = Field(None, description="python: `module:function`")
    file: str | None = Field(None, description="replay: the recording")
    command: list[str] | None = None
    cache: bool | None = Field(None, description="http: whether answers are cached")
    params: dict[str, JsonValue] | None = Field(
        None, description="chat: the model's parameters (temperature, tools, ...) as sent"
    )
    promptfoo: PromptfooSource | None = None

    @model_serializer(mode="wrap")
    def _set_keys_only(self, handler: SerializerFunctionWrapHandler) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class SandboxLimits(BaseModel):
    """The resource limits of one execution."""

    model_config = ConfigDict(extra="allow")

    address_space_mb: str
    cpu_s: int
    file_size_mb: int
    open_files: int
    processes: int | str = Field(description='"not enforced" where the uid is not dropped')


class SandboxInfo(BaseModel):
    """Which isolation measures were active where the code checks ran, and what was not."""

    model_config = ConfigDict(extra="allow")

    process: str
    network: str
    pid_namespace: bool
    mount_namespace: bool
    filesystem: str
    user: str
    no_new_privileges: bool
    rlimits: SandboxLimits
    timeout_s: float
    output_cap_kb: int
    environment: str
    in_process: str
    evidence: str
    workers: int
    degraded: list[str] = Field(description="the protections this machine could not give")
