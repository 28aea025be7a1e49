"""Value formatters: how numbers, outcomes and changes read in the comment (trusted `Md`, the
same in every style but for money, whose `$` Markdown escapes)."""

from __future__ import annotations

import re

from gate.compare.models import CaseChange, SideCase
from gate.render.markdown import Md
from gate.render.style import MARKDOWN, Style
from gate.report.models import Status
from gate.report.plan import StopReason

MINUS = "\N{MINUS SIGN}"
ARROW = "\N{RIGHTWARDS ARROW}"
DASH = "\N{EM DASH}"
STATUS: dict[Status | None, str] = {
    "pass": "pass",
    "fail": "fail",
    "error": "error",
    "needs_review": "needs review",
    None: "absent",
}


# Why `repeats: auto` stopped spending calls (the comment and the flow's log say it so).
STOPPED: dict[StopReason | None, str] = {
    "fail": "the drop test decided: a drop past the threshold, significant at the suite's level",
    "pass": "a drop of the design's size was ruled out",
    "precise": "the design's precision was reached",
    "clear": "the decision was clear (the interval of the delta lies on one side of −threshold)",
    "settled": "no case went on (each reached its share of the runs)",
    "budget": "the budget was reached",
    "failed": "a side failed",
    None: "after the first round",
}


def _signed(value: float, digits: int) -> str:
    shown = f"{abs(value):,.{digits}f}"
    if float(shown.replace(",", "")) == 0:
        return f"\N{PLUS-MINUS SIGN}{shown}"
    return ("+" if value > 0 else MINUS) + shown


def pct(value: float | None, digits: int = 1) -> Md:
    return Md(DASH if value is None else f"{value:.{digits}f}%")


def pts(value: float | None, digits: int = 1) -> Md:
    """A signed difference in points, with a true minus sign."""
    return Md(DASH if value is None else _signed(value, digits))


def num(value: float | None, digits: int = 0, signed: bool = False) -> Md:
    if value is None:
        return Md(DASH)
    if signed:
        return Md(_signed(value, digits))
    return Md(f"{value:,.{digits}f}")


def ms(value: float | None) -> Md:
    if value is None:
        return Md(DASH)
    return Md(f"{value / 1000:,.2f} s" if abs(value) >= 1000 else f"{value:,.0f} ms")


def usd(value: float | None, signed: bool = False, style: Style = MARKDOWN) -> Md:
    if value is None:
        return Md(DASH)
    digits = 2 if abs(value) >= 1 else 4
    body = style.dollars(f"${abs(value):,.{digits}f}")
    if not signed:
        return body
    sign = "+" if value > 0 else MINUS if value < 0 else "\N{PLUS-MINUS SIGN}"
    return Md(sign + body)


def p_value(value: float | None) -> Md:
    if value is None:
        return Md(DASH)
    if value < 0.001:
        return Md("< 0.001")
    return Md(f"{value:.3f}")


def fraction(value: float | None, repeats: int = 0) -> Md:
    """A pass fraction over repeats, e.g. `67% of 3`."""
    if value is None:
        return Md(DASH)
    runs = f" of {repeats}" if repeats > 1 else ""
    return Md(f"{value * 100:.0f}%{runs}")


def runs(side: SideCase | None) -> Md:
    """Runs of one side of a case that passed of the runs made, e.g. `2/3` (a `SideCase`)."""
    return Md(DASH if side is None else f"{side.passes}/{side.repeats}")


def runs_change(case: CaseChange) -> Md:
    """A case's runs on both sides, e.g. `2/3 → 0/3` (a `CaseChange`)."""
    return Md(f"{runs(case.base)} {ARROW} {runs(case.head)}")


def status(value: object) -> Md:
    """A case's outcome in words; what is not one (a template may pass anything) shows as its
    letters."""
    shown = next((words for known, words in STATUS.items() if known == value), None)
    return Md(shown if shown is not None else re.sub(r"[^a-z_]", "", str(value)))


def change(case: CaseChange) -> Md:
    """A case's outcome on base and on head, e.g. `pass → fail` (a `CaseChange`)."""
    base, head = case.statuses
    return Md(f"{status(base)} {ARROW} {status(head)}")


def plural(count: int, singular: str, plural_form: str | None = None) -> Md:
    word = singular if count == 1 else (plural_form or singular + "s")
    return Md(f"{count:,} {word}")


def short_sha(value: str | None) -> Md:
    if not value or not re.fullmatch(r"[0-9a-fA-F]{4,64}", value):
        return Md(DASH)
    return Md(value[:7])


def g(value: float | None) -> Md:
    """A setting as the user wrote it: `3`, `2.5`, `0.05`."""
    return Md(DASH if value is None else f"{value:g}")
