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

from gate.compare.findings import CoarseSuite, Drop, Underpowered
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
    resolution: list[str]


def resolution_decides(comparison: Comparison) -> bool:
    """Whether what the suite can resolve changes how its verdict reads: the suite is
    inconclusive, or it fails on the threshold rule alone by a drop that one case fewer would
    have kept within the threshold (a single case decided). Elsewhere the note is a property
    of the suite, said in Statistics."""
    if comparison.verdict == "inconclusive":
        return True
    if comparison.verdict != "fail":
        return False
    failing = [f for f in comparison.findings if f.outcome == "fail"]
    notes = [f for f in comparison.findings if isinstance(f, CoarseSuite | Underpowered)]
    if not notes or not failing or not all(isinstance(f, Drop) for f in failing):
        return False
    drop = failing[0]
    assert isinstance(drop, Drop)
    return drop.drop_points - notes[0].case_weight_points <= drop.threshold


# findings that did not decide the verdict but are reasons beside it
_SECONDARY = {"error": ("fail", "inconclusive"), "fail": ("inconclusive",)}


def words(comparison: Comparison) -> Words:
    """The findings as `reasons` (why this verdict), `notes` (decide nothing), `instrument`
    (what the PR changes in the instrument, and what the head's would say) and `resolution`
    (what the suite can resolve: a note too only where it changes how the verdict reads,
    `resolution_decides`). Failures listed under an error verdict, and inconclusive suites'
    under an error or a fail, read "also: …"."""
    reasons, notes, instrument, resolution = [], [], [], []
    decides = resolution_decides(comparison)
    for finding in comparison.findings:
        said = sentence(finding)
        if is_instrument(finding):
            instrument.append(said)
        elif isinstance(finding, CoarseSuite | Underpowered):
            resolution.append(said)
            if decides:
                notes.append(said)
        elif finding.outcome == "note":
            notes.append(said)
        elif finding.outcome in _SECONDARY.get(comparison.verdict, ()):
            reasons.append(f"also: {said}")
        else:
            reasons.append(said)
    return Words(reasons, notes, instrument, resolution)


FIRST_KEYS = ("verdict", "findings", "reasons", "notes", "instrument", "resolution")


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
    resolution: list[str] = Field(
        default_factory=list,
        description="what the suite can resolve (Statistics; also a note where it changes how "
        "the verdict reads)",
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
        comparison.model_fields_set | {"reasons", "notes", "instrument", "resolution"},
        **fields,
        reasons=said.reasons,
        notes=said.notes,
        instrument=said.instrument,
        resolution=said.resolution,
    )
