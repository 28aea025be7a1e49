"""The PR flow: changed files -> which suites to run -> base and head runs -> verdicts.

Both sides use the head's config and cases; each side's system reads that side's own files.
A side is `gate run` in its own Python process (`-P`, so the checkout's folder is never put on
the import path by accident): a `python` system imports a module of the same name from two
checkouts, which one process cannot hold. The two sides of a suite run at the same time and
share the response cache; their progress is streamed with the side as prefix.

`gate check` and `gate demo` call `run_check`; `gate action` calls `run_flow` with what the
GitHub event names (see `gate.commands.action`). The flow's steps (`plan_suites`, `run_planned`,
`judge`, `outcomes`) are shared with the sharded modes of the action (`gate.sharded`).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict

from gate.compare import EXIT_CODES, Comparison, Policy, compare, skipped_comparison
from gate.config import (
    AnthropicSystem,
    CommandSystem,
    LoadedConfig,
    OpenAISystem,
    PythonSystem,
    ReplaySystem,
    SuiteConfig,
    load_config,
)
from gate.errors import InputError
from gate.gitops import FileChange, GitRepo, watched
from gate.render import RenderContext, render_comment, render_summary
from gate.report import Report, RunMeta, read_report
from gate.shard import Shard

SIDES = ("base", "head")
TAIL_LINES = 20
VERDICT_ORDER = ("error", "fail", "pass", "skipped")
# Never handed to the code under test: the gate's own credentials and the runner's.
SCRUBBED = re.compile(r"^(INPUT_.*|ACTIONS_.*|GITHUB_TOKEN|GH_TOKEN|GH_ENTERPRISE_TOKEN)$")


@dataclass(frozen=True)
class SuiteOutcome:
    """One suite of the flow: its comparison and the rendered comment and summary."""

    suite: str
    comparison: Comparison
    markdown: str
    summary: str
    changes: tuple[str, ...] = ()
    reports: dict[str, Path] = field(default_factory=dict)

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as `(suite, comparison, markdown)`."""
        return iter((self.suite, self.comparison, self.markdown))


@dataclass
class FlowRequest:
    repo: GitRepo
    config: LoadedConfig
    base_sha: str
    head_sha: str | None  # None: the working tree (gate check)
    out_dir: Path
    fetch: bool = False
    threshold: float | None = None
    block_severities: list[str] | None = None
    repository: str | None = None
    server_url: str = "https://github.com"
    display_head_sha: str | None = None
    run_url: str | None = None
    report_hint: str | None = None
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    stream: TextIO = field(default_factory=lambda: sys.stderr)


# --- what a suite depends on ---------------------------------------------------------------


def _repo_relative(path: Path, root: Path) -> str | None:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return None


def _model_config_system_file(path: Path, root: Path) -> list[str]:
    """A model config may name a system-prompt file (`system:`); that file matters too."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return []
    system = data.get("system") if isinstance(data, dict) else None
    if not isinstance(system, str) or "\n" in system:
        return []
    for candidate in (root / system, path.parent / system):
        if candidate.is_file():
            return [p for p in [_repo_relative(candidate, root)] if p]
    return []


def system_files(suite: SuiteConfig, root: Path) -> list[str]:
    """The system's own files in the checkout, as repo-relative paths or globs."""
    system = suite.system
    if isinstance(system, OpenAISystem | AnthropicSystem):
        files = [system.prompt, system.model_config_file]
        return files + _model_config_system_file(root / system.model_config_file, root)
    if isinstance(system, PythonSystem):
        module = system.target.partition(":")[0].replace(".", "/")
        return [f"{module}.py", f"{module}/__init__.py"]
    if isinstance(system, ReplaySystem):
        return [system.file]
    if isinstance(system, CommandSystem) and "/" in system.command[0]:
        return [system.command[0]]
    return []


def suite_triggers(loaded: LoadedConfig, suite: SuiteConfig, root: Path) -> list[str]:
    """Globs (repo-relative) whose change makes the suite run: `watch` (global and the
    suite's), gate.yml itself, the suite's case files and the system's own files."""
    config_dir = _repo_relative(loaded.base_dir, root) or ""
    prefix = f"{config_dir}/" if config_dir not in ("", ".") else ""
    cases = [suite.cases] if isinstance(suite.cases, str) else list(suite.cases)
    patterns = [*loaded.config.watch, *suite.watch]
    patterns += [p for p in [_repo_relative(loaded.path, root)] if p]
    patterns += [prefix + c.removeprefix("./") for c in cases]
    patterns += [f.removeprefix("./") for f in system_files(suite, root)]
    patterns += [f"{p.strip('/')}/**" for p in loaded.config.sandbox.pythonpath]
    return list(dict.fromkeys(patterns))


def relevant_changes(changes: Sequence[FileChange], patterns: Sequence[str]) -> list[FileChange]:
    return [c for c in changes if any(watched(p, patterns) for p in c.paths)]


def exit_on_sigterm() -> None:
    """A cancelled job or a killed `gate check` still stops the runs and removes the base
    worktree: SIGTERM becomes SystemExit, which runs every `finally` on the way out."""
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))


def combined_verdict(outcomes: Sequence[SuiteOutcome]) -> str:
    verdicts = {o.comparison.verdict for o in outcomes}
    return next((v for v in VERDICT_ORDER if v in verdicts), "skipped")


def exit_code(outcomes: Sequence[SuiteOutcome]) -> int:
    return EXIT_CODES[combined_verdict(outcomes)]


# --- running the sides -----------------------------------------------------------------------


class SideStatus(BaseModel):
    """How one side's `gate run` ended (in the sharded mode: one side of one shard)."""

    model_config = ConfigDict(frozen=True)

    side: Literal["base", "head"]
    returncode: int | None = None  # None: it never came to an end
    error: str | None = None  # the run's last error line, when it failed
    shard: str | None = None  # `I/N` in the sharded mode

    @property
    def who(self) -> str:
        return f"the {self.side} side" + (f" of shard {self.shard}" if self.shard else "")

    @property
    def input_error(self) -> bool:
        return self.returncode == InputError.exit_code

    @property
    def fatal(self) -> bool:
        """A failure that makes the other side's run pointless. A base that cannot run its
        input (the PR brings the system in) is not: the head is still judged on its own."""
        return self.returncode not in (0, None) and not (self.side == "base" and self.input_error)


@dataclass
class Side:
    name: str
    root: Path
    report: Path  # OUT/LABEL.jsonl
    returncode: int | None = None
    tail: deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))

    @property
    def error_line(self) -> str:
        for line in reversed(self.tail):
            if line.startswith("gate: error: "):
                return line.removeprefix("gate: error: ")
        return self.tail[-1] if self.tail else "no output"

    def status(self, shard: Shard | None = None) -> SideStatus:
        failed = self.returncode not in (0, None)
        return SideStatus.model_validate(
            {
                "side": self.name,
                "returncode": self.returncode,
                "error": self.error_line if failed else None,
                "shard": str(shard) if shard else None,
            }
        )


def side_env(environ: Mapping[str, str], cache_dir: str) -> dict[str, str]:
    env = {k: v for k, v in environ.items() if not SCRUBBED.match(k)}
    env["GATE_CACHE_DIR"] = cache_dir
    env["PYTHONUNBUFFERED"] = "1"
    return env


def default_cache_dir(environ: Mapping[str, str]) -> str:
    if environ.get("GATE_CACHE_DIR"):
        return environ["GATE_CACHE_DIR"]
    base = environ.get("XDG_CACHE_HOME") or str(
        Path(environ.get("HOME", "~")).expanduser() / ".cache"
    )
    return str(Path(base) / "eval-gate")


def _stream(process: subprocess.Popen[str], side: Side, out: TextIO, lock: threading.Lock) -> None:
    assert process.stdout is not None
    for raw in process.stdout:
        line = raw.rstrip("\n")
        side.tail.append(line)
        shown = line if line.startswith(f"[{side.name}]") else f"[{side.name}] {line}"
        with lock:
            out.write(shown + "\n")
            out.flush()


def run_sides(
    sides: Sequence[Side],
    config: Path,
    suite: str,
    env: Mapping[str, str],
    out: TextIO,
    *,
    shard: Shard | None = None,
) -> None:
    """`gate run` for each side at once (only `shard` of the suite when given); a fatal failure
    of one stops the others."""
    lock = threading.Lock()
    procs: list[tuple[Side, subprocess.Popen[str], threading.Thread]] = []
    try:
        for side in sides:
            argv = [
                sys.executable, "-P", "-m", "gate", "run", "-c", str(config), "--suite", suite,
                "--root", str(side.root), "--out", str(side.report.parent),
                "--label", side.report.stem, *(["--shard", str(shard)] if shard else []),
            ]  # fmt: skip
            proc = subprocess.Popen(
                argv,
                cwd=side.root,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                start_new_session=True,
            )
            thread = threading.Thread(target=_stream, args=(proc, side, out, lock), daemon=True)
            thread.start()
            procs.append((side, proc, thread))
        pending = list(procs)
        while pending:
            for item in list(pending):
                side, proc, thread = item
                try:
                    side.returncode = proc.wait(timeout=0.1)
                except subprocess.TimeoutExpired:
                    continue
                thread.join()
                pending.remove(item)
                if side.status().fatal:
                    for _, other, _ in pending:
                        _kill(other)
    finally:
        for _, proc, thread in procs:
            if proc.poll() is None:
                _kill(proc)
            thread.join(timeout=5)


def _kill(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# --- judging what the sides left ---------------------------------------------------------------


@dataclass(frozen=True)
class SuiteRun:
    """What the sides of a suite left: how each run ended (one per side, or per side and
    shard) and where each side's whole report is."""

    statuses: tuple[SideStatus, ...]
    reports: dict[str, Path]


def failed_comparison(statuses: Sequence[SideStatus], suite: str) -> Comparison | None:
    """The error verdict when a side failed for good; None when a comparison can be made."""
    head_input = next((s for s in statuses if s.side == "head" and s.input_error), None)
    if head_input is not None:  # the head's configuration is the user's to fix
        raise InputError(head_input.error or "the head's configuration cannot run")
    failed = [s for s in statuses if s.fatal]
    if not failed:
        return None
    first = [s for s in failed if s.returncode and s.returncode > 0] or failed
    reasons = [f"{s.who} could not run (exit {s.returncode}): {s.error}" for s in first]
    return Comparison(verdict="error", reasons=reasons, suite=suite)


def unrunnable_base(statuses: Sequence[SideStatus]) -> SideStatus | None:
    """The base run that could not take the head's configuration, if any."""
    return next((s for s in statuses if s.side == "base" and s.returncode != 0), None)


def _base_report(run: SuiteRun, suite: str) -> tuple[Report, list[str]]:
    """The base's report; an empty one (every case counts as added) when the base checkout
    lacks what the head's config needs."""
    base = unrunnable_base(run.statuses)
    if base is None:
        return read_report(run.reports["base"], fold_attempts=True), []
    note = (
        f"the base could not run the head's configuration ({base.error}); "
        "its cases count as added, so only the head's own failures can fail this PR"
    )
    empty = Report(meta=RunMeta(label="base", suite=suite), results=[], path=run.reports["base"])
    return empty, [note]


def judge(run: SuiteRun, suite: str, policy: Policy) -> Comparison:
    failed = failed_comparison(run.statuses, suite)
    if failed is not None:
        return failed
    base, notes = _base_report(run, suite)
    comparison = compare(base, read_report(run.reports["head"], fold_attempts=True), policy)
    return comparison.model_copy(update={"notes": notes + comparison.notes})


# --- the flow --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SuitePlan:
    """Whether a suite runs: the changes that touch it, or why it is skipped."""

    name: str
    changes: tuple[FileChange, ...]
    skip_reason: str | None

    @property
    def runs(self) -> bool:
        return self.skip_reason is None


Judged = tuple[Comparison, dict[str, Path]]
T = TypeVar("T")


def suite_folder(name: str) -> str:
    """The suite's folder under the reports folder (suite names may hold any character)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def shard_name(shard: Shard) -> str:
    return f"shard-{shard.index}-of-{shard.total}"


def report_label(side: str, shard: Shard | None) -> str:
    """`base`, or `base.shard-2-of-4` for a shard: distinct per shard, so the folders of all
    shard jobs can be joined into one (download-artifact's `merge-multiple`)."""
    return f"{side}.{shard_name(shard)}" if shard else side


def _render(request: FlowRequest, comparison: Comparison, suite: str) -> tuple[str, str]:
    config = request.config
    templates = config.base_dir / config.config.templates if config.config.templates else None
    ctx = RenderContext(
        suite=suite,
        repository=request.repository,
        server_url=request.server_url,
        head_sha=request.display_head_sha or request.head_sha,
        base_sha=request.base_sha,
        run_url=request.run_url,
        report_hint=request.report_hint,
        template_dir=templates.resolve() if templates else None,
    )
    return render_comment(comparison, ctx), render_summary(comparison, ctx)


def _skip_reason(changes: Sequence[FileChange], patterns: Sequence[str]) -> str:
    shown = ", ".join(f"`{p}`" for p in patterns[:8]) + (" …" if len(patterns) > 8 else "")
    if not changes:
        return "no file changed between the base and the head"
    return f"no watched file changed ({len(changes)} changed; watching {shown})"


def _changes(request: FlowRequest) -> list[FileChange]:
    repo = request.repo
    since = repo.merge_base(request.base_sha, request.head_sha or "HEAD", fetch=request.fetch)
    changes = repo.changed_files(since, request.head_sha)
    out_rel = _repo_relative(request.out_dir, repo.root)
    if out_rel:  # our own reports are never a change (gate check runs in the working tree)
        changes = [c for c in changes if not any(p.startswith(out_rel + "/") for p in c.paths)]
    return changes


def plan_suites(request: FlowRequest) -> list[SuitePlan]:
    """Change detection: which suites run (every mode decides this the same way)."""
    changes = _changes(request)
    plans = []
    for suite in request.config.config.suites:
        patterns = suite_triggers(request.config, suite, request.repo.root)
        relevant = relevant_changes(changes, patterns)
        skip = None if relevant else _skip_reason(changes, patterns)
        plans.append(SuitePlan(suite.name, tuple(relevant), skip))
    return plans


def flow_policy(request: FlowRequest) -> Policy:
    return Policy.from_config(
        request.config.config,
        threshold=request.threshold,
        block_severities=request.block_severities,
    )


def run_planned(
    request: FlowRequest,
    plans: Sequence[SuitePlan],
    then: Callable[[SuitePlan, SuiteRun], T],
    *,
    shard: Shard | None = None,
) -> dict[str, T]:
    """Run both sides (or `shard` of them) of every suite that needs it, in one base worktree;
    `then` takes each suite's runs as they end, so a bad head config stops at the first suite."""
    runnable = [p for p in plans if p.runs]
    if not runnable:
        return {}
    with request.repo.worktree(request.base_sha) as base_root:
        env = side_env(request.repo.subprocess_env(), default_cache_dir(request.environ))
        return {
            plan.name: then(plan, _run_suite(request, plan.name, base_root, env, shard))
            for plan in runnable
        }


def _run_suite(
    request: FlowRequest,
    suite: str,
    base_root: Path,
    env: Mapping[str, str],
    shard: Shard | None,
) -> SuiteRun:
    folder = request.out_dir.resolve() / suite_folder(suite)
    roots = {"base": base_root, "head": request.repo.root}
    sides = [Side(n, roots[n], folder / f"{report_label(n, shard)}.jsonl") for n in SIDES]
    what = f"shard {shard} of base and head" if shard else "base and head"
    print(f"[gate] suite {suite}: running {what}", file=request.stream, flush=True)
    run_sides(sides, request.config.path, suite, env, request.stream, shard=shard)
    return SuiteRun(tuple(s.status(shard) for s in sides), {s.name: s.report for s in sides})


def outcomes(
    request: FlowRequest, plans: Sequence[SuitePlan], judged: Mapping[str, Judged]
) -> list[SuiteOutcome]:
    """Every suite's verdict rendered as its comment and job summary; skipped ones too."""
    result = []
    for plan in plans:
        if plan.runs:
            comparison, reports = judged[plan.name]
        else:
            comparison, reports = skipped_comparison(plan.skip_reason or "", suite=plan.name), {}
        markdown, summary = _render(request, comparison, plan.name)
        changed = tuple(str(c) for c in plan.changes)
        result.append(SuiteOutcome(plan.name, comparison, markdown, summary, changed, reports))
    return result


def run_flow(request: FlowRequest) -> list[SuiteOutcome]:
    """Decide per suite whether it runs, run base and head where needed, compare, render."""
    plans = plan_suites(request)
    policy = flow_policy(request)

    def judged(plan: SuitePlan, run: SuiteRun) -> Judged:
        return judge(run, plan.name, policy), run.reports

    return outcomes(request, plans, run_planned(request, plans, judged))


# --- gate check ------------------------------------------------------------------------------


def run_check(
    repo: Path,
    config: Path,
    base_ref: str | None,
    out_dir: Path,
    *,
    threshold: float | None = None,
    block_severities: list[str] | None = None,
    stream: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
) -> list[SuiteOutcome]:
    """The PR flow on a local repository: the working tree against `base_ref` (default: the
    remote's default branch). Nothing is fetched or posted."""
    env = dict(os.environ if environ is None else environ)
    git_repo = GitRepo(repo, environ=env)
    try:
        loaded = load_config(config)
        base_sha = git_repo.resolve_ref(base_ref or git_repo.default_base(), fetch=False)
        request = FlowRequest(
            repo=git_repo,
            config=loaded,
            base_sha=base_sha,
            head_sha=None,
            out_dir=out_dir,
            threshold=threshold,
            block_severities=block_severities,
            display_head_sha=git_repo.head_sha(),
            report_hint=str(out_dir),
            environ=env,
            stream=stream or sys.stderr,
        )
        return run_flow(request)
    finally:
        git_repo.close()
