"""`gate.yml`: typed configuration with defaults; errors name the file, line and key."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from gate.errors import InputError
from gate.inputs.framework_suites import (
    InspectSuite,
    InspectSystem,
    PytestSuite,
    PytestSystem,
    framework_system,
)
from gate.inputs.policy import PolicyKeys
from gate.inputs.sourcemap import Locator, known_fields, load_yaml, validation_error

if TYPE_CHECKING:
    from gate.promptfoo.inputs.files import Checkout


class ClosedModel(BaseModel):
    """Unknown keys are errors (a typo in gate.yml is never ignored); a loaded config is frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ProviderSettings(ClosedModel):
    """Connection settings shared by the HTTP-backed kinds."""

    timeout_s: float = Field(60.0, gt=0, description="Per-request timeout in seconds.")
    max_retries: int = Field(5, ge=0, le=20, description="Retries on 429/5xx/timeouts.")
    backoff_s: float = Field(
        1.0, ge=0, description="First retry delay; doubles each retry (with jitter)."
    )
    max_backoff_s: float = Field(
        60.0, ge=0, description="Longest single wait, also for Retry-After and reset headers."
    )


class OpenAISystem(ProviderSettings):
    kind: Literal["openai"]
    model_config_file: str = Field(alias="model_config", description="YAML file: model, ...")
    prompt: str = Field(description="Jinja2 template rendered with the case input.")
    base_url: str | None = Field(None, description="Default: $OPENAI_BASE_URL or api.openai.com")
    api_key_env: str = "OPENAI_API_KEY"

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, protected_namespaces=()
    )


class AnthropicSystem(ProviderSettings):
    kind: Literal["anthropic"]
    model_config_file: str = Field(alias="model_config")
    prompt: str
    base_url: str | None = None
    api_key_env: str = "ANTHROPIC_API_KEY"

    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, protected_namespaces=()
    )


class HttpSystem(ProviderSettings):
    kind: Literal["http"]
    url: str
    headers: dict[str, str] = Field(
        default_factory=dict, description="Values may use ${ENV_VAR} for secrets."
    )
    cache: bool = Field(
        False, description="Cache answers; only when the service's answer depends on the request"
    )


class CommandSystem(ClosedModel):
    kind: Literal["command"]
    command: list[str] = Field(min_length=1, description="argv, run in the side's checkout")


class PythonSystem(ClosedModel):
    kind: Literal["python"]
    target: str = Field(description="module:function, imported from the side's checkout")

    @field_validator("target")
    @classmethod
    def _target_shape(cls, value: str) -> str:
        module, _, func = value.partition(":")
        if not module or not func:
            raise ValueError(f"target must look like `module:function`, got {value!r}")
        return value


class ReplaySystem(ClosedModel):
    kind: Literal["replay"]
    file: str = Field(description="Recorded outputs keyed by case id (see --record)")


class PromptfooSystem(ProviderSettings):
    """One prompt and one provider of a promptfoo config (what a suite's `promptfoo:` makes)."""

    kind: Literal["promptfoo"]
    config: str = Field(description="The promptfoo config, relative to gate.yml")
    prompt: str | None = Field(None, description="The prompt's name, when it has several")
    provider: str | None = Field(None, description="The provider's label or id, when several")


SystemConfig = Annotated[
    OpenAISystem
    | AnthropicSystem
    | HttpSystem
    | CommandSystem
    | PythonSystem
    | ReplaySystem
    | PromptfooSystem
    | InspectSystem
    | PytestSystem,
    Field(discriminator="kind"),
]


class JudgeConfig(ProviderSettings):
    """The model that scores `expect.rubric`; any provider kind, always at temperature 0."""

    kind: Literal["openai", "anthropic", "http"] = "openai"
    model: str | None = Field(None, description="Required for the openai and anthropic kinds")
    base_url: str | None = Field(None, description="openai/anthropic: default from environment")
    url: str | None = Field(None, description="http kind: the service to POST to")
    api_key_env: str | None = Field(None, description="Default OPENAI_API_KEY/ANTHROPIC_API_KEY")
    headers: dict[str, str] = Field(
        default_factory=dict, description="http kind; values may use ${ENV_VAR}"
    )
    max_tokens: int = Field(512, ge=16)

    @model_validator(mode="after")
    def _target(self) -> JudgeConfig:
        if self.kind == "http" and not self.url:
            raise ValueError("a judge of kind `http` needs `url`")
        if self.kind != "http" and not self.model:
            raise ValueError(f"a judge of kind `{self.kind}` needs `model`")
        return self


class SandboxConfig(ClosedModel):
    """The sandbox of code checks and `python` checks; in the PR flow its limits are the
    base's for both sides."""

    timeout_s: float = Field(5.0, gt=0, description="Wall-clock limit per code execution")
    memory_mb: int = Field(512, ge=32, description="Address-space limit")
    cpu_s: int | None = Field(None, ge=1, description="CPU-time limit (default: timeout + 1)")
    max_processes: int = Field(16, ge=1)
    max_open_files: int = Field(64, ge=16)
    max_file_mb: int = Field(16, ge=1)
    max_output_kb: int = Field(64, ge=1, description="Captured stdout/stderr per stream")
    pythonpath: list[str] = Field(
        default_factory=list,
        description="Folders of the checkout importable by generated code (each side's own in "
        "the PR flow; the python checks get the base's)",
    )
    prelude: str = Field(
        "", description="Code run before the candidate, e.g. imports (each side's own)"
    )
    workers: int | None = Field(
        None, ge=1, le=64, description="Parallel executions (default: cores)"
    )
    uid_base: int = Field(
        2_000_000_000,
        ge=1000,
        le=4_000_000_000,
        description="Running as root: jobs run as distinct unprivileged uids above this one",
    )


class Price(ClosedModel):
    input: float = Field(ge=0, description="USD per million input tokens")
    output: float = Field(ge=0, description="USD per million output tokens")


class CacheConfig(ClosedModel):
    enabled: bool = True
    dir: str | None = Field(
        None,
        description="Default: $GATE_CACHE_DIR, else .eval-gate/cache in the Action's workspace, "
        "else ~/.cache/eval-gate; a relative path is relative to the repository root",
    )
    keep_days: float = Field(
        7, gt=0, description="The Action deletes answers that no run read for this many days"
    )


class SuiteConfig(ClosedModel):
    name: str = "default"
    cases: str | list[str] | None = Field(
        None,
        description="File, glob or list of them (relative to config): .jsonl, .json, .yaml, "
        ".csv. In the PR flow the base's cases measure both sides (by id, as the base defines "
        "them); cases the PR adds are asked of both and kept out of the delta",
    )
    promptfoo: str | None = Field(
        None,
        description="A promptfoo config (relative to gate.yml) instead of cases and system: its "
        "tests are the cases, each prompt and provider a suite (docs/promptfoo.md)",
    )
    inspect: InspectSuite | None = Field(
        None,
        description="An inspect_ai task instead of cases and system: its samples are the cases "
        "(docs/frameworks.md)",
    )
    pytest: PytestSuite | None = Field(
        None,
        description="pytest tests instead of cases and system: each test is a case "
        "(docs/frameworks.md)",
    )
    instrument: list[str] | None = Field(
        None,
        description="inspect and pytest suites: globs of the files that measure (the task, "
        "its dataset and scorers; the tests and their conftest.py), taken from the base on "
        "both sides. Default: the task's folder; the test paths and the conftest.py above them",
    )
    system: SystemConfig = Field(
        description="The system under test; in the PR flow each side runs its own"
    )
    watch: list[str] = Field(default_factory=list, description="Extra globs for this suite")

    @model_validator(mode="before")
    @classmethod
    def _framework_system(cls, data: Any) -> Any:
        """`inspect:` or `pytest:` stand for the system too (the checkout's code)."""
        return framework_system(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _one_source(self) -> SuiteConfig:
        framework = self.inspect is not None or self.pytest is not None
        if framework:
            return self
        if (self.cases is None) == (self.promptfoo is None):
            raise ValueError(
                "a suite needs `cases` (and `system`), `promptfoo`, `inspect` or `pytest`"
            )
        if self.instrument is not None:
            raise ValueError(
                "`instrument` is for inspect and pytest suites (cases measure the others)"
            )
        return self

    @property
    def framework(self) -> str | None:
        """`inspect` or `pytest` for a suite of another framework, else None."""
        return "inspect" if self.inspect is not None else "pytest" if self.pytest else None

    @field_validator("name")
    @classmethod
    def _not_an_option_marker(cls, name: str) -> str:
        if name == "--":  # command lines read `--` as the end of the options, never as a value
            raise ValueError("a suite cannot be named '--'")
        return name


class GateConfig(PolicyKeys):
    """`gate.yml`: the policy's keys at the top level, then what runs and how."""

    watch: list[str] = Field(
        default_factory=list,
        description="Globs; a PR touching none skips (one that narrows it is named in the comment)",
    )
    repeats: Annotated[int, Field(ge=1, le=100)] | Literal["auto"] = Field(
        1,
        description="Runs per case and side; auto: the gate decides, in rounds, and stops when "
        "the drop test decides (see max_calls_per_case, max_cost_usd, max_repeats)",
    )
    concurrency: int = Field(8, ge=1, le=512)
    timeout_s: float = Field(120.0, gt=0, description="Per-case limit for one system call")
    suites: list[SuiteConfig] = Field(min_length=1)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    judge: JudgeConfig | None = Field(
        None, description="The model that scores expect.rubric; in the PR flow the base's"
    )
    simulated_user: JudgeConfig | None = Field(
        None,
        description="The model that plays a case's `user` (persona, goal), shaped as `judge`; "
        "in the PR flow the base's",
    )
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="USD per million tokens per model; in the PR flow the base's price both "
        "sides (a model they lack is unmeasured, not free)",
    )
    cache: CacheConfig = Field(default_factory=CacheConfig)
    templates: str | None = Field(
        None,
        description="Folder of jinja2 templates extending or replacing the PR comment's body. "
        "They render in a sandbox (no environment, files or Python internals); the marker and "
        "the verdict line are the gate's, above what they render. In the PR flow the base "
        "commit's render the comment",
    )

    @field_validator("repeats", mode="wrap")
    @classmethod
    def _repeats(cls, value: Any, handler: Any) -> int | str:
        """A number of runs or `auto`; one message, at the key, for anything else."""
        if value == "auto":
            return "auto"
        if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 100:
            return value
        raise ValueError(f"must be a number of runs from 1 to 100, or auto; got {value!r}")

    @model_validator(mode="before")
    @classmethod
    def _single_suite_shorthand(cls, data: Any) -> Any:
        """`cases:` + `system:` at the top level mean one suite named `default`."""
        return single_suite(data)

    @model_validator(mode="after")
    def _unique_suite_names(self) -> GateConfig:
        names = [s.name for s in self.suites]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"suite names must be unique, repeated: {', '.join(dupes)}")
        return self

    def suite(self, name: str | None) -> SuiteConfig:
        if name is None:
            return self.suites[0]
        for suite in self.suites:
            if suite.name == name:
                return suite
        raise InputError(
            f"no suite named {name!r}; suites: {', '.join(s.name for s in self.suites)}",
            key="suites",
        )


class LoadedConfig(BaseModel):
    """A parsed config together with where it came from (cases resolve against its folder)
    and where each key stands in it (so later errors can name the line)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    config: GateConfig
    path: Path
    locator: Locator | None = None
    shorthand: bool = Field(False, description="one suite written as top-level cases/system")
    origins: dict[str, int] = Field(
        default_factory=dict,
        description="a suite's place in the file's `suites`, when a promptfoo config made it",
    )

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    def suite_line(self, name: str, *keys: str) -> int | None:
        """The line of `keys` inside the suite `name` (e.g. "system", "model_config")."""
        if self.locator is None:
            return None
        index = self.origins.get(name)
        if index is None:
            index = next(i for i, s in enumerate(self.config.suites) if s.name == name)
        prefix: tuple[str | int, ...] = () if self.shorthand else ("suites", index)
        return self.locator.line((*prefix, *keys))

    def line(self, *keys: str) -> int | None:
        return self.locator.line(keys) if self.locator is not None else None


VOCABULARY = known_fields(GateConfig, *SystemConfig.__args__[0].__args__)  # type: ignore[attr-defined]


def single_suite(data: Any) -> Any:
    """`cases:` + `system:` (or `promptfoo:`, `inspect:`, `pytest:`) at the top level mean one
    suite, `default`."""
    keys = ("cases", "system", "promptfoo", "inspect", "pytest")
    if isinstance(data, dict) and "suites" not in data and any(k in data for k in keys):
        data = dict(data)
        suite = {k: data.pop(k) for k in (*keys, "instrument", "name") if k in data}
        data["suites"] = [suite]
    return data


def read_config(text: str, path: Path, checkout: Checkout | None = None) -> LoadedConfig:
    """gate.yml's text (from `path`); a suite's `promptfoo:` config is read from `checkout`
    (default: the checkout `path` lies in), and becomes one suite per prompt and provider."""
    data, locator = load_yaml(text, path)
    if data is None:
        raise InputError("the file is empty; it needs at least `cases` and `system`", file=path)
    if not isinstance(data, dict):
        raise InputError("the top level must be a mapping of keys", file=path, line=1)
    shorthand = "suites" not in data
    data = single_suite(data)
    origins: dict[str, int] = {}
    if "promptfoo" in text:  # jinja2 and the promptfoo readers, only for promptfoo suites
        from gate.promptfoo.inputs.suites import expand_suites

        data, origins = expand_suites(data, locator, path, checkout, shorthand)
    try:
        config = GateConfig.model_validate(data)
    except ValidationError as err:
        raise validation_error(
            err, file=path, data=data, locator=locator, vocabulary=VOCABULARY
        ) from None
    return LoadedConfig(
        config=config, path=path.resolve(), locator=locator, shorthand=shorthand, origins=origins
    )


def load_config(path: str | Path) -> LoadedConfig:
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("config file not found", file=file) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read config: {exc}", file=file) from None
    return read_config(text, file)
