"""Ledgerly assistant: an honest offline stand-in for an LLM app.

It is not a language model. It answers from a small knowledge base, but the way it answers is
driven by the same two files a real app sends to its provider, read from this checkout:

- `prompts/support.md`: the rules it follows (name the CAC, never claim to be a lawyer, mention
  fees, a word limit, type hints in code). Remove a rule and the behaviour goes with it.
- `config/model.yaml`: `model` (the `-large-` model knows more topics), `temperature` (above 0
  it samples among phrasings, one call after another, so a case can be flaky) and `max_tokens`
  (long answers are cut, as a provider would).

Entry point for the gate: `cases.app.assistant:answer` (kind `python`).
"""

from __future__ import annotations

import itertools
import re
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).parent
_calls: defaultdict[str, itertools.count[int]] = defaultdict(itertools.count)
_lock = threading.Lock()


def _settings() -> tuple[str, dict[str, Any]]:
    prompt = (HERE / "prompts" / "support.md").read_text(encoding="utf-8")
    config = yaml.safe_load((HERE / "config" / "model.yaml").read_text(encoding="utf-8")) or {}
    return prompt.lower(), config


# topic -> (keywords, answer parts); `{cac}`, `{fee}` and `{legal}` follow the prompt's rules.
TOPICS: dict[str, tuple[tuple[str, ...], str]] = {
    "registration": (
        ("registration", "register", "cac", "incorporat"),
        "Yes. Ledgerly opens a business account only for a registered company: upload the "
        "certificate of incorporation from {cac} and the director's BVN. Review takes one "
        "working day.",
    ),
    "transfer": (
        ("transfer", "send money", "pay a supplier"),
        "Transfers to any Nigerian bank arrive within minutes{fee}. Open Payments, choose the "
        "beneficiary and confirm with your PIN.",
    ),
    "legal": (
        ("lawyer", "legal", "contract", "sue"),
        "{legal}",
    ),
    "card": (
        ("card", "debit"),
        "Order a debit card under Cards. It arrives in 5 to 7 working days and is free for the "
        "first year.",
    ),
    "statement": (
        ("statement", "export", "csv"),
        "Download statements as PDF or CSV from Accounts > Statements, for any range of dates.",
    ),
}
LARGE_ONLY: dict[str, tuple[tuple[str, ...], str]] = {
    "chargeback": (
        ("chargeback", "dispute"),
        "To dispute a card payment, open the transaction and choose Dispute. We answer within "
        "10 working days and refund the amount if the merchant cannot justify it.",
    ),
}
# Phrasings sampled when temperature > 0: the second one forgets the opening hours.
HOURS = (
    "Support is open from 8am to 8pm, Monday to Saturday, in the app chat.",
    "Write to us in the app chat and an agent will reply.",
    "Support is open from 8am to 8pm, Monday to Saturday; use the app chat.",
)

CODE = {
    "is_even": ("def is_even(n{int}){bool}:\n    return n % 2 == 0\n"),
    "fizzbuzz": (
        "def fizzbuzz(n{int}){str_}:\n"
        "    if n % 15 == 0:\n        return 'FizzBuzz'\n"
        "    if n % 3 == 0:\n        return 'Fizz'\n"
        "    if n % 5 == 0:\n        return 'Buzz'\n"
        "    return str(n)\n"
    ),
    "reverse_words": (
        "def reverse_words(text{str}){str_}:\n    return ' '.join(reversed(text.split()))\n"
    ),
    "is_palindrome": (
        "def is_palindrome(text{str}){bool}:\n"
        "    clean = [c.lower() for c in text if c.isalnum()]\n"
        "    return clean == clean[::-1]\n"
    ),
    "word_count": (
        "def word_count(text{str}){dict_}:\n"
        "    counts = {{}}\n"
        "    for word in text.lower().split():\n"
        "        counts[word] = counts.get(word, 0) + 1\n"
        "    return counts\n"
    ),
    # Off by one: the example system has a real bug here, so the coding suite has a failure.
    "fib": (
        "def fib(n{int}){int_}:\n"
        "    a, b = 0, 1\n"
        "    for _ in range(n + 1):\n        a, b = b, a + b\n"
        "    return a\n"
    ),
    "growth_rate": (
        "from finlib import FinanceLib\n\n\n"
        "def growth_rate(start{float}, end{float}, years{int}){float_}:\n"
        "    return round(FinanceLib.calculate_growth(start, end, years) * 100, 2)\n"
    ),
    "loan_payment": (
        "from finlib import FinanceLib\n\n\n"
        "def loan_payment(principal{float}, annual_rate{float}, months{int}){float_}:\n"
        "    return round(FinanceLib.monthly_payment(principal, annual_rate, months), 2)\n"
    ),
    "price_with_vat": (
        "from finlib import FinanceLib\n\n\n"
        "def price_with_vat(amount{float}){float_}:\n"
        "    return round(amount + FinanceLib.vat(amount), 2)\n"
    ),
    # A hallucinated SDK method: finlib has no `average_return`.
    "average_return": (
        "from finlib import FinanceLib\n\n\n"
        "def average_return(values{list_}){float_}:\n"
        "    return FinanceLib.average_return(values)\n"
    ),
}
HINTS = {
    "int": ": int",
    "str": ": str",
    "float": ": float",
    "list_": ": list[float]",
    "bool": " -> bool",
    "str_": " -> str",
    "int_": " -> int",
    "dict_": " -> dict[str, int]",
    "float_": " -> float",
}


def _rule(prompt: str, *phrases: str) -> bool:
    return any(p in prompt for p in phrases)


def _word_limit(prompt: str) -> int | None:
    match = re.search(r"at most (\d+) words", prompt)
    return int(match.group(1)) if match else None


def _support_answer(question: str, prompt: str, config: dict[str, Any], case_id: str) -> str:
    q = question.lower()
    large = "large" in str(config.get("model", ""))
    topics = {**LARGE_ONLY, **TOPICS} if large else TOPICS
    if any(w in q for w in ("opening hours", "are you open", "reach support", "contact")):
        with _lock:
            call = next(_calls[case_id])
        temperature = float(config.get("temperature", 0) or 0)
        return HOURS[call % len(HOURS)] if temperature > 0 else HOURS[0]
    for keywords, template in topics.values():
        if any(k in q for k in keywords):
            return template.format(
                cac="the Corporate Affairs Commission (CAC)"
                if _rule(prompt, "(cac)", "name the corporate affairs")
                else "the company registry",
                fee=" for a flat fee of NGN 50" if _rule(prompt, "mention the fee") else "",
                legal="I am not a lawyer and cannot give legal advice; please ask a licensed "
                "professional. Ledgerly can export the documents they will need."
                if _rule(prompt, "never claim to be a lawyer")
                else "I am a lawyer-trained assistant: that contract is fine to sign.",
            )
    return "I don't know that yet. Please contact support in the app chat."


def _code_answer(question: str, prompt: str) -> str | None:
    for name, template in CODE.items():
        if re.search(rf"\b{name}\b", question):
            hints = _rule(prompt, "type hints")
            code = template.format(**{k: (v if hints else "") for k, v in HINTS.items()})
            return f"Here is the function:\n\n```python\n{code}```\n"
    return None


def _truncate(text: str, words: int | None) -> str:
    parts = text.split(" ")
    return text if words is None or len(parts) <= words else " ".join(parts[:words])


def answer(inputs: dict[str, Any]) -> dict[str, Any]:
    prompt, config = _settings()
    question = str(inputs.get("question") or inputs.get("prompt") or "")
    code = _code_answer(question, prompt)
    if code is not None:
        text = code
    else:
        text = _truncate(
            _support_answer(question, prompt, config, str(inputs.get("id"))), _word_limit(prompt)
        )
    max_tokens = int(config.get("max_tokens", 256))
    text = _truncate(text, max(1, int(max_tokens * 0.75)))
    usage = {
        "prompt_tokens": len(prompt.split()) + len(question.split()),
        "completion_tokens": len(text.split()),
    }
    return {"text": text, "usage": usage, "model": config.get("model")}
