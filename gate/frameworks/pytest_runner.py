"""Runs pytest for one side, in the system's confined worker (`gate.frameworks.process`): the
gate's own module, a `python` system's target (`answer`) that imports nothing of the gate.
It lives as long as the side's runner: it collects the tests once, then runs the ones each
request names; pytest runs in this process, as `python -m pytest ARGS` from the run folder
would (the folder first on the import path).

Request: `args`, `config` (the pytest configuration file to use: the base's, `-c`), `ids`
(node ids to run, None: all collected), `repeats`, `list` (collect only). Answer:
`{"collected": [{id, file, line}], "marked": {id: reason}, "results": {id: [run, ...]},
"errors": [collection errors], "exit": code}` or `{"error": message}`. A run is
`{"outcome": pass|fail|error, "detail", "output", "duration"}`. What pytest's own terminal
says is kept apart (the tail of it names why a run stopped before any test).

The plugin runs each test `repeats` times in one session (`pytest_runtest_protocol`); tests
a `skip` or true `skipif` mark skips are left out of the suite (`marked`); pytest's cache is
off (`-p no:cacheprovider`), so nothing of an earlier run decides what runs.
"""

import os
import sys

RUN_FOLDER = os.path.realpath(os.getcwd())  # the worker runs in the run folder
_SEARCHED = list(sys.path)
# The worker put the run folder first on the import path to find this module: the gate's own
# imports below must not find the PR's modules of the same names (a `json.py`, a `_pytest/`).
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != RUN_FOLDER]

import contextlib  # noqa: E402
import io  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402
from _pytest.runner import runtestprotocol  # noqa: E402

try:  # not a public API: without it a marked test skips when it runs, an error, never a pass
    from _pytest.skipping import evaluate_skip_marks as skip_marks
except ImportError:  # a pytest that moved it
    skip_marks = None  # type: ignore[assignment]

sys.path[:] = _SEARCHED

STOPPED = {2: "interrupted", 3: "an internal error", 4: "a usage error in its arguments or options"}
OUTPUT_CHARS = 20_000
DETAIL_CHARS = 1_000
TERMINAL_TAIL = 600


def _message(report: Any) -> str:
    """A failed or skipped phase's reason: the crash line, else the whole text's end."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return str(crash.message)[:DETAIL_CHARS]
    return str(getattr(report, "longreprtext", "") or longrepr)[-DETAIL_CHARS:]


def outcome(reports: list[Any]) -> dict[str, Any]:
    """One run of a test from its setup, call and teardown reports: `pass`, `fail` (its
    assertion failed; an xfail test that failed as expected), or `error` (setup or teardown
    failed, or it skipped itself: nothing was measured)."""
    phases = {report.when: report for report in reports}
    setup, call, teardown = phases.get("setup"), phases.get("call"), phases.get("teardown")
    shown = call or setup
    output = (shown.capstdout + shown.capstderr) if shown is not None else ""
    run = {
        "output": output[-OUTPUT_CHARS:],
        "duration": sum(getattr(r, "duration", 0.0) for r in reports),
        "detail": "",
    }
    if setup is not None and setup.failed:
        return {**run, "outcome": "error", "detail": f"setup failed: {_message(setup)}"}
    if setup is not None and setup.skipped:
        return {**run, "outcome": "error", "detail": f"skipped: {_message(setup)}"}
    if call is None:
        return {**run, "outcome": "error", "detail": "the test did not run"}
    expected = getattr(call, "wasxfail", None)
    if call.skipped and expected is not None:
        return {**run, "outcome": "fail", "detail": f"expected failure (xfail): {expected}"}
    if call.skipped:
        return {**run, "outcome": "error", "detail": f"skipped: {_message(call)}"}
    if call.failed and "XPASS(strict)" not in str(call.longrepr):
        return {**run, "outcome": "fail", "detail": _message(call)}
    if teardown is not None and teardown.failed:
        return {**run, "outcome": "error", "detail": f"teardown failed: {_message(teardown)}"}
    return {**run, "outcome": "pass"}


class GatePlugin:
    """Selects the asked tests, runs each `repeats` times, keeps every run's outcome."""

    def __init__(self, request: dict[str, Any]) -> None:
        self.ids = set(request["ids"]) if request.get("ids") is not None else None
        self.repeats = int(request.get("repeats") or 1)
        self.collected: list[dict[str, Any]] = []
        self.marked: dict[str, str] = {}
        self.results: dict[str, list[dict[str, Any]]] = {}
        self.errors: list[str] = []

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(f"{report.nodeid or 'collection'}: {_message(report)}")

    def _kept(self, item: Any) -> bool:
        skipped = skip_marks(item) if skip_marks is not None else None
        if skipped is not None:
            self.marked[item.nodeid] = skipped.reason
            return False
        return self.ids is None or item.nodeid in self.ids

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session: Any, config: Any, items: list[Any]) -> None:
        kept = [item for item in items if self._kept(item)]
        chosen = {id(item) for item in kept}
        dropped = [item for item in items if id(item) not in chosen]
        items[:] = kept
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        for item in kept:
            path, line, _ = item.location
            self.collected.append({"id": item.nodeid, "file": path, "line": (line or 0) + 1})

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: Any, nextitem: Any) -> bool:
        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        for k in range(self.repeats):
            item._report_sections = []  # each run's own captured output
            last = k == self.repeats - 1
            reports = runtestprotocol(item, log=True, nextitem=nextitem if last else item.parent)
            self.results.setdefault(item.nodeid, []).append(outcome(reports))
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True


def run(request: dict[str, Any]) -> dict[str, Any]:
    plugin = GatePlugin(request)
    here = RUN_FOLDER
    args = [*request["args"], "-c", request["config"], "--rootdir", here, "--confcutdir", here]
    args += ["-p", "no:cacheprovider", "-p", "no:xdist", "-q", "-rN"]
    if request.get("list"):
        args.append("--collect-only")
    terminal = io.StringIO()
    with contextlib.redirect_stdout(terminal), contextlib.redirect_stderr(terminal):
        code = int(pytest.main(args, plugins=[plugin]))
    if code in STOPPED and not plugin.results and not plugin.errors:
        said = terminal.getvalue().strip()[-TERMINAL_TAIL:]
        return {
            "error": f"pytest stopped before any test ran: {STOPPED[code]} (exit {code})"
            + (f": {said}" if said else "")
        }
    return {
        "collected": plugin.collected,
        "marked": plugin.marked,
        "results": plugin.results,
        "errors": plugin.errors,
        "exit": code,
    }


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """One request of the side's runner (the worker calls it), answered whole."""
    if RUN_FOLDER not in sys.path[:1]:
        sys.path.insert(0, RUN_FOLDER)  # as `python -m pytest` from the run folder
    try:
        return run(request)
    except BaseException as exc:  # pytest's or the tests' failure, reported whole
        return {"error": f"{type(exc).__name__}: {exc}"[:2000]}
