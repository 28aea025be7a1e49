"""promptfoo's assertions, as data the gate's checks run with promptfoo's semantics
(`gate.promptfoo.checks`): the one reading of promptfoo's assertion syntax, for CSV case
files and promptfoo configs alike. Pure, but for the files a value may name.

An assertion is written as a mapping (`{type: contains, value: Paris, weight: 2, metric: geo}`)
or, in a CSV cell, as promptfoo's string `[not-]TYPE[(THRESHOLD)][:VALUE]` (`icontains:
paris`, `python: checks.py`, `llm-rubric: is polite`); a cell that names no type is `equals`.
Values are rendered with the test's variables first (`contains: "{{ city }}"`), as promptfoo
renders them. A type the gate cannot run is an error naming it and the test: never a check
that silently passes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gate.errors import InputError
from gate.promptfoo.inputs.providers import ProviderSpec

# promptfoo's assertion types (its BaseAssertionTypesSchema, 0.121), so that `similar: x` in a
# CSV cell is known to be an unsupported check rather than the expected answer "similar: x".
PROMPTFOO_TYPES = (
    "agent-rubric", "answer-relevance", "bleu", "classifier", "contains", "contains-all",
    "contains-any", "contains-html", "contains-json", "contains-sql", "contains-xml",
    "context-faithfulness", "context-recall", "context-relevance", "conversation-relevance",
    "cost", "equals", "factuality", "finish-reason", "g-eval", "gleu", "guardrails",
    "icontains", "icontains-all", "icontains-any", "is-html", "is-json", "is-refusal",
    "is-sql", "is-valid-function-call", "is-valid-openai-function-call",
    "is-valid-openai-tools-call", "is-xml", "javascript", "latency", "levenshtein",
    "llm-rubric", "pi", "meteor", "model-graded-closedqa", "model-graded-factuality",
    "moderation", "perplexity", "perplexity-score", "python", "regex", "rouge-n", "ruby",
    "similar", "similar:cosine", "similar:dot", "similar:euclidean", "starts-with",
    "tool-call-f1", "skill-used", "trajectory:goal-success", "trajectory:tool-args-match",
    "trajectory:step-count", "trajectory:tool-sequence", "trajectory:tool-used",
    "trace-error-spans", "trace-span-count", "trace-span-duration", "search-rubric", "webhook",
    "word-count",
)  # fmt: skip
SUPPORTED = (
    "equals", "contains", "icontains", "contains-any", "contains-all", "icontains-any",
    "icontains-all", "starts-with", "regex", "is-json", "contains-json",
    "is-valid-openai-tools-call", "python", "llm-rubric", "cost", "latency",
    "trajectory:tool-used", "trajectory:tool-sequence", "trajectory:tool-args-match",
    "trajectory:step-count",
)  # fmt: skip
NEEDS_SERVICES = ("python", "llm-rubric", "cost", "latency")  # a sandbox, a judge, a call
LIST_TYPES = ("contains-any", "contains-all", "icontains-any", "icontains-all")
# A CSV cell's `type(N):` threshold defaults to 0.75 for these (promptfoo's assertionFromString).
CSV_THRESHOLD_TYPES = (
    "answer-relevance", "classifier", "context-faithfulness", "context-recall",
    "context-relevance", "cost", "latency", "levenshtein", "perplexity-score", "perplexity",
    "rouge-n", "similar", "starts-with",
)  # fmt: skip
_TYPES = "|".join(re.escape(t) for t in sorted(PROMPTFOO_TYPES, key=len, reverse=True))
_STRING = re.compile(rf"^(not-)?({_TYPES})(?:\((\d+(?:\.\d+)?)\))?(?::([\s\S]*))?$")
JS_HINT = "JavaScript does not run here: write the check in Python (`type: python`)"
HINTS = {
    "javascript": JS_HINT,
    "ruby": "Ruby does not run here: write the check in Python (`type: python`)",
    "select-best": "it compares the outputs of several prompts, not one output",
    "max-score": "it compares the outputs of several prompts, not one output",
    "human": "it waits for a person's rating",
    "trajectory:goal-success": "it asks promptfoo's own grading prompt whether a traced goal "
    "was met: write it as `llm-rubric` (the judge reads the whole conversation)",
}
ASSERTION_KEYS = {"type", "value", "threshold", "weight", "metric", "config", "provider",
                  "rubricPrompt", "assert", "transform", "contextTransform"}  # fmt: skip


class Assertion(BaseModel):
    """One promptfoo assertion, its value rendered with the test's variables."""

    model_config = ConfigDict(frozen=True)

    type: str = Field(description="promptfoo's type without `not-`")
    negated: bool = False
    value: Any = None
    threshold: float | None = None
    weight: float = 1.0
    metric: str | None = None
    config: dict[str, Any] | None = None
    rubric_prompt: str | None = None
    grader: ProviderSpec | None = Field(None, description="llm-rubric's grading provider")
    python_target: str | None = Field(None, description="python: `module:function`")
    python_source: str | None = Field(None, description="python: the inline code's module")
    children: tuple[Assertion, ...] = Field((), description="an assert-set's assertions")
    transform: str | None = Field(None, description="the output's transform: `module:function`")

    @property
    def label(self) -> str:
        """The name of its result: `not-contains:Paris`, `python:checks:get_assert`, ..."""
        kind = ("not-" if self.negated else "") + self.type
        shown = self.python_target if self.type == "python" and self.python_source is None else None
        if shown is None and isinstance(self.value, str) and self.value:
            shown = " ".join(self.value.split())
        elif shown is None and isinstance(self.value, list):
            shown = ", ".join(str(v) for v in self.value)
        elif shown is None and self.threshold is not None and self.type in ("cost", "latency"):
            shown = f"{self.threshold:g}"
        if shown and len(shown) > 60:
            shown = shown[:59] + "…"
        return f"{kind}:{shown}" if shown else kind


class AssertionSet(BaseModel):
    """A test's assertions and its `threshold`: without one every assertion must pass, with
    one the weighted mean of their scores must reach it."""

    model_config = ConfigDict(frozen=True)

    assertions: tuple[Assertion, ...]
    threshold: float | None = None
    transform: str | None = Field(
        None, description="the test's `options.transform` of the output: `module:function`"
    )

    def walk(self) -> list[Assertion]:
        return [a for top in self.assertions for a in (top, *top.children)]

    @property
    def python_targets(self) -> list[str]:
        """The python checks' and the transforms' `module:function`."""
        found = [t for a in self.walk() for t in (a.python_target, a.transform) if t]
        return [self.transform, *found] if self.transform else found

    @property
    def python_sources(self) -> dict[str, str]:
        """Inline checks: module name -> source."""
        return {
            a.python_target.partition(":")[0]: a.python_source
            for a in self.walk()
            if a.python_target and a.python_source
        }

    @property
    def graded(self) -> list[Assertion]:
        return [a for a in self.walk() if a.type == "llm-rubric"]

    def offline(self) -> AssertionSet:
        """The assertions that need no sandbox, judge or call (a reference is checked with
        them); the threshold only when they are all of them."""
        kept = tuple(
            a
            for a in self.assertions
            if a.type not in NEEDS_SERVICES and not a.children and a.transform is None
        )
        kept = () if self.transform else kept  # the sandbox transforms every output
        threshold = self.threshold if len(kept) == len(self.assertions) else None
        return AssertionSet(assertions=kept, threshold=threshold)


# --- promptfoo's string syntax (CSV cells) ---------------------------------------------------


def split_values(value: str) -> list[str]:
    """promptfoo's `parseCommaSeparatedValues`: commas separate, blanks around them go,
    `"quoted, fields"` keep their commas (`""` or `\\"` is a quote inside one)."""
    results: list[str] = []
    i = 0
    while i < len(value):
        while i < len(value) and (value[i].isspace() or value[i] == ","):
            i += 1
        if i >= len(value):
            break
        if value[i] != '"':
            end = value.find(",", i)
            end = len(value) if end < 0 else end
            results.append(value[i:end].strip())
            i = end
            continue
        text, i = _quoted(value, i + 1)
        results.append(text)
        while i < len(value) and value[i].isspace():
            i += 1
        if i < len(value) and value[i] != ",":
            raise ValueError("expected a comma after a quoted value")
    return results


def _quoted(value: str, i: int) -> tuple[str, int]:
    out = []
    while i < len(value):
        if value[i] == "\\" and i + 1 < len(value) and value[i + 1] in '"\\':
            out.append(value[i + 1])
            i += 2
        elif value[i] == '"' and i + 1 < len(value) and value[i + 1] == '"':
            out.append('"')
            i += 2
        elif value[i] == '"':
            return "".join(out), i + 1
        else:
            out.append(value[i])
            i += 1
    raise ValueError("a quoted value is not closed")


def from_string(text: str) -> dict[str, Any]:
    """promptfoo's `assertionFromString`: a CSV cell as an assertion mapping."""
    if text.startswith(("javascript:", "fn:", "eval:")):
        return {"type": "javascript", "value": text.split(":", 1)[1].strip()}
    if text.startswith(("grade:", "llm-rubric:")):
        return {"type": "llm-rubric", "value": text.split(":", 1)[1]}
    if text.startswith("python:") or (
        text.startswith("file://") and (text.endswith(".py") or ".py:" in text)
    ):
        return {"type": "python", "value": text[7:].strip()}
    if text.startswith("file://") and re.search(r"\.(js|cjs|mjs|ts)(:\w+)?$", text):
        return {"type": "javascript", "value": text}
    found = _STRING.match(text)
    if found is None:
        return {"type": "equals", "value": text}
    negated, kind, threshold, value = found.groups()
    full = f"not-{kind}" if negated else kind
    if kind in LIST_TYPES:
        return {"type": full, "value": split_values(value) if value else value}
    if kind in ("contains-json", "is-json"):
        return {"type": full, "value": value}
    out: dict[str, Any] = {"type": full, "value": value.strip() if value is not None else None}
    if kind in CSV_THRESHOLD_TYPES:
        out["threshold"] = float(threshold) if threshold else (0.8 if kind == "similar" else 0.75)
    return out


# --- mappings as the gate's assertions -------------------------------------------------------


@dataclass
class AssertionContext:
    """What reading a test's assertions needs: where the test is (errors name it), its
    variables (values are rendered with them), its `options` (the grader), and how python
    files become modules of the checkout whose code judges."""

    where: str  # "file:line"
    test: str  # "test 3" or its description
    vars: Mapping[str, Any] = field(default_factory=dict)
    env: Mapping[str, Any] = field(default_factory=dict)
    options: Mapping[str, Any] = field(default_factory=dict)
    base: str = ""  # the folder python files and `file://` values are relative to
    read: Any = None  # (path) -> text, for `file://` values; None: they are errors

    def error(self, message: str) -> InputError:
        file, _, line = self.where.rpartition(":")
        at = int(line) if line.isdigit() else None
        return InputError(f"{self.test}: {message}", file=file or self.where, line=at)


def module_target(path: str, function: str | None) -> str:
    """A python file (relative to the checkout) as `module:function`."""
    module = path.removesuffix(".py").replace("/", ".")
    if not re.match(r"^[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*$", module):
        raise ValueError(f"{path!r} is not an importable module path")
    return f"{module}:{function or 'get_assert'}"


def inline_module(code: str) -> tuple[str, str]:
    """promptfoo's `buildPythonScript`: inline code as a module with `main(output, context)`;
    one line is an expression, several lines the function's body."""
    if "\n" in code:
        indent = re.search(r"^(?!\s*$)\s+", code, re.M)
        pad = indent.group(0) if indent else "    "
        body = "\n".join(pad + line for line in code.split("\n"))
    else:
        body = f"    return {code}"
    source = f"import json\n\ndef main(output, context):\n{body}\n"
    name = "_promptfoo_inline_" + hashlib.sha256(source.encode()).hexdigest()[:12]
    return f"{name}:main", source


def unsupported(kind: str, ctx: AssertionContext) -> InputError:
    base = kind.removeprefix("not-")
    why = HINTS.get(base, "the gate cannot run it" if base in PROMPTFOO_TYPES else "unknown type")
    return ctx.error(
        f"assertion type `{kind}` is not supported ({why}); supported: {', '.join(SUPPORTED)} "
        "and their not- variants"
    )
