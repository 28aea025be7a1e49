"""A chat system's files from the side's checkout: the `model_config` YAML and the prompt.

Prompts are jinja2 templates rendered in jinja2's immutable sandbox with strict undefined
variables; the variables are the case input's keys, plus `input` (the whole object, with the
case `id`). A prompt may include, import or extend other files of the checkout
(`gate.providers.prompt_sources`): all of them are read before the first case renders.
nunjucks' built-in filters that jinja2 lacks (`dump`, `nl2br`) and promptfoo's `load` are
there too; any other unknown filter is an error naming the file, the line and the filter.

The rendered prompt is the user message. A template may instead hold several messages, each
introduced by a line that is exactly `[[system]]`, `[[user]]` or `[[assistant]]`. Markers are
found in the template source before rendering, so text coming from a case input can never
start a new message. The model config's `system` file, when given, is rendered the same way
and becomes the first system message.
"""

from __future__ import annotations

import json
import re
import secrets
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from jinja2 import FunctionLoader, StrictUndefined, TemplateError, TemplateSyntaxError
from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.errors import InputError, SystemCallError
from gate.inputs.sourcemap import Locator, key_line, load_yaml, validation_error
from gate.promptfoo.inputs.nunjucks import NUNJUCKS_FILTERS, unknown_filter
from gate.providers.model_params import GATES_OWN, foreign_param, unknown_key
from gate.providers.prompt_sources import PromptSources
from gate.providers.wire_formats import Message, Role

_MARKER = re.compile(r"^[ \t]*\[\[(system|user|assistant)\]\][ \t]*$", re.MULTILINE)
# Parameters the gate sets itself; a model config may not override them.
RESERVED_PARAMS = tuple(sorted(GATES_OWN))


class ModelSettings(BaseModel):
    """`model_config` YAML: `model`, optional common keys, the provider's documented request
    parameters (`gate.providers.model_params`), and `extra_body` for any other."""

    model_config = ConfigDict(extra="allow", frozen=True)

    model: str = Field(min_length=1)
    temperature: float | None = Field(None, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)
    system: str | None = Field(None, description="System-prompt file, relative to the checkout")
    provider: Literal["openai", "anthropic"] | None = Field(
        None, description="Decides this side's provider, whatever the suite's `kind` says"
    )
    base_url: str | None = Field(None, description="The provider's endpoint for this model")
    api_key_env: str | None = Field(None, description="Environment variable holding the key")
    extra_body: dict[str, Any] | None = Field(
        None, description="Parameters sent as they are: those only some server takes"
    )

    def params(self) -> dict[str, Any]:
        """The request parameters: everything but `model`, `system` and where to send them
        (`provider`, `base_url`, `api_key_env`), unset keys left out; `extra_body` last."""
        common = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        params = {k: v for k, v in common.items() if v is not None}
        return {**params, **(self.model_extra or {}), **(self.extra_body or {})}


def load_model_settings(path: Path, display: str) -> tuple[ModelSettings, Locator]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read model config: {exc}", file=display) from None
    data, locator = load_yaml(text, display)
    if not isinstance(data, dict):
        raise InputError("a model config must be a mapping with at least `model`", file=display)
    for name in data:  # before `model` is found missing: `modle:` is the one to name
        problem = unknown_key(str(name))
        if problem:
            line = key_line(locator, (name,))
            raise InputError(problem, file=display, line=line, key=str(name))
    try:
        settings = ModelSettings.model_validate(data)
    except ValidationError as err:
        raise validation_error(err, file=display, data=data, locator=locator) from None
    extra: list[tuple[tuple[str, ...], Any]] = [
        ((name,), value) for name, value in (settings.model_extra or {}).items()
    ]
    extra += [(("extra_body", name), value) for name, value in (settings.extra_body or {}).items()]
    for loc, value in extra:
        problem = _param_problem(str(loc[-1]), value)
        if problem:
            key = ".".join(str(part) for part in loc)
            raise InputError(problem, file=display, line=locator.line(loc), key=key)
    return settings, locator


def provider_problem(
    settings: ModelSettings, locator: Locator, kind: str, display: str
) -> InputError | None:
    """A parameter of another provider's in a model config that this side sends to `kind`
    (the model config's `provider:`, or the suite's `kind`)."""
    for name in settings.model_extra or {}:
        problem = foreign_param(name, kind)
        if problem:
            return InputError(problem, file=display, line=key_line(locator, (name,)), key=name)
    return None


def _param_problem(name: str, value: Any) -> str | None:
    if name in RESERVED_PARAMS:
        return "set by the gate; remove it from the model config"
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return f"a provider parameter must be JSON data, got {type(value).__name__}"
    return None


def _environment() -> ImmutableSandboxedEnvironment:
    environment = ImmutableSandboxedEnvironment(
        undefined=StrictUndefined, autoescape=False, keep_trailing_newline=False
    )
    environment.filters.update(NUNJUCKS_FILTERS)  # prompts written for nunjucks (promptfoo)
    return environment


class PromptTemplate:
    """One template file and what it includes; `render` returns its messages (one user
    message without markers). `root` is the side's checkout: nothing is read outside it."""

    def __init__(self, path: Path, display: str, *, root: Path, role: Role = "user") -> None:
        self.path = path
        self.display = display
        self.role = role
        # A random separator no input value can contain marks where each message starts.
        self._sep = f"\x1e{secrets.token_hex(8)}:"
        env = _environment()
        self.sources = PromptSources(env, root, path, display, self._mark)
        env.loader = FunctionLoader(self._load)
        for source in self.sources.by_name.values():  # also inside an {% if %}
            problem = unknown_filter(env, source.text, source.display)
            if problem is not None:
                raise problem
        try:
            self._template = env.get_template(display)
        except TemplateSyntaxError as exc:
            raise InputError(
                f"template error: {exc.message}", file=exc.filename or display, line=exc.lineno
            ) from None

    @property
    def files(self) -> list[Path]:
        """The template's file and every file it includes, imports or extends."""
        return self.sources.files

    def _mark(self, source: str) -> str:
        return _MARKER.sub(lambda m: f"{self._sep}{m.group(1)}{self._sep}", source)

    def _load(self, name: str) -> tuple[str, str, Callable[[], bool]] | None:
        found = self.sources.get(name)
        return None if found is None else (found.text, found.display, lambda: True)

    def render(self, variables: dict[str, Any]) -> list[Message]:
        try:
            text = self._template.render(variables)
        except SecurityError as exc:
            raise self._error(exc, "blocked by the template sandbox: ") from None
        except TemplateError as exc:
            raise self._error(exc, "") from None
        except Exception as exc:  # e.g. a TypeError from `{{ a + 1 }}` on a string
            raise self._error(exc, f"{type(exc).__name__}: ") from None
        return self._split(text)

    def _error(self, exc: Exception, prefix: str) -> SystemCallError:
        shown = {source.display for source in self.sources.by_name.values()}
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename in shown]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else self.display
        message = getattr(exc, "message", None) or str(exc)
        return SystemCallError(f"prompt {where}: {prefix}{message}")

    def _split(self, text: str) -> list[Message]:
        parts = text.split(self._sep)
        messages: list[Message] = []
        if parts[0].strip():
            messages.append(Message(role=self.role, content=parts[0].strip()))
        for role, content in zip(parts[1::2], parts[2::2], strict=True):
            if content.strip():
                messages.append(Message(role=role, content=content.strip()))  # type: ignore[arg-type]
        return messages


class ChatPrompt:
    """The model settings, the optional system-prompt template and the prompt template."""

    def __init__(self, root: Path, model_config: str, prompt: str, key: str) -> None:
        config_path = _checkout_file(root, model_config, f"{key}.model_config")
        self.settings, locator = load_model_settings(config_path, model_config)
        self.locator = locator  # where the model config's keys are, for later errors
        self.files = [config_path]
        self.system: PromptTemplate | None = None
        if self.settings.system is not None:
            system_path = _checkout_file(
                root,
                self.settings.system,
                "system",
                file=model_config,
                line=locator.line(("system",)),
            )
            self.system = PromptTemplate(
                system_path, self.settings.system, root=root, role="system"
            )
            self.files += self.system.files
        prompt_path = _checkout_file(root, prompt, f"{key}.prompt")
        self.prompt = PromptTemplate(prompt_path, prompt, root=root)
        self.files += self.prompt.files

    def render(self, case_input: dict[str, Any]) -> list[Message]:
        variables = {**case_input, "input": case_input}
        messages = self.system.render(variables) if self.system else []
        messages += self.prompt.render(variables)
        if not any(m.role == "user" for m in messages):
            raise SystemCallError(f"prompt {self.prompt.display}: rendered no user message")
        return messages


def _checkout_file(
    root: Path, name: str, key: str, *, file: str | None = None, line: int | None = None
) -> Path:
    path = (root / name).resolve()
    if not path.is_relative_to(root.resolve()):
        raise InputError(f"{name!r} is outside the checkout", file=file, line=line, key=key)
    if not path.is_file():
        raise InputError(
            f"file {name!r} not found in checkout {root}", file=file, line=line, key=key
        )
    return path
