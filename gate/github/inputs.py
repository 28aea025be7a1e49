"""Everything `gate action` takes from its environment, parsed once into typed objects.

The runner passes the inputs of action.yml as `INPUT_<NAME>` (upper-cased, hyphens kept) and
describes the run in `GITHUB_*` variables; nothing else is read. An input left empty means its
default. A bad value is an input error naming the input (exit code 2).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from gate.errors import InputError
from gate.inputs.policy import Severity, parse_severities, policy_value
from gate.inputs.shard import Shard

CommentMode = Literal["always", "on-change", "never"]
ActionMode = Literal["full", "shard", "finish"]
ACTION_MODES: tuple[ActionMode, ...] = get_args(ActionMode)
TRUE = {"true", "True", "TRUE"}
FALSE = {"false", "False", "FALSE"}  # what @actions/core's getBooleanInput accepts


class ActionInputs(BaseModel):
    """The inputs of action.yml (SPEC "Action contract", plus the sharded mode's)."""

    model_config = ConfigDict(frozen=True)

    config: str = "gate.yml"
    github_token: SecretStr | None = None
    threshold: float | None = None  # checked by the policy key's own rule when read
    block_severities: list[Severity] | None = None
    base_ref: str | None = None
    comment: CommentMode = "on-change"
    fail_on_regression: bool = True
    no_cache: bool = Field(False, description="draw fresh answers: no response cache")
    mode: ActionMode = "full"
    shard: Shard | None = Field(None, description="mode shard: which shard this job runs")
    shard_reports: str = Field(
        "eval-gate-shards", description="mode finish: the folder holding the shard jobs' reports"
    )


class ActionEnv(BaseModel):
    """The run as the runner describes it in `GITHUB_*`."""

    model_config = ConfigDict(frozen=True)

    event_name: str
    event_path: Path
    repository: str
    workspace: Path
    api_url: str = "https://api.github.com"
    server_url: str = "https://github.com"
    output: Path | None = None
    step_summary: Path | None = None
    run_id: str | None = None

    @property
    def run_url(self) -> str | None:
        if not self.run_id:
            return None
        return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"


REQUIRED = {
    "event_name": "GITHUB_EVENT_NAME",
    "event_path": "GITHUB_EVENT_PATH",
    "repository": "GITHUB_REPOSITORY",
    "workspace": "GITHUB_WORKSPACE",
}
OPTIONAL = {
    "api_url": "GITHUB_API_URL",
    "server_url": "GITHUB_SERVER_URL",
    "output": "GITHUB_OUTPUT",
    "step_summary": "GITHUB_STEP_SUMMARY",
    "run_id": "GITHUB_RUN_ID",
}


def _input(environ: Mapping[str, str], name: str) -> str | None:
    value = environ.get(f"INPUT_{name.upper()}", "").strip()
    return value or None


def _bad(name: str, message: str) -> InputError:
    return InputError(f"action input `{name}` {message}")


def _bool(name: str, value: str | None, default: bool) -> bool:
    if value is None:
        return default
    if value in TRUE or value in FALSE:
        return value in TRUE
    raise _bad(name, f"must be true or false, got {value!r}")


def _threshold(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        raise _bad("threshold", f"must be a number of points, got {value!r}") from None
    try:
        threshold: float = policy_value("threshold", number, flag="threshold")
    except InputError as exc:
        raise _bad("threshold", f"{exc.message}, got {value!r}") from None
    return threshold


def _severities(value: str | None) -> list[Severity] | None:
    if value is None:
        return None
    try:
        return parse_severities(value, flag="block-severities")
    except InputError as exc:
        raise _bad("block-severities", f"has {exc.message}") from None


def _mode(value: str | None) -> ActionMode:
    mode = value or "full"
    if mode not in ACTION_MODES:
        raise _bad("mode", f"must be full, shard or finish, got {mode!r}")
    return mode  # type: ignore[return-value]


def _shard(value: str | None, mode: ActionMode) -> Shard | None:
    if mode != "shard":
        if value is not None:
            raise _bad("shard", f"applies only to `mode: shard` (the mode is {mode})")
        return None
    if value is None:
        raise _bad("shard", "is required with `mode: shard`, e.g. `${{ matrix.shard }}/4`")
    try:
        return Shard.parse(value)
    except InputError:
        raise _bad(
            "shard", f"must look like I/N with I from 1 to N (e.g. 2/4), got {value!r}"
        ) from None


def read_inputs(environ: Mapping[str, str]) -> ActionInputs:
    comment = _input(environ, "comment") or "on-change"
    if comment not in ("always", "on-change", "never"):
        raise _bad("comment", f"must be always, on-change or never, got {comment!r}")
    token = _input(environ, "github-token")
    mode = _mode(_input(environ, "mode"))
    return ActionInputs(
        config=_input(environ, "config") or "gate.yml",
        github_token=SecretStr(token) if token else None,
        threshold=_threshold(_input(environ, "threshold")),
        block_severities=_severities(_input(environ, "block-severities")),
        base_ref=_input(environ, "base-ref"),
        comment=comment,  # type: ignore[arg-type]
        fail_on_regression=_bool("fail-on-regression", _input(environ, "fail-on-regression"), True),
        no_cache=_bool("no-cache", _input(environ, "no-cache"), False),
        mode=mode,
        shard=_shard(_input(environ, "shard"), mode),
        shard_reports=_input(environ, "shard-reports") or "eval-gate-shards",
    )


def read_env(environ: Mapping[str, str]) -> ActionEnv:
    missing = [var for var in REQUIRED.values() if not environ.get(var)]
    if missing:
        raise InputError(
            f"{', '.join(missing)} not set: `gate action` runs inside GitHub Actions; "
            "use `gate check` on your machine"
        )
    values = {key: environ[var] for key, var in REQUIRED.items()}
    values |= {key: environ[var] for key, var in OPTIONAL.items() if environ.get(var)}
    try:
        return ActionEnv.model_validate(values)
    except ValidationError as err:
        raise InputError(f"bad GitHub Actions environment: {err.errors()[0]['msg']}") from None


class ActionSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    env: ActionEnv
    inputs: ActionInputs


def read_settings(environ: Mapping[str, str]) -> ActionSettings:
    """The one place `gate action` reads its environment."""
    return ActionSettings(env=read_env(environ), inputs=read_inputs(environ))
