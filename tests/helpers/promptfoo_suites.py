"""promptfoo configs written for the tests and for benchmarks/promptfoo_parity.py, in
promptfoo's documented syntax, and the model that answers them.

Every test says what it should come to in `metadata.expect` (`pass` or `fail`; a CSV row in
its `__metadata:expect` column): the gate's verdict is checked against it, and promptfoo's
against the gate's. The model (`say_model`, for `ModelServer(responder=...)`) answers what the
prompt tells it to: the text after `SAY:`, the calls of `CALL name {json}` lines (of offered
tools), and, asked to grade (`<Output>` and `<Rubric>`), a promptfoo-style JSON grade: the
share of the rubric's words (those after `mentions`) found in the output is the score, and it
passes when all of them are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers.servers.model_server import Answer, ChatRequest

PRICES = {"gpt-4o-mini": {"input": 0.15, "output": 0.60}}  # promptfoo's price of the model


def grade(user: str) -> str | None:
    found = re.search(r"<Output>\n(.*?)\n</Output>\n<Rubric>\n(.*?)\n</Rubric>", user, re.S)
    if found is None:
        return None
    output, rubric = found.group(1).lower(), found.group(2)
    words = [w.lower() for w in re.findall(r"\w+", rubric.split("mentions", 1)[-1])]
    hits = sum(w in output for w in words)
    score = hits / len(words) if words else 0.0
    return json.dumps(
        {"reason": f"{hits} of {len(words)} found", "pass": score == 1, "score": score}
    )


def say_model(request: ChatRequest) -> str | Answer:
    graded = grade(request.user)
    if graded is not None:
        return graded
    calls, text = [], []
    for line in request.user.splitlines():
        if line.startswith("CALL ") and request.tools:
            name, _, arguments = line.removeprefix("CALL ").partition(" ")
            calls.append((name, json.loads(arguments) if arguments.strip() else {}))
        elif line.startswith("SAY:"):
            text.append(line.removeprefix("SAY:").removeprefix(" "))
        else:
            text.append(f"[{request.model}] {line}")
    return Answer(text="\n".join(text), tool_calls=calls) if calls else "\n".join(text)


def test(description: str, expect: str, answer: str, *asserts: dict, **extra: object) -> dict:
    return {
        "description": f"{description} → {expect}",
        "vars": {"answer": answer},
        "assert": list(asserts),
        "metadata": {"expect": expect},
        **extra,
    }


def a(kind: str, value: object = None, **extra: object) -> dict:
    out: dict = {"type": kind, **extra}
    if value is not None:
        out["value"] = value
    return out


ASSERTION_TESTS = [
    test("equals", "pass", "Paris", a("equals", "Paris")),
    test("equals is exact", "fail", "Paris.", a("equals", "Paris")),
    test("equals a number", "pass", "42", a("equals", 42)),
    test("equals an object", "pass", '{"a": 1, "b": [1, 2]}', a("equals", {"b": [1, 2], "a": 1})),
    test("equals an object", "fail", '{"a": 2}', a("equals", {"a": 1})),
    test("not-equals", "pass", "Lyon", a("not-equals", "Paris")),
    test("not-equals", "fail", "Paris", a("not-equals", "Paris")),
    test("contains", "pass", "I love Paris", a("contains", "Paris")),
    test("contains is case-sensitive", "fail", "I love paris", a("contains", "Paris")),
    test("contains a rendered value", "pass", "Paris", a("contains", "{{ answer }}")),
    test("icontains", "pass", "I love PARIS", a("icontains", "paris")),
    test("icontains", "fail", "I love Lyon", a("icontains", "paris")),
    test("not-contains", "pass", "Lyon", a("not-contains", "Paris")),
    test("not-contains", "fail", "Paris", a("not-contains", "Paris")),
    test("not-icontains", "pass", "Lyon", a("not-icontains", "paris")),
    test("not-icontains", "fail", "PARIS", a("not-icontains", "paris")),
    test("contains-any with a quoted comma", "pass", "a, b", a("contains-any", 'x, "a, b"')),
    test("contains-any", "fail", "nothing", a("contains-any", "Paris, Lyon")),
    test("contains-all", "pass", "Paris and Lyon", a("contains-all", ["Paris", "Lyon"])),
    test("contains-all", "fail", "Paris alone", a("contains-all", "Paris, Lyon")),
    test("not-contains-all", "pass", "Paris alone", a("not-contains-all", "Paris, Lyon")),
    test("not-contains-all", "fail", "Paris and Lyon", a("not-contains-all", "Paris, Lyon")),
    test("not-contains-any", "pass", "Nice", a("not-contains-any", "Paris, Lyon")),
    test("not-contains-any", "fail", "Lyon", a("not-contains-any", "Paris, Lyon")),
    test("icontains-any", "pass", "LYON", a("icontains-any", "paris, lyon")),
    test("icontains-any", "fail", "Nice", a("icontains-any", "paris, lyon")),
    test("icontains-all", "pass", "PARIS, LYON", a("icontains-all", ["paris", "lyon"])),
    test("icontains-all", "fail", "PARIS", a("icontains-all", ["paris", "lyon"])),
    test("not-icontains-any", "pass", "Nice", a("not-icontains-any", "paris, lyon")),
    test("not-icontains-all", "pass", "PARIS", a("not-icontains-all", "paris, lyon")),
    test("starts-with", "pass", "Yes, sure", a("starts-with", "Yes")),
    test("starts-with is exact", "fail", "yes, sure", a("starts-with", "Yes")),
    test("not-starts-with", "pass", "No", a("not-starts-with", "Yes")),
    test("regex", "pass", "Order 123", a("regex", "\\d{3}$")),
    test("regex", "fail", "Order 12", a("regex", "\\d{3}")),
    test("not-regex", "pass", "no digits", a("not-regex", "\\d")),
    test("not-regex", "fail", "1 digit", a("not-regex", "\\d")),
    test("is-json", "pass", '{"a": 1}', a("is-json")),
    test("is-json is the whole answer", "fail", 'Here: {"a": 1}', a("is-json")),
    test("is-json with a schema", "pass", '{"city": "Paris"}',
         a("is-json", {"type": "object", "required": ["city"]})),
    test("is-json with a schema", "fail", '{"town": "Paris"}',
         a("is-json", "type: object\nrequired: [city]")),
    test("not-is-json", "pass", "prose", a("not-is-json")),
    test("contains-json", "pass", 'Here: {"a": 1} ok', a("contains-json")),
    test("contains-json reads YAML-ish JSON", "pass", "x {a: 1} y", a("contains-json")),
    test("contains-json", "fail", "no JSON here", a("contains-json")),
    test("contains-json any object fits the schema", "pass", '{"b": 1} then {"city": "Nice"}',
         a("contains-json", {"type": "object", "required": ["city"]})),
    test("contains-json with a schema", "fail", '{"b": 1}',
         a("contains-json", {"type": "object", "required": ["city"]})),
    test("not-contains-json", "pass", "prose", a("not-contains-json")),
    test("python inline", "pass", "Paris", a("python", "output == 'Paris'")),
    test("python inline", "fail", "Lyon", a("python", "output == 'Paris'")),
    test("python inline score above 0", "pass", "Lyon", a("python", "0.2")),
    test("python score under its threshold", "fail", "Lyon", a("python", "0.2", threshold=0.5)),
    test("python inline body", "pass", "Paris", a("python", "text = output.lower()\nreturn {'pass': 'paris' in text, 'score': 1.0, 'reason': 'ok'}")),
    test("python file", "pass", "Paris", a("python", "file://checks.py")),
    test("python file", "fail", "Lyon", a("python", "file://checks.py")),
    test("python file function and threshold", "fail", "Paris",
         a("python", "file://checks.py:scored", threshold=0.9)),
    test("python file reads context.vars", "pass", "Paris", a("python", "file://checks.py:same")),
    test("not-python", "pass", "Lyon", a("not-python", "output == 'Paris'")),
    test("cost", "pass", "Paris", a("cost", threshold=1)),
    test("cost", "fail", "Paris is the capital", a("cost", threshold=0.0000001)),
    test("latency", "pass", "Paris", a("latency", threshold=60000)),
    test("latency", "fail", "Paris", a("latency", threshold=0)),
    test("weights reach the threshold", "pass", "Paris",
         a("contains", "Paris", weight=2), a("contains", "Lyon"), threshold=0.6),
    test("weights miss the threshold", "fail", "Paris",
         a("contains", "Paris", weight=2), a("contains", "Lyon"), threshold=0.8),
    test("weight 0 does not count", "pass", "Paris", a("contains", "Paris"), a("contains", "Lyon", weight=0)),
    test("every assertion must pass", "fail", "Paris", a("contains", "Paris"), a("contains", "Lyon")),
    test("metrics", "pass", "Paris", a("contains", "Paris", metric="geo"), a("icontains", "paris", metric="geo")),
    test("assert-set with a threshold", "pass", "Paris",
         {"type": "assert-set", "threshold": 0.5, "assert": [a("contains", "Paris"), a("contains", "Lyon")]}),
    test("assert-set without a threshold", "fail", "Paris",
         {"type": "assert-set", "assert": [a("contains", "Paris"), a("contains", "Lyon")]}),
]  # fmt: skip

CHECKS_PY = """
def get_assert(output, context):
    return "Paris" in output


def scored(output, context):
    return {"pass": True, "score": 0.5, "reason": "half"}


def same(output, context):
    return context["vars"]["answer"] == output
"""

DEFAULTS_CONFIG = """
description: defaultTest, $ref, env, vars and tests from files
env:
  GREETING: Bonjour
definitions:
  has_paris:
    type: icontains
    value: paris
prompts:
  - "SAY: {{ greeting }} {{ answer }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  vars:
    greeting: "{{ env.GREETING }}"
  threshold: 0.5
  metadata:
    expect: pass
  assert:
    - $ref: "#/definitions/has_paris"
tests:
  - description: defaultTest's assert, vars and threshold → pass
    vars: {answer: Lyon}
    assert:
      - type: starts-with
        value: Bonjour
  - description: defaultTest's assert alone → fail
    vars: {answer: Lyon}
    metadata: {expect: fail}
  - description: the test's threshold wins → fail
    vars: {answer: Lyon}
    threshold: 1
    metadata: {expect: fail}
    assert:
      - type: starts-with
        value: Bonjour
  - description: disableDefaultAsserts → pass
    vars: {answer: Lyon}
    options: {disableDefaultAsserts: true}
    assert:
      - type: contains
        value: Lyon
  - description: the test's vars win → pass
    vars: {greeting: Hello, answer: Paris}
    assert:
      - type: starts-with
        value: Hello
  - vars:
      answer: [Paris, Paris is big]
    assert:
      - type: contains
        value: Paris
  - description: vars from a file → pass
    vars: vars/paris.yaml
  - description: a variable from a file → pass
    vars:
      answer: file://texts/answer.txt
    assert:
      - type: contains
        value: the capital
  - file://tests/more.yaml
  - file://tests/*.csv
  - file://tests/rows.jsonl
  - file://tests/list.json
"""

DEFAULTS_FILES = {
    "vars/paris.yaml": "answer: Paris\n",
    "texts/answer.txt": "Paris is the capital\n",
    "tests/more.yaml": """
- description: a YAML tests file → pass
  vars: {answer: Paris}
- description: a YAML tests file → fail
  vars: {answer: Lyon}
  metadata: {expect: fail}
  assert:
    - type: contains
      value: Paris
""",
    "tests/rows.csv": (
        "answer,__expected,__expected2,__description,__metadata:expect\n"
        "Paris,contains: Paris,,a CSV row → pass,pass\n"
        "Lyon,contains: Paris,not-icontains: lyon,a CSV row → fail,fail\n"
        'Paris and Lyon,"contains-all: Paris, Lyon",,a CSV row\'s contains-all → pass,pass\n'
    ),
    "tests/rows.jsonl": (
        '{"description": "a JSONL test → pass", "vars": {"answer": "Paris"}}\n'
        '{"description": "a JSONL test → fail", "vars": {"answer": "Nice"}, "metadata": {"expect": "fail"}}\n'
    ),
    "tests/list.json": (
        '[{"description": "a JSON test → pass", "vars": {"answer": "PARIS"},'
        ' "assert": [{"type": "equals", "value": "PARIS"}]}]\n'
    ),
}

MATRIX_CONFIG = """
description: prompts × providers
prompts:
  - file://prompts/ask.txt
  - raw: "SAY: {{ answer }}!"
    label: shout
providers:
  - id: openai:chat:gpt-4o-mini
    label: gpt
  - id: anthropic:messages:claude-3-5-haiku-latest
    label: claude
    prompts: [shout]
tests:
  - description: every pair → pass
    vars: {answer: Paris}
    metadata: {expect: pass}
    assert:
      - type: icontains
        value: paris
  - description: the shout prompt only → pass
    vars: {answer: Paris}
    prompts: [shout]
    metadata: {expect: pass}
    assert:
      - type: contains
        value: Paris!
  - description: claude only → fail
    vars: {answer: Lyon}
    providers: [claude]
    metadata: {expect: fail}
    assert:
      - type: contains
        value: Paris
"""

MATRIX_FILES = {"prompts/ask.txt": "SAY: {{ answer }}\n---\nSAY: The answer is {{ answer }}\n"}

YAML_CONFIG = """
description: YAML read as promptfoo reads it
prompts:
  - "SAY: {{ value }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  metadata: {expect: pass}
tests:
  - description: Yes stays a string → pass
    vars: {value: Yes}
    assert: [{type: equals, value: "Yes"}]
  - description: on and n stay strings → pass
    vars: {value: [on, n]}
    assert: [{type: regex, value: "^(on|n)$"}]
  - description: 1.0 is the number 1 → pass
    vars: {value: 1.0}
    assert: [{type: equals, value: "1"}]
  - description: 0123 is decimal → pass
    vars: {value: 0123}
    assert: [{type: equals, value: "123"}]
  - description: 0x1F is hexadecimal → pass
    vars: {value: 0x1F}
    assert: [{type: equals, value: "31"}]
  - description: 1_000 is a string → pass
    vars: {value: 1_000}
    assert: [{type: equals, value: "1_000"}]
  - description: 1e3 is a number → pass
    vars: {value: 1e3}
    assert: [{type: equals, value: "1000"}]
  - description: True is a boolean → pass
    vars: {value: True}
    assert: [{type: equals, value: "true"}]
  - description: a list of numbers is one value → pass
    vars: {value: [1, 2]}
    assert: [{type: equals, value: "1,2"}]
  - description: a date is an object → pass
    vars: {value: 2024-01-05}
    assert: [{type: equals, value: "[object Object]"}]
"""

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"location": {"type": "string"}},
                "required": ["location"],
            },
        },
    }
]

TOOLS_CONFIG = """
description: tool calls
prompts:
  - "{{ request }}"
providers:
  - id: openai:chat:gpt-4o-mini
    label: gpt
    config:
      tools: file://tools.json
      tool_choice: auto
  - id: anthropic:messages:claude-3-5-haiku-latest
    label: claude
    config:
      tools: file://tools.json
tests:
  - description: a valid tool call → pass
    vars: {request: 'CALL get_weather {"location": "Paris"}'}
    providers: [gpt]
    metadata: {expect: pass}
    assert:
      - type: is-valid-openai-tools-call
      - type: contains
        value: get_weather
  - description: arguments against the schema → fail
    vars: {request: 'CALL get_weather {"location": 42}'}
    providers: [gpt]
    metadata: {expect: fail}
    assert:
      - type: is-valid-openai-tools-call
  - description: no tool call → fail
    vars: {request: "SAY: It is sunny"}
    metadata: {expect: fail}
    assert:
      - type: is-valid-openai-tools-call
  - description: text and a call → pass
    vars: {request: "SAY: Checking\\nCALL get_weather {\\"location\\": \\"Nice\\"}"}
    providers: [gpt]
    metadata: {expect: pass}
    assert:
      - type: is-valid-openai-tools-call
      - type: icontains
        value: checking
  - description: Anthropic's tool_use block is JSON in the output → pass
    vars: {request: "SAY: Sure\\nCALL get_weather {\\"location\\": \\"Paris\\"}"}
    providers: [claude]
    metadata: {expect: pass}
    assert:
      - type: contains
        value: '{"type":"tool_use","id":"toolu_0","name":"get_weather","input":{"location":"Paris"}}'
      - type: starts-with
        value: "Sure\\n\\n"
"""

RUBRIC_CONFIG = """
description: llm-rubric through the judge
prompts:
  - "SAY: {{ answer }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  options:
    provider: openai:gpt-4o-mini
tests:
  - description: llm-rubric → pass
    vars: {answer: Paris is big}
    metadata: {expect: pass}
    assert:
      - type: llm-rubric
        value: mentions Paris
  - description: llm-rubric → fail
    vars: {answer: Lyon is big}
    metadata: {expect: fail}
    assert:
      - type: llm-rubric
        value: mentions Paris
  - description: not-llm-rubric → pass
    vars: {answer: Lyon is big}
    metadata: {expect: pass}
    assert:
      - type: not-llm-rubric
        value: mentions Paris
  - description: a rubricPrompt of the test → pass
    vars: {answer: Paris and Lyon}
    metadata: {expect: pass}
    options:
      rubricPrompt:
        - role: system
          content: Grade the answer.
        - role: user
          content: "<Output>\\n{{ output }}\\n</Output>\\n<Rubric>\\n{{ rubric }}\\n</Rubric>"
    assert:
      - type: llm-rubric
        value: mentions Paris Lyon
  - description: llm-rubric's score in a weighted threshold → pass
    vars: {answer: Paris}
    threshold: 0.4
    metadata: {expect: pass}
    assert:
      - type: llm-rubric
        value: mentions Paris Lyon
"""


TEMPLATES_CONFIG = """
description: assertionTemplates referenced with $ref, as promptfoo's guide writes them
prompts:
  - "SAY: {{ answer }}"
providers:
  - openai:chat:gpt-4o-mini
metadata:
  expect: pass
evaluateOptions:
  maxConcurrency: 2
commandLineOptions:
  cache: false
defaultTest:
  assert:
    - $ref: "#/assertionTemplates/noApology"
tests:
  - description: two templates → pass
    vars: {answer: Paris is the capital}
    assert:
      - $ref: "#/assertionTemplates/startsUpperCase"
      - $ref: "#/assertionTemplates/mentionsParis"
  - description: a template fails → fail
    vars: {answer: paris is the capital}
    metadata: {expect: fail}
    assert:
      - $ref: "#/assertionTemplates/startsUpperCase"
  - description: defaultTest's template fails → fail
    vars: {answer: Sorry, Paris}
    metadata: {expect: fail}
    assert:
      - $ref: "#/assertionTemplates/mentionsParis"
  - description: keys beside $ref win over the template's → fail
    vars: {answer: Paris}
    metadata: {expect: fail}
    assert:
      - $ref: "#/assertionTemplates/mentionsParis"
        type: not-contains
  - description: a weight beside $ref counts → pass
    vars: {answer: Paris}
    threshold: 0.7
    assert:
      - $ref: "#/assertionTemplates/mentionsParis"
        weight: 3
      - type: contains
        value: Nice
assertionTemplates:
  noApology:
    type: not-icontains
    value: sorry
  startsUpperCase:
    type: regex
    value: "^[A-Z]"
  mentionsParis:
    type: contains
    value: Paris
    metric: geography
"""

SCENARIOS_CONFIG = """
description: scenarios, as promptfoo's documentation writes them
prompts:
  - "SAY: {{ greeting }}, {{ input }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  metadata: {expect: pass}
  assert:
    - type: not-icontains
      value: error
tests:
  - description: an ordinary test runs first → pass
    vars: {greeting: Hi, input: there}
scenarios:
  - description: greetings in three languages
    config:
      - vars: {language: Spanish, greeting: Hola, expected: Hola}
      - vars: {language: French, greeting: Bonjour, expected: Bonjour}
      - vars: {language: German, greeting: Hallo, expected: Guten Tag}
        metadata: {expect: fail}
    tests:
      - description: Greets the world
        vars: {input: world}
        assert:
          - type: starts-with
            value: "{{ expected }}"
      - description: Greets a friend
        vars: {input: friend}
        assert:
          - type: icontains
            value: "{{ expected }}, friend"
  - file://scenarios/*.yaml
"""

SCENARIOS_FILES = {
    "scenarios/support.yaml": """
description: support answers for each team, the tests in a CSV file
config:
  - vars: {greeting: Billing}
    assert:
      - type: starts-with
        value: Billing
  - vars: {greeting: Shipping}
    metadata: {expect: fail}
    assert:
      - type: contains
        value: Billing
tests:
  - file://scenarios/questions.csv
""",
    "scenarios/questions.csv": (
        "input,__expected,__description\n"
        "where is my refund,icontains: refund,a refund question\n"
        "where is my parcel,icontains: parcel,a parcel question\n"
    ),
}

TRANSFORMS_PY = """
import json


def get_transform(output, context):
    return output.strip().lower()


def city(output, context):
    return json.loads(output)["city"]


def parsed(output, context):
    return json.loads(output)


def first_word(output, context):
    return output.split()[0] if output.split() else ""


def asked(output, context):
    return output + " (asked: " + context["vars"]["answer"] + ")"
"""

TRANSFORMS_CONFIG = """
description: output transforms, a test's and an assertion's, in Python files
prompts:
  - "SAY: {{ answer }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  metadata: {expect: pass}
tests:
  - description: an assertion's transform reads the JSON answer → pass
    vars: {answer: '{"city": "Paris", "country": "France"}'}
    assert:
      - type: equals
        value: Paris
        transform: file://transforms.py:city
      - type: contains
        value: France
  - description: an assertion's transform reads the JSON answer → fail
    vars: {answer: '{"city": "Lyon"}'}
    metadata: {expect: fail}
    assert:
      - type: equals
        value: Paris
        transform: file://transforms.py:city
  - description: the test's transform feeds every assertion → pass
    vars: {answer: "  PARIS is big  "}
    options:
      transform: file://transforms.py
    assert:
      - type: starts-with
        value: paris
      - type: equals
        value: paris
        transform: file://transforms.py:first_word
  - description: the test's transform feeds every assertion → fail
    vars: {answer: "LYON"}
    options:
      transform: file://transforms.py
    metadata: {expect: fail}
    assert:
      - type: equals
        value: LYON
  - description: a transform's object reaches a python assertion → pass
    vars: {answer: '{"items": [1, 2, 3]}'}
    assert:
      - type: python
        value: len(output["items"]) == 3
        transform: file://transforms.py:parsed
      - type: is-json
        transform: file://transforms.py:parsed
  - description: a transform reads context.vars → pass
    vars: {answer: Nice}
    assert:
      - type: equals
        value: "Nice (asked: Nice)"
        transform: file://transforms.py:asked
"""


VARFILES_CONFIG = """
description: vars from files and globs, as promptfoo's guide writes them
prompts:
  - "SAY: {{ greeting }} {{ input }}"
providers:
  - openai:chat:gpt-4o-mini
defaultTest:
  metadata: {expect: pass}
tests:
  - description: a variable from each file of a glob → pass
    vars:
      greeting: Hello
      input: file://inputs/*.txt
    assert:
      - type: starts-with
        value: Hello
  - description: vars from a glob of YAML files, merged → pass
    vars: vars/*.yaml
    assert:
      - type: contains
        value: Bonjour Paris
  - description: a YAML variable file is its JSON → pass
    vars:
      greeting: "Data:"
      input: file://data/city.yaml
    assert:
      - type: contains
        value: '{"city":"Paris","population":2.1}'
  - description: a text variable file, trimmed → fail
    vars:
      greeting: Hi
      input: file://inputs/lyon.txt
    metadata: {expect: fail}
    assert:
      - type: contains
        value: Paris
"""

VARFILES_FILES = {
    "inputs/paris.txt": "Paris\n",
    "inputs/lyon.txt": "Lyon\n\n",
    "vars/a.yaml": "greeting: Bonjour\n",
    "vars/b.yaml": "input: Paris\n",
    "data/city.yaml": "city: Paris\npopulation: 2.1\n",
}


def assertions_config() -> str:
    import yaml

    config = {
        "description": "every assertion type, passing and failing",
        "prompts": ["SAY: {{ answer }}"],
        "providers": ["openai:chat:gpt-4o-mini"],
        "tests": ASSERTION_TESTS,
    }
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


SUITES: dict[str, dict[str, str]] = {
    "assertions": {"promptfooconfig.yaml": "", "checks.py": CHECKS_PY},
    "defaults": {"promptfooconfig.yaml": DEFAULTS_CONFIG, **DEFAULTS_FILES},
    "matrix": {"promptfooconfig.yaml": MATRIX_CONFIG, **MATRIX_FILES},
    "yaml": {"promptfooconfig.yaml": YAML_CONFIG},
    "tools": {"promptfooconfig.yaml": TOOLS_CONFIG, "tools.json": json.dumps(TOOLS, indent=2)},
    "rubric": {"promptfooconfig.yaml": RUBRIC_CONFIG},
    "templates": {"promptfooconfig.yaml": TEMPLATES_CONFIG},
    "scenarios": {"promptfooconfig.yaml": SCENARIOS_CONFIG, **SCENARIOS_FILES},
    "transforms": {"promptfooconfig.yaml": TRANSFORMS_CONFIG, "transforms.py": TRANSFORMS_PY},
    "varfiles": {"promptfooconfig.yaml": VARFILES_CONFIG, **VARFILES_FILES},
}


def write_suite(root: Path, name: str) -> Path:
    """The suite's promptfoo config and files in `root`, with a gate.yml naming it."""
    for path, text in SUITES[name].items():
        if name == "assertions" and path == "promptfooconfig.yaml":
            text = assertions_config()
        file = root / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(text.lstrip("\n"), encoding="utf-8")
    import yaml

    gate = {"prices": PRICES, "suites": [{"name": name, "promptfoo": "promptfooconfig.yaml"}]}
    (root / "gate.yml").write_text(yaml.safe_dump(gate, sort_keys=False))
    return root / "promptfooconfig.yaml"


def gate_env(server: object, root: Path) -> dict[str, str]:
    """The environment of a `gate` subprocess against the model server (no real keys)."""
    import os

    from helpers.cli import REPO

    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENAI_", "ANTHROPIC_", "GITHUB_", "INPUT_"))
    }
    env.update({
        "PYTHONPATH": str(REPO),
        "GATE_CACHE_DIR": str(root / ".gate-cache"),
        "OPENAI_BASE_URL": server.openai_base_url,  # type: ignore[attr-defined]
        "ANTHROPIC_BASE_URL": server.url,  # type: ignore[attr-defined]
    })  # fmt: skip
    return env


def run_suites(root: Path, server: object) -> dict[str, dict[str, dict]]:
    """`gate run` of every suite of the project's gate.yml: its report lines by case id."""
    import subprocess
    import sys

    from gate.inputs.config import load_config

    found: dict[str, dict[str, dict]] = {}
    for index, suite in enumerate(load_config(root / "gate.yml").config.suites):
        out = root / "reports" / str(index)
        done = subprocess.run(
            [sys.executable, "-m", "gate", "run", f"--suite={suite.name}", "--out", str(out), "--no-cache"],
            cwd=root, env=gate_env(server, root), capture_output=True, text=True, check=False, timeout=300,
        )  # fmt: skip
        assert done.returncode in (0, 1), done.stderr
        lines = (out / "run.jsonl").read_text().splitlines()[1:]
        found[suite.name] = {line["id"]: line for line in map(json.loads, lines)}
    return found
