"""`pytest:` suites: the tests pytest selects, run on a side, each node id a case.

pytest runs in the system's confinement (`gate.frameworks.process`, `pytest_runner`) in the
side's run folder, with the measuring checkout's pytest configuration (`-c`: a PR's edit to
`pytest.ini` or `[tool.pytest.ini_options]` does not change what measures it). Tests pair by
node id, parametrized ids included. A run passes or fails as its test did; setup or teardown
failures and skips the test or its fixtures raise are errors (nothing was measured, and a
system that skips its own failing tests cannot pass them); an xfail test counts as what it
measures: failing as expected is a fail, passing (XPASS) a pass. Tests a `skip` or true
`skipif` mark skips are not cases at all (the report's meta names them). A test's captured
output is the case's output; its assertion message the failed check's detail.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from gate.frameworks.instrument import pytest_config
from gate.frameworks.overlay import scratch_folder
from gate.frameworks.process import FrameworkError, run_confined, runner_env
from gate.frameworks.results import FrameworkRun, missing_attempts, start_of
from gate.inputs.cases import Case
from gate.inputs.framework_suites import PytestSuite
from gate.inputs.shard import Shard
from gate.report.models import Attempt, CheckResult, truncate_output

EMPTY_CONFIG = "[pytest]\n"


def _config(scratch: Path, config_root: Path, settings: PytestSuite) -> Path:
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
    settings: PytestSuite,
    run_dir: Path,
    config_root: Path,
    environ: Mapping[str, str],
    request: dict[str, Any],
) -> dict[str, Any]:
    with scratch_folder() as scratch:
        request = {
            **request,
            "args": settings.args,
            "config": str(_config(scratch, config_root, settings)),
        }
        env = runner_env(environ, {})
        answer = run_confined(
            "pytest_runner", request, run_dir, env, settings.timeout_s, "pytest.args"
        )
    if "error" in answer:
        raise FrameworkError(f"pytest could not run {' '.join(settings.args)}: {answer['error']}")
    if answer.get("errors"):
        errors = [str(e) for e in answer["errors"]]
        raise FrameworkError(f"pytest could not collect the tests: {'; '.join(errors)[:1500]}")
    return answer


def _cases(answer: dict[str, Any]) -> list[Case]:
    cases = []
    for test in answer.get("collected", []):
        file = str(test.get("file", ""))
        task = PurePosixPath(file).stem or "tests"
        cases.append(Case(id=str(test["id"]), task=task, file=file, line=int(test.get("line", 0))))
    return cases


def list_tests(
    settings: PytestSuite, run_dir: Path, config_root: Path, environ: Mapping[str, str]
) -> list[Case]:
    """The selected tests as cases (collected, nothing run)."""
    return _cases(_answer(settings, run_dir, config_root, environ, {"list": True}))


def run_pytest(
    settings: PytestSuite,
    run_dir: Path,
    config_root: Path,
    ids: Sequence[str] | None,
    repeats: int,
    environ: Mapping[str, str],
    *,
    start: int | Mapping[str, int] = 0,
    shard: Shard | None = None,
) -> FrameworkRun:
    """Each selected test (`ids`: only these; `shard`: of those, its own) `repeats` times."""
    request = {
        "ids": list(ids) if ids is not None else None,
        "repeats": repeats,
        "shard": [shard.index, shard.total] if shard else None,
    }
    answer = _answer(settings, run_dir, config_root, environ, request)
    cases = _cases(answer)
    results = answer.get("results", {})
    attempts: dict[str, list[Attempt]] = {}
    for case in cases:
        first = start_of(start, case.id)
        runs = results.get(case.id) if isinstance(results, dict) else None
        if not isinstance(runs, list) or len(runs) != repeats:
            why = "pytest left no result for this test (the run ended early?)"
            attempts[case.id] = missing_attempts(case.id, first, repeats, why)
            continue
        attempts[case.id] = [pytest_attempt(run, first + k) for k, run in enumerate(runs)]
    notes = {str(k): str(v) for k, v in (answer.get("marked") or {}).items()}
    return FrameworkRun(cases, attempts, notes)


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
        return Attempt(status="pass", checks=[CheckResult(name="test", passed=True)], **base)
    if outcome == "fail":
        check = CheckResult(name="test", passed=False, detail=detail[:500])
        return Attempt(status="fail", checks=[check], **base)
    return Attempt(status="error", error=detail[:2000] or "the test did not run", **base)
