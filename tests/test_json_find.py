"""The JSON-in-prose finder: properties over generated answers, and its bounds on hostile ones."""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from gate.checks.json_find import find_json

# Prose that holds no JSON of its own: no brackets, braces or fences.
PROSE = st.text(
    alphabet=st.characters(blacklist_characters="[]{}`", blacklist_categories=("Cs",)), max_size=80
)
SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=10)
SCALARS |= st.floats(allow_nan=False, allow_infinity=False)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
CONTAINERS = st.lists(VALUES, max_size=4) | st.dictionaries(st.text(max_size=6), VALUES, max_size=4)


@given(before=PROSE, value=CONTAINERS, after=PROSE, indent=st.sampled_from([None, 2]))
def test_an_object_or_array_in_prose_is_found(
    before: str, value: object, after: str, indent: int | None
) -> None:
    text = f"{before} {json.dumps(value, indent=indent)} {after}"
    found = find_json(text)
    assert found is not None and found.value == value


@given(before=PROSE, value=VALUES, after=PROSE, lang=st.sampled_from(["json", "JSON", ""]))
def test_a_fenced_value_is_found(before: str, value: object, after: str, lang: str) -> None:
    text = f"{before}\n```{lang}\n{json.dumps(value)}\n```\n{after}"
    found = find_json(text)
    assert found is not None and found.value == value


@given(value=VALUES)
def test_a_whole_answer_is_itself(value: object) -> None:
    found = find_json(f"\n {json.dumps(value)} \n")
    assert found is not None and found.value == value and found.where == "the whole answer"


@given(first=CONTAINERS, second=CONTAINERS, prose=PROSE)
def test_the_first_value_wins(first: object, second: object, prose: str) -> None:
    found = find_json(f"{prose} {json.dumps(first)} and then {json.dumps(second)}")
    assert found is not None and found.value == first


@given(text=PROSE)
def test_prose_without_json_has_none(text: str) -> None:
    found = find_json(text)
    # prose may still be one JSON scalar as a whole ("42", "true", "null")
    assert found is None or found.where == "the whole answer"


@settings(max_examples=300)
@given(text=st.text(max_size=300))
def test_any_text_is_searched_without_raising(text: str) -> None:
    found = find_json(text)
    if found is not None:
        json.dumps(found.value)  # plain JSON data, whatever the text was


def test_hostile_answers_stay_fast() -> None:
    for text in ("[" * 200_000, "[0," * 100_000, ("[0," * 999 + "x ") * 200, "{" * 100_000):
        started = time.perf_counter()
        assert find_json(text) is None
        assert time.perf_counter() - started < 2.0
