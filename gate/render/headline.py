"""The comment's first lines: the verdict with its headline numbers, and the context line
(cases compared, the commits, where the full report is, what `repeats: auto` spent).

Pure; written in the output's `Style`.
"""

from __future__ import annotations

from gate.compare.budgets import cost_change_shown
from gate.compare.findings import Accepted
from gate.compare.models import Comparison, Verdict
from gate.render import values
from gate.render.links import RenderContext, safe_url, sha_link
from gate.render.markdown import Md
from gate.render.reasons import WordedComparison, words
from gate.render.style import Style

ICONS: dict[Verdict, str] = {
    "pass": "✅",
    "fail": "❌",
    "inconclusive": "❔",
    "error": "⚠️",
    "skipped": "⏭️",
}


def headline_parts(c: Comparison) -> list[Md]:
    parts = []
    if c.regressions:
        parts.append(values.plural(len(c.regressions), "regression"))
    if c.blocker_failures:
        parts.append(values.plural(len(c.blocker_failures), "blocker"))
    if c.errors:
        parts.append(values.plural(len(c.errors), "error"))
    if c.fixes:
        parts.append(values.plural(len(c.fixes), "fix", "fixes"))
    if c.needs_review:
        parts.append(Md(f"{len(c.needs_review):,} to review"))
    if c.flaky:
        parts.append(Md(f"{len(c.flaky):,} flaky"))
    cost = cost_change_shown(c.base_usage, c.head_usage, c.policy.budgets) if c.paired else None
    if cost is not None:
        parts.append(Md(f"cost {values.pts(cost, 0)}%"))
    return parts


def delta_digits(c: Comparison) -> int:
    """Digits that keep the delta honest next to the threshold: a drop of 3.03 points reads
    "−3.03 pts, threshold 3", not "−3.0 pts, threshold 3" (which reads as within it)."""
    delta, threshold = c.delta_points, c.policy.threshold
    if delta is None or abs(delta) == threshold:
        return 1
    return 2 if round(abs(delta), 1) == threshold else 1


def accepted_by(c: Comparison) -> str | None:
    """The label that accepted a fail, when one did."""
    return next((f.label for f in c.findings if isinstance(f, Accepted)), None)


def reason_headline(c: Comparison) -> bool:
    """Nothing was compared (skipped, a side could not run, a suite the PR removed): the
    reason is the headline."""
    return c.verdict == "skipped" or not c.head.n


def headline(c: WordedComparison, style: Style, reason_chars: int) -> Md:
    """`❌ **Eval Gate: fail** (suite) — pass rate 92.0% → 85.3% (−6.7 pts, threshold 3) · …`"""
    suite = f" ({style.text(c.suite, 60)})" if c.suite != "default" else ""
    label = accepted_by(c)
    if label is not None:
        suite += Md(f" · accepted by the label {style.code(label, 60)}")
    parts = "".join(f" · {part}" for part in headline_parts(c))
    if reason_headline(c):
        said = style.prose(c.reasons[0] if c.reasons else "nothing to compare", reason_chars)
    elif c.delta_points is None:
        why = "this suite is new, so there is no baseline" if c.base_meta is None else None
        said = Md(
            f"{why or 'no case ran on both sides'}; head pass rate "
            f"{values.pct(c.head.pass_rate)}{parts}"
        )
    else:
        said = Md(
            f"pass rate {values.pct(c.base_pass_rate)} → {values.pct(c.head_pass_rate)} "
            f"({values.pts(c.delta_points, delta_digits(c))} pts, threshold "
            f"{values.g(c.policy.threshold)}){parts}"
        )
    return Md(f"{ICONS[c.verdict]} {style.strong(f'Eval Gate: {c.verdict}')}{suite} — {said}")


def auto_line(c: Comparison) -> Md | None:
    """repeats: auto: how many calls each side made (over the paired cases, as the usage
    table counts them: right for merged shards too), and why the gate stopped."""
    head = c.head_meta.auto if c.head_meta else None
    if not head or not c.base_meta or not c.base_meta.auto or not c.paired:
        return None
    base_calls, head_calls = c.base_usage.calls, c.head_usage.calls
    rounds = head.rounds
    return Md(
        f"repeats auto: base {base_calls:,} calls, head {head_calls:,} "
        f"({(base_calls + head_calls) / (2 * c.paired):.1f} per case and side) in "
        f"{1 + rounds} round{'s' if rounds else ''}; stopped: {values.STOPPED[head.stop]}"
    )


def context_line(c: Comparison, ctx: RenderContext, style: Style) -> Md | None:
    """`N cases compared · head <sha> vs base <sha> · full report …`; None: nothing ran."""
    if not (c.paired or c.head.n or c.base.n):
        return None
    apart = [f"{len(c.added_by_pr):,} added by this PR"] if c.added_by_pr else []
    if c.added or c.removed:
        apart += [f"{len(c.added):,} added", f"{len(c.removed):,} removed"]
    unpaired = f" ({', '.join(apart)}, not in the delta)" if apart else ""
    head = sha_link(ctx.head_sha or (c.head_meta.git_sha if c.head_meta else None), ctx, style)
    base = sha_link(ctx.base_sha or (c.base_meta.git_sha if c.base_meta else None), ctx, style)
    parts = [Md(f"{c.paired:,} cases compared{unpaired}"), Md(f"head {head} vs base {base}")]
    report_url = safe_url(ctx.run_url)
    if report_url:
        parts.append(style.destination(Md("full report"), report_url))
    elif ctx.report_hint:
        parts.append(Md(f"full report: {style.code(ctx.report_hint, 200)}"))
    auto = auto_line(c)
    if auto:
        parts.append(auto)
    return Md(" · ".join(parts))


def terminal_line(c: Comparison) -> str:
    """The one line `gate check` ends a suite with: its verdict and what decided it."""
    if reason_headline(c):  # skipped, or nothing ran: the reason says it
        return f"{c.verdict}: {'; '.join(words(c).reasons)}"
    label = accepted_by(c)
    accepted = f" (a fail, accepted by the label {label!r})" if label else ""
    if c.delta_points is None:
        why = "a new suite, no baseline" if c.base_meta is None else "no case ran on both sides"
        return (
            f"{c.verdict}: {why}; head passed {c.head.passed}/{c.head.n} "
            f"({values.pct(c.head.pass_rate)}){accepted}"
        )
    return (
        f"{c.verdict}: pass rate {values.pct(c.base_pass_rate)} -> "
        f"{values.pct(c.head_pass_rate)} ({values.pts(c.delta_points)} points), "
        f"{len(c.regressions)} regressions, {len(c.fixes)} fixes{accepted}"
    )
