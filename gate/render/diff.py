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
from gate.render.paths import PathView, path_view, turn_rows
from gate.render.style import Style
from gate.report.models import CheckResult

WRAP = 100
CONTEXT = 1  # unchanged sentences shown around a change
SHORT = 8  # outputs of at most this many sentences are shown whole
SNIPPET = 60  # characters of context either side of a highlighted phrase
GAP = "⋯"
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+(?=\S)")
PATH_CHECKS = {
    "trajectory": "the agent's path does not match",
    "forbidden_tool": "a forbidden tool was called",
    "max_tool_calls": "too many tool calls",
    "max_steps": "a turn ran out of steps",
}
_MINIMUM = re.compile(r"^(\d+)/2 \((?:meets|below) minimum (\d+)\):\s*(.*)$", re.DOTALL)


# --- the two outputs ---------------------------------------------------------------------------


def segments(value: str | None) -> list[str]:
    """Lines of an output, long lines split into sentences; control characters made visible."""
    if value is None:
        return []
    out: list[str] = []
    for line in sanitize(value).expandtabs(4).split("\n"):
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


def _judged(check: CheckResult) -> tuple[int | None, int | None, str]:
    """(score, minimum, note) of a rubric result."""
    match = _MINIMUM.match(check.detail)
    if match:
        return int(match.group(1)), int(match.group(2)), match.group(3)
    return check.score, None, check.detail


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
        s, side, other = self.style, self.side, self.other
        case = self.case
        own, theirs = (case.head, case.base) if side == "head" else (case.base, case.head)
        kind, _, arg = check.name.partition(":")
        if check.turn is not None:
            inner = arg or kind
            return Md(
                f"in turn {check.turn}, {s.code(inner, 80)} failed on {side}{self.detail(check)}"
            )
        if kind in PATH_CHECKS:
            return Md(
                f"{PATH_CHECKS[kind]} on {side} ({s.code(check.name, 60)}){self.detail(check)}"
            )
        if kind == "include":
            quote = _around(_output(theirs), arg, s)
            said = f"; {other} said {quote}" if quote else ""
            return Md(
                f"the required phrase {s.code(arg, 80)} is {s.strong('missing')} on {side}{said}"
            )
        if kind == "exclude":
            quote = _around(_output(own), arg, s)
            said = f": {quote}" if quote else ""
            return Md(
                f"the forbidden phrase {s.code(arg, 80)} {s.strong('appeared')} on {side}{said}"
            )
        if kind in ("test", "hidden"):
            what = "first failing assertion" if first_test else "also failing"
            return Md(f"{what} on {side}: {s.code(arg or check.name, 100)}{self.detail(check)}")
        if kind == "compile":
            broken = s.strong("does not compile")
            return Md(f"the code {broken} on {side}: {s.text(check.detail, self.chars)}")
        if kind == "rubric":
            score, minimum, note = _judged(check)
            floor = f" (minimum {minimum})" if minimum is not None else ""
            said = f": “{s.text(note, self.chars)}”" if note else ""
            shown = s.strong(f"{score}/2" if score is not None else "no score")
            return Md(f"the judge scored {s.code(arg, 60)} {shown}{floor} on {side}{said}")
        return Md(f"{s.code(check.name, 80)} failed on {side}{self.detail(check)}")


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
        is_test = check.name.split(":", 1)[0] in ("test", "hidden")
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
    base = {c.name: c for c in (case.base.rubric if case.base else [])}
    head = {c.name: c for c in (case.head.rubric if case.head else [])}
    rows = []
    for name in [*head, *(n for n in base if n not in head)]:
        b, h = base.get(name), head.get(name)
        b_score, b_min, b_note = _judged(b) if b else (None, None, "")
        h_score, h_min, h_note = _judged(h) if h else (None, None, "")
        minimum = h_min if h_min is not None else b_min
        notes = []
        if b_note:
            notes.append(f"base: {style.text(b_note, chars)}")
        if h_note:
            notes.append(f"head: {style.text(h_note, chars)}")
        rows.append(
            ScoreRow(
                dimension=style.code(name.removeprefix("rubric:"), 60),
                minimum=Md(str(minimum) if minimum is not None else "—"),
                base=_score(b, b_score),
                head=_score(h, h_score),
                note=style.lines(notes) if notes else Md("—"),
            )
        )
    return rows


def _score(check: CheckResult | None, score: int | None) -> Md:
    if check is None:
        return Md("—")
    if check.passed is None:
        return Md("needs review")
    mark = "" if check.passed else " ❌"
    return Md(f"{score}/2{mark}" if score is not None else f"?{mark}")


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
