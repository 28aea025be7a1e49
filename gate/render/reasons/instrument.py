"""What a PR changes in the instrument, in words: one sentence per kind
(`gate.compare.instrument_findings`), each saying what the base does instead; what the head's
own instrument would say (`HeadInstrument`); a fail accepted by the PR's label (`Accepted`)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import JsonValue

from gate.compare.findings import (
    Accepted,
    AnswersReplayed,
    BaseUnreadable,
    CaseFilesChanged,
    CasesAdded,
    CasesEdited,
    CasesRemoved,
    CheckCodeChanged,
    Finding,
    HeadInstrument,
    HeadInstrumentUnknown,
    HeldoutChanged,
    InstrumentFilesChanged,
    JudgeChanged,
    PricesChanged,
    SandboxLimitsChanged,
    SeveritiesChanged,
    SimulatedUserChanged,
    SuiteRemoved,
    SystemChanged,
    TemplatesChanged,
    WatchNarrowed,
)
from gate.compare.instrument_findings import INSTRUMENT_KINDS
from gate.inputs.policy import SEVERITY_ORDER
from gate.render.reasons.sentence import fmt, key_changes, listed, policy_value, quoted, sentence

CASE_FIELDS = {
    "expect": "changes the expectations of",
    "input": "changes the input of",
    "task": "changes the task of",
    "agent": "changes the tools, turns or simulated user of",
}


def is_instrument(finding: Finding) -> bool:
    """A change the PR makes to the instrument, or what the head's would say: the comment's
    own section (a change that fails, such as a removed suite, is one of the reasons instead)."""
    return finding.outcome != "fail" and isinstance(finding, (*INSTRUMENT_KINDS, HeadInstrument))


def _cases(ids: Sequence[str]) -> str:
    noun = "case" if len(ids) == 1 else "cases"
    return f"{len(ids):,} {noun} ({listed(ids)})"


def _them(ids: Sequence[str], one: str, more: str) -> str:
    return one if len(ids) == 1 else more


def _price(price: dict[str, float] | None) -> str:
    if price is None:
        return "no price"
    value: JsonValue = {"input": price["input"], "output": price["output"]}
    return policy_value(value)


@sentence.register
def _(f: BaseUnreadable) -> str:
    return (
        f"the base's gate.yml or case files cannot be read, so nothing can measure this PR "
        f"(the head's instrument never takes the base's place): {f.problem}"
    )


@sentence.register
def _(f: SuiteRemoved) -> str:
    renamed = (
        f"; the head's new {'suite is' if len(f.head_suites) == 1 else 'suites are'} "
        + quoted(f.head_suites)
        if f.head_suites
        else ""
    )
    return (
        f"this PR removes or renames the suite `{f.suite}` of the base's gate.yml{renamed}: "
        "its cases would go unmeasured, so it fails"
    )


@sentence.register
def _(f: CasesRemoved) -> str:
    return (
        f"this PR removes {_cases(f.ids)} from the case files: "
        f"{_them(f.ids, 'it is', 'they are')} still asked of both sides and judged as the base "
        f"defines {_them(f.ids, 'it', 'them')}"
    )


@sentence.register
def _(f: CasesAdded) -> str:
    said = (
        f"this PR adds {_cases(f.ids)}: asked of both sides and reported apart, outside the "
        "pass-rate delta; only a failing blocker among them counts (it blocks)"
    )
    if f.unjudged:
        said += (
            f"; {_cases(f.unjudged)} {_them(f.unjudged, 'needs', 'need')} check code or a "
            "judge the base does not have, so the base cannot judge "
            f"{_them(f.unjudged, 'it', 'them')}: not asked until merged"
        )
    return said


@sentence.register
def _(f: CasesEdited) -> str:
    return (
        f"this PR {CASE_FIELDS[f.field]} {_cases(f.ids)}: the base's definition judges "
        f"{_them(f.ids, 'it', 'them')}"
    )


@sentence.register
def _(f: SeveritiesChanged) -> str:
    def moved(lower: bool) -> str:
        shown = [
            f"{c.id} ({c.base} → {c.head})"
            for c in f.changes
            if (SEVERITY_ORDER[c.head] > SEVERITY_ORDER[c.base]) == lower
        ]
        return listed(shown)

    parts = [f"{verb} the severity of {moved(lower)}" for verb, lower in
             (("lowers", True), ("raises", False)) if moved(lower)]  # fmt: skip
    return f"this PR {' and '.join(parts)}: the base's severities judge it"


@sentence.register
def _(f: HeldoutChanged) -> str:
    parts = []
    if f.shown:
        parts.append(f"stops holding out {_cases(f.shown)}")
    if f.hidden:
        parts.append(f"holds out {_cases(f.hidden)}")
    return (
        f"this PR {' and '.join(parts)}: the base's choice applies (a case held out on base "
        "stays hidden)"
    )


@sentence.register
def _(f: CaseFilesChanged) -> str:
    return (
        f"this PR points the suite's `cases:` at {', '.join(f.head) or 'nothing'} (the base "
        f"reads {', '.join(f.base)}): the base's case files are read"
    )


@sentence.register
def _(f: WatchNarrowed) -> str:
    parts = []
    if f.removed:
        parts.append("drops " + quoted(f.removed))
    if f.excluded:
        parts.append("excludes " + quoted(f.excluded))
    return (
        f"this PR narrows `watch` (it {' and '.join(parts)}): after merge, a change there "
        "no longer runs the gate"
    )


@sentence.register
def _(f: PricesChanged) -> str:
    changes = "; ".join(f"{c.model}: {_price(c.base)} → {_price(c.head)}" for c in f.changes)
    return f"this PR changes `prices` ({changes}): the base's prices cost both sides"


@sentence.register
def _(f: JudgeChanged) -> str:
    return (
        f"this PR changes the judge ({key_changes(f.changes)}): the base's judge scores both sides"
    )


@sentence.register
def _(f: SimulatedUserChanged) -> str:
    return (
        f"this PR changes the simulated user ({key_changes(f.changes)}): the base's plays the user "
        "on both sides"
    )


@sentence.register
def _(f: SandboxLimitsChanged) -> str:
    return (
        f"this PR changes the sandbox's limits ({key_changes(f.changes)}): the base's limits apply "
        "to both sides"
    )


@sentence.register
def _(f: TemplatesChanged) -> str:
    where = (
        f"`templates:` {f.base or 'none'} → {f.head or 'none'}"
        if f.base != f.head
        else quoted(f.files[:5])
    )
    return f"this PR changes the comment templates ({where}): the base's render this comment"


@sentence.register
def _(f: CheckCodeChanged) -> str:
    files = quoted(f.files[:5])
    return f"this PR changes the code of `expect.python` checks ({files}): the base's code judges"


@sentence.register
def _(f: InstrumentFilesChanged) -> str:
    files = quoted(f.files[:5])
    more = f" and {len(f.files) - 5:,} more" if len(f.files) > 5 else ""
    parts = [f"files {files}{more}"] if f.files else []
    parts += [key_changes(f.settings)] if f.settings else []
    return (
        f"this PR changes what measures the suite ({'; '.join(parts)}): both sides ran the "
        "base's version; the head's takes effect after merge"
    )


@sentence.register
def _(f: AnswersReplayed) -> str:
    return (
        f"this PR switches the suite's system from `{f.base_kind}` to `replay` of `{f.file}`: "
        "the head reads recorded answers instead of asking its system, and answers the PR "
        "recorded cannot pass it, so it fails"
    )


@sentence.register
def _(f: SystemChanged) -> str:
    return (
        f"this PR changes the suite's system ({key_changes(f.changes)}): each side runs its own, "
        "measured the same way"
    )


@sentence.register
def _(f: HeadInstrumentUnknown) -> str:
    return f"what the head's own instrument would say is unknown: {f.reason}"


@sentence.register
def _(f: HeadInstrument) -> str:
    if f.delta_points is None:
        numbers = "nothing paired"
    else:
        sign = "+" if f.delta_points >= 0 else ""
        numbers = (
            f"{sign}{fmt(f.delta_points)} points, {fmt(f.base_pass_rate)}% → "
            f"{fmt(f.head_pass_rate)}% over {f.paired:,} cases"
        )
    said = (
        "with the head's own cases, checks, judge, prices and policy (the same answers judged "
        f"again, no system call) this PR would read: {f.verdict} ({numbers})"
        + "".join(f"; {sentence(d)}" for d in f.decisive[:3])
        + ": that is how the gate measures once it is merged"
    )
    if f.left_out:
        said += (
            f"; {_cases(f.left_out)} left out: this PR changes "
            f"{_them(f.left_out, 'its input, whose answer was', 'their input, whose answers were')}"
            " not asked"
        )
    if f.judge_calls:
        said += f"; {f.judge_calls:,} judge calls, {f.judge_cached:,} of them from the cache"
    return said


@sentence.register
def _(f: Accepted) -> str:
    why = "; ".join(sentence(o) for o in f.overruled) or "a failing rule"
    return f"accepted by the label `{f.label}` on this PR, which without it fails: {why}"
