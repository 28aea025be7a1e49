"""The PR's one comment: its verdict on top, then one section per suite.

The comment starts with the PR's hidden marker (how the Action finds it again and edits it in
place) and the PR's verdict line, the gate's own. With one suite the rest is that suite's
section as `gate compare` shows it. With several, a line per suite says how each ended, then
each suite that has something to show gets its section (its verdict line and body); a suite
that was skipped, or passed with nothing changed, is its line only. Every section gets an
equal share of what GitHub allows (65,536 characters), so the whole always fits. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from gate.compare.instrument_findings import INSTRUMENT_KINDS
from gate.compare.models import VERDICT_ORDER, Comparison, Verdict
from gate.render import COMMENT_MAX_CHARS, render_section, utf16_length
from gate.render.headline import ICONS, accepted_by, headline_parts, terminal_line
from gate.render.links import RenderContext
from gate.render.markdown import Md, code, prose, text
from gate.render.reasons import words
from gate.render.values import pct, pts

PR_MARKER = "<!-- eval-gate -->"
RULE = "\n\n---\n\n"
BAD = ("error", "fail", "inconclusive")


def pr_verdict(comparisons: Sequence[Comparison]) -> Verdict:
    """The PR's verdict: the worst of its suites' (an error, then a fail, ...)."""
    verdicts = {c.verdict for c in comparisons}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def quiet(c: Comparison) -> bool:
    """Nothing to show beyond one line: skipped, or a pass that changed no case's outcome,
    nothing of the instrument, and no number a reader would look at twice."""
    if c.verdict == "skipped":
        return True
    if c.verdict != "pass" or c.delta_points not in (0, 0.0):
        return False
    changed = c.regressions or c.fixes or c.errors or c.flaky or c.needs_review
    measured = any(isinstance(f, INSTRUMENT_KINDS) for f in c.findings)
    return not changed and not measured and not c.blocker_failures


def suite_line(c: Comparison) -> Md:
    """`❌ **support**: fail — pass rate 100.0% → 87.5% (−12.5 pts) · 5 regressions`."""
    name = text(c.suite, 80)
    said = words(c)
    if c.verdict == "skipped" or not c.head.n:
        why = prose(said.reasons[0] if said.reasons else "nothing to compare", 300)
        return Md(f"{ICONS[c.verdict]} **{name}**: {c.verdict} — {why}")
    if c.delta_points is None:
        rates = f"a new suite: head {pct(c.head.pass_rate)} ({c.head.passed}/{c.head.n})"
    else:
        rates = (
            f"pass rate {pct(c.base_pass_rate)} → {pct(c.head_pass_rate)} "
            f"({pts(c.delta_points)} pts)"
        )
    parts = "".join(f" · {part}" for part in headline_parts(c))
    extra = "" if parts or not quiet(c) else " · nothing changed"
    label = accepted_by(c)
    if label is not None:
        extra += f" · accepted by the label {code(label, 60)}"
    return Md(f"{ICONS[c.verdict]} **{name}**: {c.verdict} — {rates}{parts}{extra}")


def _tally(comparisons: Sequence[Comparison], name: Callable[[str], str]) -> str:
    """`3 suites: 1 fail (support), 1 pass, 1 skipped`."""
    by_verdict: dict[str, list[str]] = {}
    for c in comparisons:
        by_verdict.setdefault(c.verdict, []).append(c.suite)
    said = []
    for verdict in VERDICT_ORDER:
        names = by_verdict.get(verdict, [])
        if not names:
            continue
        listed = ", ".join(name(n) for n in names[:4]) + (" …" if len(names) > 4 else "")
        said.append(f"{len(names)} {verdict}" + (f" ({listed})" if verdict in BAD else ""))
    return f"{len(comparisons)} suites: " + ", ".join(said)


def pr_headline(comparisons: Sequence[Comparison]) -> Md:
    """`❌ **Eval Gate: fail** — 3 suites: 1 fail (support), 1 pass, 1 skipped`."""
    verdict = pr_verdict(comparisons)
    tally = _tally(comparisons, lambda n: str(text(n, 40)))
    return Md(f"{ICONS[verdict]} **Eval Gate: {verdict}** — {tally}")


def plain_headline(comparisons: Sequence[Comparison]) -> str:
    """The PR's verdict line for a terminal."""
    return f"Eval Gate: {pr_verdict(comparisons)} — {_tally(comparisons, lambda n: n[:40])}"


def terminal_suite_line(c: Comparison) -> str:
    """A suite's line for a terminal: its verdict and what decided it."""
    return f"{c.suite}: {terminal_line(c)}"


def render_pr_comment(
    comparisons: Sequence[Comparison],
    ctx: RenderContext,
    *,
    max_chars: int = COMMENT_MAX_CHARS,
) -> str:
    """The PR's comment (see the module doc), at most `max_chars` characters."""
    if len(comparisons) == 1:
        (only,) = comparisons
        at = ctx.model_copy(update={"suite": only.suite})
        return render_section(only, at, max_chars=max_chars, top=f"{PR_MARKER}\n")
    top = f"{PR_MARKER}\n{pr_headline(comparisons)}\n\n"
    top += "\n".join(f"- {suite_line(c)}" for c in comparisons) + "\n"
    shown = [c for c in comparisons if not quiet(c)]
    if not shown:
        return top
    share = (max_chars - utf16_length(top) - len(RULE) * len(shown)) // len(shown)
    sections = [_section(c, ctx, share, before) for c, before in _diff_once(shown)]
    return top + "".join(RULE + section for section in sections)


def _section(c: Comparison, ctx: RenderContext, share: int, diff_under: str | None) -> str:
    """A suite's section; `diff_under`: the suite whose section shows the same change to
    the system, which this one names instead of showing it again."""
    note = ""
    if diff_under is not None:
        c = c.model_copy(update={"system_diff": None})
        note = f"\n_The PR's change to the system is shown under {text(diff_under, 60)}._\n"
    at = ctx.model_copy(update={"suite": c.suite})
    return render_section(c, at, max_chars=share - len(note)).rstrip("\n") + "\n" + note


def _diff_once(shown: Sequence[Comparison]) -> list[tuple[Comparison, str | None]]:
    """Each suite, with the suite whose section already shows the same change to the system
    (suites that share a prompt share its diff: it is shown once)."""
    first: dict[str, str] = {}
    paired = []
    for c in shown:
        key = c.system_diff.model_dump_json() if c.system_diff is not None else None
        paired.append((c, first.get(key) if key is not None else None))
        if key is not None:
            first.setdefault(key, c.suite)
    return paired
