"""promptfoo's deterministic assertion types, as its handlers decide them. Pure.

Each returns whether the assertion's condition holds on the output and, when it does not,
promptfoo's reason; `not-` is applied by the caller (`pass = holds != negated`). The output
is what promptfoo's provider would return (`output_value`): the text, or, for an OpenAI answer
with tool calls, the message or its `tool_calls`; text checks read it as a string
(`JSON.stringify` of an object).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from gate.promptfoo.inputs.assertions import Assertion
from gate.promptfoo.inputs.js import js_json_loads, js_regex, js_string, js_stringify
from gate.promptfoo.inputs.yaml12 import loads_json_mode

if TYPE_CHECKING:
    from gate.report.output import SystemOutput

MAX_JSON_CHARS = 100_000
Holds = tuple[bool, str]  # (the condition holds, why not)


def output_value(output: SystemOutput) -> Any:
    """The output as promptfoo's provider returns it (the promptfoo system records it)."""
    if "output" in output.data:
        return output.data["output"]
    if not output.tool_calls:
        return output.text
    calls = [
        {
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.arguments
                if call.invalid_arguments
                else json.dumps(call.arguments),
            },
        }
        for call in output.tool_calls
    ]
    return (
        {"role": "assistant", "content": output.text, "tool_calls": calls} if output.text else calls
    )


def output_string(value: Any) -> str:
    """promptfoo's `coerceString`."""
    return value if isinstance(value, str) else js_stringify(value)


def _either(negated: bool, reason: str) -> str:
    return reason.replace("{not}", "not " if negated else "")


def equals(a: Assertion, text: str) -> Holds:
    if isinstance(a.value, dict | list):
        try:
            same = _deep_equal(a.value, js_json_loads(text))
        except ValueError:
            return False, "the output is not JSON"
        return same, _either(
            a.negated, f'Expected output "{text}" to {{not}}equal "{js_stringify(a.value)}"'
        )
    expected = js_string(a.value) if a.value is not None else "undefined"
    return expected == text, _either(
        a.negated, f'Expected output "{text}" to {{not}}equal "{expected}"'
    )


def _deep_equal(a: Any, b: Any) -> bool:
    """`util.isDeepStrictEqual` of JSON data (`1` and `1.0` are one number)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return a == b and not isinstance(a, dict | list) and not isinstance(b, dict | list)


def contains(a: Assertion, text: str) -> Holds:
    needle = js_string(a.value)
    if a.type == "icontains":
        return needle.lower() in text.lower(), _either(
            a.negated, f'Expected output to {{not}}contain "{needle}"'
        )
    return needle in text, _either(a.negated, f'Expected output to {{not}}contain "{needle}"')


def contains_some(a: Assertion, text: str) -> Holds:
    needles = [js_string(v) for v in a.value]
    folded = text.lower() if a.type.startswith("i") else text
    found = [n for n in needles if (n.lower() if a.type.startswith("i") else n) in folded]
    if a.type.endswith("-any"):
        return bool(found), _either(
            a.negated, f'Expected output to {{not}}contain one of "{", ".join(needles)}"'
        )
    missing = [n for n in needles if n not in found]
    wanted, absent = ", ".join(needles), ", ".join(missing)
    reason = f"Expected output to {{not}}contain all of [{wanted}]. Missing: [{absent}]"
    return not missing, _either(a.negated, reason)


def starts_with(a: Assertion, text: str) -> Holds:
    return text.startswith(a.value), _either(
        a.negated, f'Expected output to {{not}}start with "{a.value}"'
    )


def regex(a: Assertion, text: str) -> Holds:
    found = js_regex(a.value).search(text) is not None
    return found, _either(a.negated, f'Expected output to {{not}}match regex "{a.value}"')


def _schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    import jsonschema

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
    error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{'/' + where if where else '(root)'} {error.message}"


def is_json(a: Assertion, text: str) -> Holds:
    try:
        value = js_json_loads(text)
    except (ValueError, RecursionError):
        return False, "Expected output to be valid JSON"
    if a.value is None:
        return True, "Output is valid JSON"
    problem = _schema_problem(a.value, value)
    if problem is None:
        return True, "Output is JSON that conforms to the provided schema"
    return False, f"JSON does not conform to the provided schema. Errors: {problem}"


def extract_json_objects(text: str) -> list[Any]:
    """promptfoo's `extractJsonObjects`: every `{...}` that parses (as YAML in json mode, `//`
    comments allowed, an unclosed object closed), scanning on after each."""
    found: list[Any] = []
    i = 0
    while i < len(text):
        if text[i] != "{":
            i += 1
            continue
        opened, closed, j = 1, 0, i + 1
        limit = min(i + MAX_JSON_CHARS, len(text))
        while j < limit and opened > closed:
            opened += text[j] == "{"
            closed += text[j] == "}"
            j += 1
            if opened == closed or j == len(text) or j == i + MAX_JSON_CHARS:
                candidate = text[i:j] + "}" * max(opened - closed, 0)
                try:
                    parsed = loads_json_mode(slash_comments_to_hash(candidate))
                except ValueError:
                    parsed = None
                    if opened == closed:
                        break
                if isinstance(parsed, dict | list):
                    found.append(parsed)
                    i = j - 1
                    break
        i += 1
    return found


def slash_comments_to_hash(text: str) -> str:
    """promptfoo's `convertSlashCommentsToHash`: `// comments` become YAML's `# comments`."""
    out = []
    for line in text.split("\n"):
        state, result, i = "normal", "", 0
        while i < len(line):
            char, after = line[i], line[i + 1 : i + 2]
            before = line[i - 1] if i else ""
            if state == "normal":
                if char == "'" and not before.isalpha():
                    state = "single"
                elif char == '"':
                    state = "double"
                elif char == "/" and after == "/":
                    start = next((j + 1 for j in range(i - 1, -1, -1) if line[j].isspace()), 0)
                    if "://" not in line[start : i + 2]:
                        slashes = 2
                        while line[i + slashes : i + slashes + 1] == "/":
                            slashes += 1
                        result += "#" * (slashes // 2) + line[i + slashes :]
                        break
                result += char
            elif state == "single":
                result += char
                if char == "'" and not _escaped(line, i) and not after.isalpha():
                    state = "normal"
            else:
                result += char
                if char == '"' and not _escaped(line, i):
                    state = "normal"
            i += 1
        out.append(result)
    return "\n".join(out)


def _escaped(line: str, index: int) -> bool:
    count, i = 0, index - 1
    while i >= 0 and line[i] == "\\":
        count, i = count + 1, i - 1
    return count % 2 == 1


def contains_json(a: Assertion, text: str) -> Holds:
    objects = extract_json_objects(text)
    if not objects:
        return False, "Expected output to contain valid JSON"
    if a.value is None:
        return True, "Output contains JSON"
    problem = ""
    for value in objects:
        problem = _schema_problem(a.value, value) or ""
        if not problem:
            return True, "Output contains JSON conforming to the provided schema"
    return False, f"JSON does not conform to the provided schema. Errors: {problem}"


def tools_call(value: Any, offered: Any) -> Holds:
    """promptfoo's `is-valid-openai-tools-call`: every call names an offered function tool and
    its arguments validate against that tool's parameters."""
    calls = value.get("tool_calls") if isinstance(value, dict) and "tool_calls" in value else value
    if (
        not isinstance(calls, list)
        or not calls
        or any(
            not isinstance(c, dict)
            or not isinstance((c.get("function") or {}).get("name"), str)
            or not isinstance((c.get("function") or {}).get("arguments"), str)
            for c in calls
        )
    ):
        return False, f"OpenAI did not return a valid-looking tools response: {js_stringify(calls)}"
    if not offered:
        return False, "No tools configured in provider, but output contains tool calls"
    functions = [
        t["function"]
        for t in offered
        if isinstance(t, dict) and t.get("type") == "function" and "function" in t
    ]
    for call in calls:
        name, raw = call["function"]["name"], call["function"]["arguments"]
        schema = next((f.get("parameters") for f in functions if f.get("name") == name), None)
        if schema is None:
            return False, f'Called "{name}", but there is no function with that name'
        try:
            arguments = js_json_loads(raw)
        except ValueError as exc:
            return False, f"the arguments of {name} are not JSON: {exc}"
        problem = _schema_problem(schema, arguments)
        if problem:
            return False, f'Call to "{name}" does not match schema: {problem}'
    return True, "Assertion passed"


def limit(a: Assertion, measured: float, unit: str) -> Holds:
    threshold = a.threshold or 0.0
    shown = f"{measured:.2g}" if unit == "" else f"{measured:g}{unit}"
    relation = "less than or equal to" if a.negated else "greater than"
    return (
        measured <= threshold,
        f"{a.type.capitalize()} {shown} is {relation} threshold {threshold:g}{unit}",
    )


TEXT_CHECKS = {
    "equals": equals,
    "contains": contains,
    "icontains": contains,
    "contains-any": contains_some,
    "contains-all": contains_some,
    "icontains-any": contains_some,
    "icontains-all": contains_some,
    "starts-with": starts_with,
    "regex": regex,
    "is-json": is_json,
    "contains-json": contains_json,
}
