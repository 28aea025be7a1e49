"""`gate check --plan`: what the flow would run, as a short table or as JSON."""

from __future__ import annotations

from gate.flow.preview import FlowPreview, SuitePreview
from gate.render.reasons import sentence


def plan_json(shown: FlowPreview) -> str:
    return shown.model_dump_json(indent=2) + "\n"


def plan_table(shown: FlowPreview) -> str:
    """A short table for a terminal: per suite whether it runs, its cases, its budget, each
    side's checkout and system; then why, and what the PR changes in its instrument."""
    lines = [
        f"base {shown.base[:12]}, head {shown.head[:12]}; config {shown.config or '(outside)'}; "
        f"threshold {shown.threshold:g} points; response cache {shown.cache}",
        "",
        f"{'suite':24} {'runs':5} {'cases':>7} {'budget':26} sides",
    ]
    for suite in shown.suites:
        lines += _suite_lines(suite)
    return "\n".join(lines) + "\n"


def _budget(suite: SuitePreview) -> str:
    b = suite.budget
    if b is None:
        return ""
    if b.repeats == "auto":
        return f"auto: {b.first_round} first, ≤{b.max_calls_per_case:g} calls/case"
    return f"{b.repeats} run{'s' if b.repeats != 1 else ''} a case"


def _suite_lines(suite: SuitePreview) -> list[str]:
    count = "at run" if suite.cases is None else str(suite.cases)
    cases = (count + (f"+{suite.added}" if suite.added else "")) if suite.runs else ""
    sides = "; ".join(f"{s.side} {s.checkout}: {s.system}" for s in suite.sides)
    runs = "yes" if suite.runs else "no"
    lines = [f"{suite.name[:24]:24} {runs:5} {cases:>7} {_budget(suite):26} {sides}".rstrip()]
    indent = " " * 25
    if suite.runs:
        lines.append(f"{indent}measured by {suite.instrument}; {suite.why}")
    else:
        lines.append(f"{indent}{suite.why}")
    if suite.problem is not None:
        lines.append(f"{indent}cannot measure: {sentence(suite.problem)}")
    lines += [f"{indent}instrument change: {sentence(c)}" for c in suite.instrument_changes]
    return lines
