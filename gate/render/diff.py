"""Base against head, as a reader of the comment needs it: the two outputs of a case as a
compact diff block, the check that decided it, the judge's scores on both sides, and the
diffs of the system files the PR changed.

Pure: no I/O. Everything from a model, a case or a PR's files is untrusted and comes out
inert through the output's `Style` (`gate.render.style`): escaped Markdown with blocks in a
fence longer than any backtick run of their text, or plain text with control characters
made visible.

A model's answer is often one long paragraph, so outputs are compared sentence by sentence
(a line longer than the wrap width is split after `.`, `!`, `?`, `:` and `;`): the diff then
shows the sentence that changed, not the whole answer twice. Lines keep their `-`/`+` mark
when wrapped, so GitHub colours every piece; long unchanged stretches shrink to `⋯`.
"""

from __future__ import annotations

import difflib
import re
import textwrap
from dataclasses import dataclass, field

from gate.compare.models import CaseChange, SideCase
from gate.compare.system import FileDiff
from gate.render.markdown import ELLIPSIS, Md, sanitize, shorten
from gate.render.paths import PATH_KINDS, PathView, path_reason, path_view, turn_rows, unreached
from gate.render.style import Style
from gate.report.checks import (
    CheckResult,
    CodeTestResult,
    PhraseResult,
    RubricResult,
    TurnCheckResult,
    TurnReachedResult,
)

WRAP = 100
CONTEXT = 1  # unchanged sentences shown around a change
SHORT = 8  # outputs of at most this many sentences are shown whole
SNIPPET = 60  # characters of context either side of a highlighted phrase
GAP = "⋯"
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+(?=\S)")


# --- the two outputs ---------------------------------------------------------------------------


def segments(value: str | None) -> list[str]:
    """Lines of an output, long lines split into sentences; control characters made visible."""
    if value is None:
        return []
    out: list[str] = []
    # An output's final newline (a test's captured print) is no line of its own.
    for line in sanitize(value.rstrip("\n")).expandtabs(4).split("\n"):
        line = line.rstrip()
        if len(line) > WRAP:
            out.extend(p for p in _SENTENCE.split(line) if p)
        else:
            out.append(line)
    return out


def _wrapped(mark: str, segment: str) -> list[str]:
    pieces = (
        textwrap.wrap(segment, WRAP, break_on_hyphens=False, replace_whitespace=False)
        if len(segment) > WRAP
        else [segment]
    )
    return [f"{mark} {piece}".rstrip() for piece in pieces or [""]]


def _key(segment: str) -> str:
    return " ".join(segment.split())


def diff_lines(base: str | None, head: str | None) -> list[str]:
    """`-` base only, `+` head only, ` ` both: the changed sentences with one of context."""
    a, b = segments(base), segments(head)
    if [_key(s) for s in a] == [_key(s) for s in b]:
        return [line for s in b for line in _wrapped(" ", s)]
    matcher = difflib.SequenceMatcher(None, [_key(s) for s in a], [_key(s) for s in b], False)
    context = max(len(a), len(b)) if max(len(a), len(b)) <= SHORT else CONTEXT
    last = matcher.get_opcodes()[-1]  # before grouping, which trims the cached opcodes
    tail = last[0] == "equal" and last[2] - last[1] > context
    lines: list[str] = []
    for number, group in enumerate(matcher.get_grouped_opcodes(context)):
        first = group[0]
        if number or first[1] > 0 or first[3] > 0:
            lines.append(f"  {GAP}")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [line for s in b[j1:j2] for line in _wrapped(" ", s)]
                continue
            lines += [line for s in a[i1:i2] for line in _wrapped("-", s)]
            lines += [line for s in b[j1:j2] for line in _wrapped("+", s)]
    if tail:
        lines.append(f"  {GAP}")
    return lines


def cut_lines(lines: list[str], *, max_lines: int, max_chars: int) -> list[str]:
    """At most `max_lines` lines and about `max_chars` characters, and how many were left."""
    kept: list[str] = []
    size = 0
    for line in lines[: max(max_lines, 1)]:
        if kept and size + len(line) + 1 > max_chars:
            break
        kept.append(shorten(line, max_chars))
        size += len(line) + 1
    if len(kept) < len(lines):
        kept.append(f"  {ELLIPSIS} {len(lines) - len(kept)} more lines in the full report")
    return kept


def _output(side: SideCase | None) -> str | None:
    return side.output if side else None


def output_diff(case: CaseChange, style: Style, *, max_lines: int, max_chars: int) -> Md:
    lines = diff_lines(_output(case.base), _output(case.head))
    return style.diff(cut_lines(lines, max_lines=max_lines, max_chars=max_chars))


# --- what decided the check ---------------------------------------------------------------------


def _around(output: str | None, needle: str, style: Style) -> Md | None:
    """The needle in its sentence, bold: where the base said it, or where the head says it."""
    if not output or not needle:
        return None
    found = re.search(re.escape(needle), output, re.IGNORECASE)
    if found is None:
        return None
    start, end = found.span()
    before = output[max(0, start - SNIPPET) : start]
    after = output[end : end + SNIPPET]
    if start > SNIPPET:  # cut at a word boundary
        before = ELLIPSIS + (before.split(" ", 1)[1] if " " in before[:-1] else before)
    if end + SNIPPET < len(output):
        after = (after.rsplit(" ", 1)[0] if " " in after[1:] else after) + ELLIPSIS
    return Md(f"“{style.highlight(before, output[start:end], after)}”")


@dataclass(frozen=True)
class _Why:
    """What decided one case, on `side` (`other` is the side it is set against)."""

    case: CaseChange
    side: str
    other: str
    style: Style
    chars: int

    def detail(self, check: CheckResult) -> str:
        return f": {self.style.text(check.detail, self.chars)}" if check.detail else ""

    def reason(self, check: CheckResult, first_test: bool) -> Md:
        s, side = self.style, self.side
        if isinstance(check, PhraseResult) and check.kind in ("include", "exclude"):
            return self.phrase(check)
        if isinstance(check, PATH_KINDS):
            return path_reason(check, side, s)
        if isinstance(check, TurnReachedResult):
            return unreached(check, side, s)
        if isinstance(check, TurnCheckResult):
            return self.turn(check, first_test)
        if isinstance(check, CodeTestResult):
            what = "first failing assertion" if first_test else "also failing"
            return Md(
                f"{what} on {side}: {s.code(check.test or check.name, 100)}{self.detail(check)}"
            )
        if check.kind == "compile":
            broken = s.strong("does not compile")
            return Md(f"the code {broken} on {side}: {s.text(check.detail, self.chars)}")
        if isinstance(check, RubricResult):
            floor = f" (minimum {check.minimum})" if check.minimum is not None else ""
            said = f": “{s.text(check.reason, self.chars)}”" if check.reason else ""
            score = s.strong(f"{check.score}/2" if check.score is not None else "no score")
            dimension = s.code(check.dimension, 60)
            return Md(f"the judge scored {dimension} {score}{floor} on {side}{said}")
        return Md(f"{s.code(check.name, 80)} failed on {side}{self.detail(check)}")

    def turn(self, check: TurnCheckResult, first_test: bool) -> Md:
        """A check of one turn's answer: its own sentence, in that turn (a phrase unquoted:
        the outputs shown are the last turn's)."""
        inner = check.check
        if isinstance(inner, PhraseResult) and inner.kind in ("include", "exclude"):
            said = self.phrase(inner, quoted=False)
        else:
            said = self.reason(inner, first_test)
        return Md(f"in turn {check.turn}, {said}")

    def phrase(self, check: PhraseResult, *, quoted: bool = True) -> Md:
        """A required phrase missing (quoted where the other side said it), or a forbidden one
        that appeared (quoted where it did)."""
        s, side, case, phrase = self.style, self.side, self.case, check.phrase
        own, theirs = (case.head, case.base) if side == "head" else (case.base, case.head)
        if not quoted:
            own = theirs = None
        if check.kind == "include":
            quote = _around(_output(theirs), phrase, s)
            said = f"; {self.other} said {quote}" if quote else ""
            return Md(
                f"the required phrase {s.code(phrase, 80)} is {s.strong('missing')} on {side}{said}"
            )
        quote = _around(_output(own), phrase, s)
        said = f": {quote}" if quote else ""
        return Md(
            f"the forbidden phrase {s.code(phrase, 80)} {s.strong('appeared')} on {side}{said}"
        )


def why(case: CaseChange, style: Style, *, checks: int, chars: int) -> list[Md]:
    """The checks that decided the case, most telling first: for a fix, why the base failed."""
    head = case.head
    fixed = head is not None and head.status == "pass"
    side, other = ("base", "head") if fixed else ("head", "base")
    telling = _Why(case, side, other, style, chars)
    decided = case.base if fixed else head
    failed = decided.failed_checks if decided else []
    reasons: list[Md] = []
    tests_seen = False
    for check in failed[: max(checks, 1)]:
        is_test = isinstance(check, CodeTestResult)
        reasons.append(telling.reason(check, is_test and not tests_seen))
        tests_seen = tests_seen or is_test
    if len(failed) > max(checks, 1):
        reasons.append(Md(f"and {len(failed) - max(checks, 1)} more failed checks"))
    if not fixed and head is not None and head.review_checks:
        detail = style.text(head.review_checks[0].detail or "no reason given", chars)
        reasons.append(Md(f"the judge's answer {style.strong('could not be used')}: {detail}"))
    if not fixed and head is not None and head.status == "error" and head.error:
        reasons.append(Md(f"{style.strong('error')} on head: {style.text(head.error, chars)}"))
    if case.base is None:
        reasons.append(Md("new case: no base output to compare with"))
    elif case.head is None:
        reasons.append(Md("removed case: no head output"))
    return reasons


@dataclass
class ScoreRow:
    dimension: Md
    minimum: Md
    base: Md
    head: Md
    note: Md


def score_rows(case: CaseChange, style: Style, chars: int) -> list[ScoreRow]:
    """The judge's scores on both sides and its notes, one row per dimension."""
    base = {c.dimension: c for c in (case.base.rubric if case.base else [])}
    head = {c.dimension: c for c in (case.head.rubric if case.head else [])}
    rows = []
    for dimension in [*head, *(d for d in base if d not in head)]:
        b, h = base.get(dimension), head.get(dimension)
        minimums = [c.minimum for c in (h, b) if c is not None and c.minimum is not None]
        notes = [
            f"{label}: {style.text(c.reason, chars)}"
            for label, c in (("base", b), ("head", h))
            if c is not None and c.reason
        ]
        rows.append(
            ScoreRow(
                dimension=style.code(dimension, 60),
                minimum=Md(str(minimums[0]) if minimums else "—"),
                base=_score(b),
                head=_score(h),
                note=style.lines(notes) if notes else Md("—"),
            )
        )
    return rows


def _score(check: RubricResult | None) -> Md:
    if check is None:
        return Md("—")
    if check.passed is None:
        return Md("needs review")
    mark = "" if check.passed else " ❌"
    return Md(f"{check.score}/2{mark}" if check.score is not None else f"?{mark}")


@dataclass
class Explained:
    """One case as the comment explains it."""

    case: CaseChange
    why: list[Md]
    diff: Md
    scores: list[ScoreRow] = field(default_factory=list)
    path: PathView | None = None  # an agent's path, when it changed
    turns: list[dict[str, Md]] = field(default_factory=list)  # a conversation's turns


def explain(
    case: CaseChange,
    style: Style,
    *,
    checks: int,
    chars: int,
    lines: int,
    diff_chars: int,
    steps: int = 12,
) -> Explained:
    return Explained(
        case=case,
        why=why(case, style, checks=checks, chars=chars),
        diff=output_diff(case, style, max_lines=lines, max_chars=diff_chars),
        scores=score_rows(case, style, chars),
        path=path_view(case, style, steps=steps, chars=chars),
        turns=turn_rows(case, style, chars),
    )


# --- the system files -----------------------------------------------------------------------


def file_block(file: FileDiff, style: Style, *, max_lines: int, max_chars: int) -> Md:
    """A changed file's hunks as a diff block; a note when there is nothing to show."""
    if file.binary:
        return style.emphasis("(binary file: no diff shown)")
    if not file.diff:
        return style.emphasis(f"({style.text(file.note or 'no diff available', 200)})")
    lines = sanitize(file.diff.rstrip("\n")).expandtabs(4).split("\n")
    block = style.diff(cut_lines(lines, max_lines=max_lines, max_chars=max_chars))
    hidden = file.diff_lines - len(lines)
    if hidden > 0:  # the comparison itself kept only part of a very long diff
        return Md(f"{block}\n\n{ELLIPSIS} {hidden} more lines of this diff not kept")
    return block
