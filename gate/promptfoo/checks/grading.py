"""promptfoo's `llm-rubric`, graded by the gate's judge: promptfoo's grading prompt (or the
test's `rubricPrompt`) rendered with the test's variables, the output and the rubric; the
judge's answer read as promptfoo reads it (the first JSON object: `pass`, default true, and
`score`, default the pass; the assertion's `threshold` must be reached too).

The output under review is model output: it reaches the judge as the template's `output`,
rendered as data (jinja2's sandbox, no template syntax of its own is evaluated). An answer
without a JSON object needs a person (`passed` None), never a pass.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from gate.checks.base import Judge
from gate.errors import CheckInfraError
from gate.promptfoo.checks.assertion_types import extract_json_objects
from gate.promptfoo.inputs.assertions import Assertion
from gate.promptfoo.inputs.chat import ChatPromptError, anthropic_messages, openai_messages
from gate.promptfoo.inputs.js import js_json_loads, js_stringify
from gate.promptfoo.inputs.nunjucks import promptfoo_environment
from gate.report.models import JudgeCall

SYSTEM = """\
You are grading output according to a user-specified rubric. If the statement in the rubric \
is true, then the output passes the test. You respond with a JSON object with this structure: \
{reason: string, pass: boolean, score: number}

Examples:

<Output>Hello world</Output>
<Rubric>Content contains a greeting</Rubric>
{"reason": "the content contains the word 'Hello'", "pass": true, "score": 1.0}

<Output>Avast ye swabs, repel the invaders!</Output>
<Rubric>Does not speak like a pirate</Rubric>
{"reason": "'avast ye' is a common pirate term", "pass": false, "score": 0.0}"""
DEFAULT_GRADING_PROMPT = json.dumps(
    [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": "<Output>\n{{ output }}\n</Output>\n<Rubric>\n{{ rubric }}\n</Rubric>",
        },
    ]
)
REASON_CHARS = 300


@dataclass(frozen=True)
class RubricVerdict:
    passed: bool | None
    score: float
    reason: str
    call: JudgeCall


def _try_parse(text: str) -> Any:
    try:
        return js_json_loads(text)
    except ValueError:
        return text


def _template_vars(values: dict[str, Any]) -> dict[str, Any]:
    """promptfoo's `processContextForTemplating`: objects reach the template as JSON text."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, list):
            out[key] = [js_stringify(v) if isinstance(v, dict | list) else v for v in value]
        else:
            out[key] = js_stringify(value) if isinstance(value, dict) else value
    return out


def rendered_prompt(template: str, values: dict[str, Any]) -> str:
    """promptfoo's `renderLlmRubricPrompt`: a JSON template has each string rendered."""
    environment = promptfoo_environment()
    context = _template_vars(values)

    def render(text: str) -> str:
        return environment.from_string(text).render(context)

    try:
        parsed = json.loads(template)
    except ValueError:
        return render(template)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return render(value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return js_stringify(walk(parsed))


def read_grade(text: str, threshold: float | None) -> tuple[bool | None, float, str]:
    found = [o for o in extract_json_objects(text) if isinstance(o, dict)]
    if not found:
        flat = " ".join(text.split())[:80]
        return None, 0.0, f"Could not extract JSON from llm-rubric response: {flat!r}"
    answer = found[0]
    verdict = answer.get("pass", True)
    if not isinstance(verdict, bool):
        verdict = bool(re.match(r"^(true|yes|pass|y)$", str(verdict), re.I))
    score = answer.get("score")
    if isinstance(score, bool) or not isinstance(score, int | float):
        try:
            score = float(score)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            score = float(verdict)
    if threshold is not None:
        verdict = verdict and score >= threshold
    reason = answer.get("reason")
    if not isinstance(reason, str) or not reason:
        reason = "Grading passed" if verdict else f"Score {score:g} below threshold {threshold}"
    return verdict, float(score), " ".join(reason.split())[:REASON_CHARS]


def grade_rubric(
    judge: Judge, a: Assertion, output: str, variables: dict[str, Any]
) -> RubricVerdict:
    values = {**variables, "output": _try_parse(output), "rubric": a.value or ""}
    prompt = rendered_prompt(a.rubric_prompt or DEFAULT_GRADING_PROMPT, values)
    vendor = a.grader.vendor if a.grader is not None else getattr(judge, "vendor", "openai")
    try:
        messages = anthropic_messages(prompt) if vendor == "anthropic" else openai_messages(prompt)
    except ChatPromptError as exc:
        raise CheckInfraError(f"llm-rubric's grading prompt: {exc}") from None
    reply = judge.ask(messages)
    passed, score, reason = read_grade(reply.text, a.threshold)
    return RubricVerdict(passed, score, reason, reply.call)
