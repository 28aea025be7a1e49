"""What a run's model endpoints need from the environment, found before anything runs.

The API key each chat system, the judge and the simulated user read (`api_key_env`:
OPENAI_API_KEY or ANTHROPIC_API_KEY by default; a public endpoint always needs one, a local
server usually does not), and the variables an `http` system's headers name. A missing one is
named where the user can change it: gate.yml's line of the system (or of `api_key_env`, when
written there, or of the `judge:` or `simulated_user:` block), or the model config's
`provider:` or `api_key_env:` line when that file chose the provider or the variable.
`gate validate` and `gate run` both ask here, so both say it the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gate.errors import InputError
from gate.inputs.cases import Case
from gate.inputs.config import (
    AnthropicSystem,
    HttpSystem,
    JudgeConfig,
    LoadedConfig,
    OpenAISystem,
    SuiteConfig,
)

# The providers' modules (requests, jinja2) are imported where a system or judge needs them: a
# run of a `python` system imports neither (tests/test_startup.py).


def located(exc: InputError, loaded: LoadedConfig, suite: SuiteConfig) -> InputError:
    """A system's refusal (its key `system.…`, or an inspect or pytest suite's `inspect.…`,
    `pytest.…`; no file) named at the suite's gate.yml line: the key's own line when the user
    wrote it there, else the block's."""
    key = exc.key or ""
    block, *keys = key.split(".")
    settings = suite.inspect if block == "inspect" else suite.pytest if block == "pytest" else None
    given = suite.system if block == "system" else settings
    if exc.file is not None or given is None:
        return exc
    written = keys and keys[0] in given.model_fields_set
    line = loaded.suite_line(suite.name, block, *(keys if written else ()))
    return InputError(
        f"suite {suite.name!r}: {exc.message}",
        file=loaded.path,
        line=line,
        key=key if written else block,
    )


def _from_model_config(
    exc: InputError, config: OpenAISystem | AnthropicSystem, root: Path, suite: SuiteConfig
) -> InputError | None:
    """The missing key at the model config's `api_key_env:` or `provider:`, when that file
    named the variable or switched the provider."""
    from gate.providers.prompts import load_model_settings

    path = (root / config.model_config_file).resolve()
    if not path.is_file():
        return None  # said as a missing file
    try:
        settings, locator = load_model_settings(path, config.model_config_file)
    except InputError:
        return None  # said by the prompt's check
    named = "api_key_env" if settings.api_key_env else "provider" if settings.provider else None
    if named is None:
        return None
    return InputError(
        f"suite {suite.name!r}: {exc.message}",
        file=config.model_config_file,
        line=locator.line((named,)),
        key=named,
    )


def system_key_problem(
    loaded: LoadedConfig, suite: SuiteConfig, root: Path, environ: Mapping[str, str]
) -> InputError | None:
    """The environment variable a suite's system needs and lacks (its API key, a header's
    `${VAR}`), named where it is set."""
    system = suite.system
    if not isinstance(system, HttpSystem | OpenAISystem | AnthropicSystem):
        return None
    from gate.providers.endpoints import anthropic_endpoint, openai_endpoint, service_endpoint
    from gate.systems.chat_provider import chat_config

    if isinstance(system, HttpSystem):
        try:
            service_endpoint(system.url, system.headers, environ, "system")
        except InputError as exc:
            return located(exc, loaded, suite)
        return None
    try:
        config = chat_config(system, root)
    except InputError:
        return None  # the model config itself is wrong: the prompt's check says how
    build = openai_endpoint if config.kind == "openai" else anthropic_endpoint
    try:
        build(config.base_url, config.api_key_env, environ, "system")
    except InputError as exc:
        if (exc.key or "").endswith("api_key_env"):
            found = _from_model_config(exc, system, root, suite)
            if found is not None:
                return found
        return located(exc, loaded, suite)
    return None


def judge_key_problem(
    loaded: LoadedConfig, cases: list[Case], environ: Mapping[str, str]
) -> InputError | None:
    """The key of a model of the instrument a case asks and the environment lacks: the
    judge's (a case with `expect.rubric`), the simulated user's (a case with `user`)."""
    judge: JudgeConfig | None = loaded.config.judge
    if judge is not None and any(c.expect.rubric for c in cases):
        problem = _model_key_problem(loaded, "judge", judge, environ)
        if problem is not None:
            return problem
    user: JudgeConfig | None = loaded.config.simulated_user
    if user is not None and any(c.simulated for c in cases):
        return _model_key_problem(loaded, "simulated_user", user, environ)
    return None


def _model_key_problem(
    loaded: LoadedConfig, role: str, model: JudgeConfig, environ: Mapping[str, str]
) -> InputError | None:
    """A model block of gate.yml (`judge:`, `simulated_user:`) whose key is not set, named
    at its line."""
    from gate.providers.endpoints import anthropic_endpoint, openai_endpoint, service_endpoint

    try:
        if model.kind == "http":
            service_endpoint(model.url or "", model.headers, environ, role)
        else:
            build = openai_endpoint if model.kind == "openai" else anthropic_endpoint
            build(model.base_url, model.api_key_env, environ, role)
    except InputError as exc:
        keys = (exc.key or role).split(".")
        written = len(keys) > 1 and keys[1] in model.model_fields_set
        return InputError(
            exc.message,
            file=loaded.path,
            line=loaded.line(*(keys[:2] if written else [role])),
            key=exc.key if written else role,
        )
    return None
