"""From what the zygote saw to named check results. Pure: no I/O.

A check passes only on an authentic frame that says so, in the one order the harness writes
them. A missing frame is a failure that says why it is missing (timeout, signal, early exit,
forged data). Hidden-test values are compared with `eq` here, in the gate's own process.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from typing import Any, Literal

from gate.errors import CheckInfraError
from gate.inputs.expect import HiddenTest
from gate.report.checks import CheckResult, CodeTestResult, PlainResult
from gate.sandbox.protocol import plain
from gate.sandbox.protocol.messages import Job, Outcome

SHOWN = 160


@dataclass
class Evidence:
    """The frames of one execution that decide checks, accepted in protocol order only (the
    others, such as `import` and `done`, only have to arrive in their place)."""

    compile: tuple[bool, str] | None = None
    imported: tuple[bool, str] | None = None
    check: list[Any] | None = None
    calls: list[list[Any]] = field(default_factory=list)
    tests: dict[str, tuple[bool, str]] = field(default_factory=dict)
    clean: bool | None = None  # None: the tamper check never reported
    tampered: str = ""
    problem: str | None = None


def _expected_kinds(job: Job) -> list[tuple[str, Any]]:
    if job.kind == "check":
        return [("ready", None), ("import", None), ("check", None), ("clean", None), ("done", None)]
    steps: list[tuple[str, Any]] = [("ready", None), ("compile", None), ("import", None)]
    steps += [("call", index) for index in range(len(job.calls))]
    if job.test_code is not None:
        steps.append(("tests", None))
        steps += [("test", name) for name in job.tests]
    steps += [("clean", None), ("done", None)]
    return steps


def read_evidence(job: Job, records: list[list[Any]]) -> Evidence:
    evidence = Evidence()
    steps = _expected_kinds(job)
    for position, record in enumerate(records):
        if position >= len(steps) or not _fits(record, steps[position]):
            evidence.problem = "the evidence arrived out of order (duplicated or forged frames)"
            break
        kind = record[0]
        if kind == "compile":
            evidence.compile = (bool(record[1]), str(record[2]))
        elif kind == "import":
            evidence.imported = (bool(record[1]), str(record[2]))
        elif kind == "check":
            evidence.check = record
        elif kind == "call":
            evidence.calls.append(record)
        elif kind == "test":
            evidence.tests[record[1]] = (bool(record[2]), str(record[3]))
        elif kind == "clean":
            evidence.tampered = str(record[1])
            evidence.clean = not evidence.tampered
    return evidence


def _fits(record: list[Any], step: tuple[str, Any]) -> bool:
    kind, key = step
    sizes = {
        "ready": 1,
        "compile": 3,
        "import": 3,
        "call": 8,
        "check": 7,
        "tests": 3,
        "test": 4,
        "clean": 2,
        "done": 2,
    }
    if not record or record[0] != kind or len(record) != sizes[kind]:
        return False
    return key is None or record[1] == key


def why_missing(outcome: Outcome, evidence: Evidence, timeout_s: float, cpu_s: int) -> str:
    """Why the execution stopped before reporting everything."""
    problem = outcome.evidence_error or evidence.problem
    if problem:
        return problem
    if outcome.timed_out:
        return f"timed out after {timeout_s:g} s"
    if outcome.signal is not None:
        return _signal_reason(outcome.signal, cpu_s, outcome.cpu_s)
    if "MemoryError" in outcome.stderr:
        return "ran out of memory"
    if outcome.exit_code == 0:
        return "the process exited before the harness finished (exit(), os._exit() or a kill)"
    if outcome.exit_code and outcome.cpu_s >= cpu_s * 0.8:
        # without a PID namespace the job is no init: SIGXCPU reaches the harness, which exits
        return f"CPU time limit of {cpu_s} s exceeded"
    return f"the process exited with code {outcome.exit_code} before the harness finished"


def _signal_reason(number: int, cpu_s: int, used_s: float) -> str:
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = f"signal {number}"
    # soft = hard CPU limit: the kernel kills with SIGKILL; its accounting lags a little
    if name == "SIGXCPU" or (name == "SIGKILL" and used_s >= cpu_s * 0.8):
        return f"CPU time limit of {cpu_s} s exceeded"
    if name == "SIGSEGV":
        return "crashed with SIGSEGV (for example a stack overflow from deep recursion)"
    if name == "SIGKILL":
        return "killed by SIGKILL (a resource limit, or something killed the process)"
    return f"killed by {name}"


def _short(text: str) -> str:
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def _output_note(outcome: Outcome, limit_kb: int) -> str:
    notes = []
    for stream, size in (("stdout", outcome.stdout_bytes), ("stderr", outcome.stderr_bytes)):
        if size > limit_kb * 1024:
            notes.append(f"{stream} exceeded the {limit_kb} KB output limit ({size} bytes)")
    tail = "".join(c if c.isprintable() else "?" for c in outcome.stderr.strip()[-200:])
    if tail:
        notes.append(f"stderr: {tail}")
    return "; ".join(notes)


def _test(kind: Literal["test", "hidden"], test: str, passed: bool, detail: str = "",
          **values: str) -> CodeTestResult:  # fmt: skip
    name = f"{kind}:{test}"
    return CodeTestResult(kind=kind, name=name, passed=passed, detail=detail, test=test, **values)


def _hidden(test: HiddenTest, record: list[Any] | None, missing: str) -> CodeTestResult:
    if record is None:
        return _test("hidden", test.call, False, f"no evidence: {missing}")
    _, _, ok, is_plain, value, type_name, shown, error = record
    if not ok:
        return _test("hidden", test.call, False, error)
    if not is_plain:
        detail = f"returned a {type_name}, not plain data (comparable with JSON): {shown}"
        return _test("hidden", test.call, False, _short(detail))
    got = plain.decode(value)
    if plain.matches(got, test.eq):
        return _test("hidden", test.call, True)
    expected, actual = _short(repr(test.eq)), _short(repr(got))
    detail = f"expected {expected}, got {actual}"
    return _test("hidden", test.call, False, detail, expected=expected, actual=actual)


def _confirmed(result: CodeTestResult, evidence: Evidence, missing: str) -> CodeTestResult:
    """A pass stands only if the tamper check after it found everything intact."""
    if not result.passed or evidence.clean:
        return result
    if evidence.clean is False:
        detail = f"passed, but {evidence.tampered}"
    else:
        detail = f"passed, but the run ended before the harness confirmed it ({missing})"
    return result.model_copy(update={"passed": False, "detail": detail})


def checks(
    job: Job,
    hidden: list[HiddenTest],
    outcome: Outcome,
    *,
    timeout_s: float,
    cpu_s: int,
    output_kb: int,
) -> list[CheckResult]:
    """The case's code checks: `compile`, `hidden:<call>` and `test:<name>`, in that order."""
    evidence = read_evidence(job, outcome.records)
    missing = why_missing(outcome, evidence, timeout_s, cpu_s)
    note = _output_note(outcome, output_kb)
    if note:
        missing = f"{missing}; {note}"
    results: list[CheckResult] = []
    if job.must_compile:
        ok, error = evidence.compile or (False, f"no evidence: {missing}")
        results.append(PlainResult(kind="compile", name="compile", passed=ok, detail=error))
    for index, test in enumerate(hidden):
        record = evidence.calls[index] if index < len(evidence.calls) else None
        results.append(_confirmed(_hidden(test, record, missing), evidence, missing))
    for name in job.tests:
        passed, detail = evidence.tests.get(name) or (False, f"no evidence: {missing}")
        results.append(_confirmed(_test("test", name, passed, detail), evidence, missing))
    return results


def check_value(job: Job, outcome: Outcome, *, timeout_s: float, cpu_s: int, output_kb: int) -> Any:
    """What the team's check returned, as plain data: only an authentic `check` frame that
    the tamper check confirmed counts. Anything else raises `CheckInfraError` saying why."""
    evidence = read_evidence(job, outcome.records)
    missing = why_missing(outcome, evidence, timeout_s, cpu_s)
    if evidence.imported is not None and not evidence.imported[0]:
        raise CheckInfraError(f"cannot import it: {evidence.imported[1]}")
    if evidence.check is None:
        tail = _output_note(outcome, output_kb)
        raise CheckInfraError(f"no answer: {missing}" + (f"; {tail}" if tail else ""))
    _, ok, is_plain, value, _type, shown, error = evidence.check
    if not ok:
        raise CheckInfraError(f"raised {error}")
    if not is_plain:
        raise CheckInfraError(f"returned a value that is not plain data ({_short(str(shown))})")
    if evidence.clean is False:
        raise CheckInfraError(f"returned, but {evidence.tampered}")
    if not evidence.clean:
        ended = f"the run ended before the harness confirmed it ({missing})"
        raise CheckInfraError(f"returned, but {ended}")
    return plain.decode(value)
