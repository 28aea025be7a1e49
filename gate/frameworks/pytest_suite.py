"""`pytest:` suites: the tests pytest selects, run on a side, each node id a case.

pytest runs in the system's confinement (`gate.frameworks.process`, `pytest_runner`) in the
side's run folder, one process for the side, with the measuring checkout's pytest configuration
(`-c`: a PR's edit to `pytest.ini` or `[tool.pytest.ini_options]` does not change what measures
it). Tests pair by
node id, parametrized ids included. A run passes or fails as its test did; setup or teardown
failures and skips the test or its fixtures raise are errors (nothing was measured, and a
system that skips its own failing tests cannot pass them); an xfail test counts as what it
measures: failing as expected is a fail, passing (XPASS) a pass. Tests a `skip` or true
`skipif` mark skips are not cases at all (the report's meta names them). A test's captured
output is the case's output; its assertion message the failed check's detail.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from gate.frameworks.checks import outcome_check
from gate.frameworks.instrument import pytest_config
from gate.frameworks.process import FrameworkError, FrameworkProcess
from gate.frameworks.results import Listing, Runs, completed
from gate.inputs.cases import Case
from gate.inputs.framework_suites import PytestSuite
from gate.report.models import Attempt, truncate_output

EMPTY_CONFIG = "[pytest]\n"


def measuring_config(scratch: Path, config_root: Path, settings: PytestSuite) -> Path:
    """The measuring checkout's pytest configuration, copied where the run cannot edit it;
    an empty one when it has none (the run's own would apply otherwise)."""
    found = pytest_config(config_root, settings.paths)
    folder = scratch / "config"
    folder.mkdir(mode=0o755)
    if found is None:
        path = folder / "pytest.ini"
        path.write_text(EMPTY_CONFIG, encoding="utf-8")
    else:
        path = folder / PurePosixPath(found[0]).name
        path.write_bytes((config_root / found[0]).read_bytes())
    path.chmod(0o644)
    return path


def _answer(
    process: FrameworkProcess, settings: PytestSuite, config: Path, request: dict[str, Any]
) -> dict[str, Any]:
    request = {**request, "args": settings.args, "config": str(config)}
    answer = process.call(request, settings.timeout_s)
    if "error" in answer:
        raise FrameworkError(f"pytest could not run {' '.join(settings.args)}: {answer['error']}")
    if answer.get("errors"):
        errors = [str(e) for e in answer["errors"]]
        raise FrameworkError(f"pytest could not collect the tests: {'; '.join(errors)[:1500]}")
    return answer


def list_tests(process: FrameworkProcess, settings: PytestSuite, config: Path) -> Listing:
    """The selected tests as cases (collected, nothing run), and the ones their marks skip."""
    answer = _answer(process, settings, config, {"list": True})
    cases = []
    for test in answer.get("collected", []):
        file = str(test.get("file", ""))
        task = PurePosixPath(file).stem or "tests"
        cases.append(Case(id=str(test["id"]), task=task, file=file, line=int(test.get("line", 0))))
    notes = {str(k): str(v) for k, v in (answer.get("marked") or {}).items()}
    return Listing(cases, notes)


def run_pytest(
    process: FrameworkProcess,
    settings: PytestSuite,
    config: Path,
    starts: Mapping[str, int],
    repeats: int,
) -> Runs:
    """Each test `starts` names `repeats` times, numbered from its start."""
    answer = _answer(process, settings, config, {"ids": list(starts), "repeats": repeats})
    results = answer.get("results", {})
    found: dict[str, list[Attempt]] = {}
    for key, first in starts.items():
        runs = results.get(key) if isinstance(results, dict) else None
        if isinstance(runs, list) and len(runs) == repeats:
            found[key] = [pytest_attempt(run, first + k) for k, run in enumerate(runs)]
    return completed(found, starts, repeats, "pytest left no result for this test")


def pytest_attempt(run: dict[str, Any], repeat: int) -> Attempt:
    """One run of a test as a run of its case."""
    outcome = run.get("outcome")
    detail = str(run.get("detail") or "")
    base: dict[str, Any] = {
        "repeat": repeat,
        "output": truncate_output(str(run.get("output") or "")) or None,
        "latency_ms": round(float(run.get("duration") or 0.0) * 1000, 3),
    }
    if outcome == "pass":
        return Attempt(status="pass", checks=[outcome_check(True)], **base)
    if outcome == "fail":
        return Attempt(status="fail", checks=[outcome_check(False, detail)], **base)
    return Attempt(status="error", error=detail[:2000] or "the test did not run", **base)
