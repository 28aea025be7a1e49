"""A project whose evals are an inspect_ai task and a pytest suite, as files of a real repository.

The system is `app/`: `app.bot.answer` says the words its prompt allows (`say: WORD` lines of
`prompts/support.md`) that the question names; `app.solver.support` is the inspect solver that
asks the model (the model server stand-in's echo model, an OpenAI-compatible endpoint) to say
them. The instrument is the base's: `tests/evals/` (a parametrized test per word and its
conftest) and `evals/` (the task, its dataset and its scorer). A regression drops a word from
the prompt: its test and its sample fail on the head.
"""

from __future__ import annotations

import importlib.util
import json
from typing import Any

import pytest
import yaml

WORDS = ["CAC", "fees", "licensed", "card", "branch", "loan", "minutes", "statement"]

needs_inspect = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None or importlib.util.find_spec("openai") is None,
    reason="inspect_ai (and its openai provider) not installed: pip install -e '.[inspect]'",
)

BOT = """
from pathlib import Path

PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "support.md"


def allowed():
    lines = PROMPT.read_text().splitlines()
    return [line.split(":", 1)[1].strip() for line in lines if line.startswith("say:")]


def answer(question):
    said = [w for w in allowed() if w in question.split()]
    return "We can help with " + (", ".join(said) or "nothing") + "."
"""

SOLVER = """
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import solver

from app.bot import answer


@solver
def support():
    async def solve(state, generate):
        state.messages = [ChatMessageUser(content=answer(state.input_text))]
        return await generate(state)

    return solve
"""

CONFTEST = """
import pytest


@pytest.fixture
def bot():
    from app.bot import answer

    return answer
"""

TESTS = """
import pytest

WORDS = {words!r}


@pytest.mark.parametrize("word", WORDS)
def test_mentions(bot, word):
    said = bot(f"tell me about {{word}}")
    print(said)
    assert word in said
"""

TASK = """
from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset

from app.solver import support as support_solver
from scorers import says_target


@task
def support():
    return Task(dataset=json_dataset("samples.jsonl"), solver=support_solver(), scorer=says_target())
"""

SCORER = """
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer


@scorer(metrics=[accuracy()])
def says_target():
    async def score(state, target):
        said = state.output.completion
        return Score(value=CORRECT if target.text in said else INCORRECT, answer=said)

    return score
"""

LOOSE_SCORER = SCORER.replace("CORRECT if target.text in said else INCORRECT", "CORRECT")


def prompt(words: list[str]) -> str:
    return "You are the support bot.\n" + "".join(f"say: {w}\n" for w in words)


def samples(words: list[str], with_ids: bool = True) -> str:
    rows = [
        {**({"id": f"faq-{w}"} if with_ids else {}), "input": f"tell me about {w}", "target": w}
        for w in words
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


def config(model_url: str | None = None, **keys: Any) -> str:
    suites: list[dict[str, Any]] = [{"name": "unit-evals", "pytest": {"args": ["tests/evals"]}}]
    if model_url is not None:
        inspect = {
            "task": "evals/support.py@support",
            "model": "openai/echo",
            "model_args": {"responses_api": False},
        }
        suites.append({"name": "support-inspect", "inspect": inspect})
    return yaml.safe_dump({"watch": ["prompts/**"], **keys, "suites": suites}, sort_keys=False)


def files(*, inspect: bool = True, **keys: Any) -> dict[str, str]:
    """The project on main (`inspect`: with the inspect suite)."""
    found = {
        "gate.yml": config("model" if inspect else None, **keys),
        "app/__init__.py": "",
        "app/bot.py": BOT,
        "prompts/support.md": prompt(WORDS),
        "tests/__init__.py": "",
        "tests/evals/conftest.py": CONFTEST,
        "tests/evals/test_support.py": TESTS.format(words=WORDS),
        "README.md": "# app\n",
    }
    if inspect:
        found |= {
            "app/solver.py": SOLVER,
            "evals/support.py": TASK,
            "evals/scorers.py": SCORER,
            "evals/samples.jsonl": samples(WORDS),
        }
    return found


def drop(word: str) -> dict[str, str | None]:
    """The regression: the prompt no longer allows `word`."""
    return {"prompts/support.md": prompt([w for w in WORDS if w != word])}
