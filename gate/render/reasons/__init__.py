"""The verdict in words: one sentence per finding (`gate.compare.findings`).

The comparison decides with numbers; this package is the one place where they become the
reasons and notes that the comment, the summary, the terminal, JUnit and the JSON format show
(`worded`), and the lines the flow logs (`words`). `rules` words the verdict's rules,
`threshold` the threshold rule's (a drop, an inconclusive suite, what the suite can resolve),
`instrument` what a PR changes in the instrument that measures it.
"""

from __future__ import annotations

from typing import NamedTuple

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from gate.compare.models import Comparison
from gate.render.reasons import rules, threshold  # noqa: F401  (register their sentences)
from gate.render.reasons.instrument import is_instrument
from gate.render.reasons.sentence import sentence

__all__ = ["WordedComparison", "Words", "sentence", "worded", "words"]


# --- the comparison in words -----------------------------------------------------------------


class Words(NamedTuple):
    reasons: list[str]
    notes: list[str]
    instrument: list[str]


# findings that did not decide the verdict but are reasons beside it
_SECONDARY = {"error": ("fail", "inconclusive"), "fail": ("inconclusive",)}


def words(comparison: Comparison) -> Words:
    """The findings as `reasons` (why this verdict), `notes` (decide nothing) and
    `instrument` (what the PR changes in the instrument, and what the head's would say).
    Failures listed under an error verdict, and inconclusive suites' under an error or a fail,
    read "also: …"."""
    reasons, notes, instrument = [], [], []
    for finding in comparison.findings:
        said = sentence(finding)
        if is_instrument(finding):
            instrument.append(said)
        elif finding.outcome == "note":
            notes.append(said)
        elif finding.outcome in _SECONDARY.get(comparison.verdict, ()):
            reasons.append(f"also: {said}")
        else:
            reasons.append(said)
    return Words(reasons, notes, instrument)


FIRST_KEYS = ("verdict", "findings", "reasons", "notes", "instrument")


class WordedComparison(Comparison):
    """The comparison as every format shows it (the templates' `c`, the `json` format): its
    fields and its findings in words."""

    reasons: list[str] = Field(default_factory=list, description="why this verdict")
    notes: list[str] = Field(default_factory=list, description="worth knowing, not decisive")
    instrument: list[str] = Field(
        default_factory=list,
        description="what the PR changes in the instrument that measures it (the base's "
        "judges), and what the head's would say",
    )

    @model_serializer(mode="wrap")
    def _words_beside_the_findings(
        self, handler: SerializerFunctionWrapHandler
    ) -> dict[str, object]:
        data: dict[str, object] = handler(self)
        return {**{k: data[k] for k in FIRST_KEYS if k in data}, **data}


def worded(comparison: Comparison) -> WordedComparison:
    said = words(comparison)
    fields = {name: getattr(comparison, name) for name in Comparison.model_fields}
    return WordedComparison.model_construct(
        comparison.model_fields_set | {"reasons", "notes", "instrument"},
        **fields,
        reasons=said.reasons,
        notes=said.notes,
        instrument=said.instrument,
    )
