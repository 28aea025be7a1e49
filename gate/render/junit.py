"""JUnit XML of a comparison, for test-report tooling.

One `<testcase>` per case the comparison names (regressions, fixes, failures, errors, ...)
plus one for the gate's own verdict; head failures are `<failure>`, head errors `<error>`,
`needs_review` is `<skipped>`. Cases passing on both sides are counted in the suite's
properties, not listed. Held-out cases carry no detail.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gate.compare.models import CaseChange, Comparison
from gate.render.reasons import WordedComparison, worded
from gate.render.values import STATUS

# XML 1.0 forbids most control characters even when escaped.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(value: object) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", str(value))


def _describe(case: CaseChange) -> str:
    base, head = case.statuses
    change = f"{STATUS[base]} -> {STATUS[head]}"
    if case.heldout:
        return f"{change} (held out)"
    shown = case.shown
    lines = [change]
    lines += [f"{check.name}: {check.detail}".rstrip(": ") for check in shown.failed_checks]
    lines += [f"{check.name}: needs review" for check in shown.review_checks]
    if case.head is not None and case.head.error:
        lines.append(f"error: {case.head.error}")
    if shown.output:
        lines.append("output (excerpt):\n" + shown.output)
    return "\n".join(lines)


def _testcase(case: CaseChange, suite: str) -> ET.Element:
    element = ET.Element(
        "testcase",
        classname=_clean(f"{suite}.{'heldout' if case.heldout else case.task}"),
        name=_clean(case.id),
    )
    if not case.heldout and case.file:
        element.set("file", _clean(case.file))
        element.set("line", str(case.line))
    detail = _clean(_describe(case))
    base, head = case.statuses
    if head == "fail":
        kind = "regression" if base == "pass" else "failure"
        failure = ET.SubElement(element, "failure", type=kind, message=detail.split("\n")[0])
        failure.text = detail
    elif head == "error":
        error = ET.SubElement(element, "error", type="error", message=detail.split("\n")[0])
        error.text = detail
    elif head == "needs_review":
        ET.SubElement(element, "skipped", message="needs review")
    elif head is None:
        ET.SubElement(element, "skipped", message="removed: only in the base report")
    else:
        out = ET.SubElement(element, "system-out")
        out.text = detail
    return element


def _verdict_case(c: WordedComparison) -> ET.Element:
    element = ET.Element("testcase", classname=_clean(f"{c.suite}.gate"), name="verdict")
    reasons = _clean("\n".join(c.reasons))
    if c.verdict == "fail":
        ET.SubElement(
            element, "failure", type="verdict", message=_clean(c.reasons[0])
        ).text = reasons
    elif c.verdict == "error":
        ET.SubElement(element, "error", type="verdict", message=_clean(c.reasons[0])).text = reasons
    elif c.verdict == "inconclusive" and c.exit_code:  # `inconclusive: block`
        ET.SubElement(
            element, "failure", type="inconclusive", message=_clean(c.reasons[0])
        ).text = reasons
    elif c.verdict in ("skipped", "inconclusive"):
        ET.SubElement(element, "skipped", message=reasons)
    return element


def render_junit(comparison: Comparison) -> str:
    c = worded(comparison)
    cases = [_verdict_case(c)] + [
        _testcase(case, c.suite) for case in sorted(c.cases.values(), key=lambda x: x.index)
    ]
    failures = sum(1 for e in cases if e.find("failure") is not None)
    errors = sum(1 for e in cases if e.find("error") is not None)
    skipped = sum(1 for e in cases if e.find("skipped") is not None)
    suite = ET.Element(
        "testsuite",
        name=_clean(c.suite),
        tests=str(len(cases)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", c.verdict),
        ("base_pass_rate", c.base_pass_rate),
        ("head_pass_rate", c.head_pass_rate),
        ("delta_points", c.delta_points),
        ("p_value", c.p_value),
        ("paired_cases", c.paired),
        ("passing_on_both_sides", c.statistics.counts.both_pass if c.statistics else 0),
    ):
        ET.SubElement(properties, "property", name=name, value="" if value is None else str(value))
    suite.extend(cases)
    root = ET.Element(
        "testsuites",
        name="eval-gate",
        tests=suite.get("tests", "0"),
        failures=str(failures),
        errors=str(errors),
    )
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
