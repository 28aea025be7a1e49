"""What the head changes in one suite's instrument: the base's gate.yml and cases against the
head's, as findings (`gate.compare.instrument_findings`).

Cases are compared by id (removed, added, edited: expectations, input, task, an agent's
tools, turns and simulated user; severities; held-out), the gate.yml blocks that measure key by
key (`cases:`, `watch`, `prices`, the judge, the simulated user, the sandbox's limits, the
comment templates, the `system` block), and the code of the
`expect.python` checks file by file. The comment templates and the checks' code are read from
each side's checkout; everything else is data already loaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, JsonValue, TypeAdapter

from gate.compare.findings import (
    AnswersReplayed,
    CaseFilesChanged,
    CasesAdded,
    CasesEdited,
    CasesRemoved,
    CheckCodeChanged,
    Finding,
    HeldoutChanged,
    JudgeChanged,
    PricesChanged,
    SandboxLimitsChanged,
    SeveritiesChanged,
    SimulatedUserChanged,
    SystemChanged,
    TemplatesChanged,
    WatchNarrowed,
)
from gate.compare.instrument_findings import CaseField, KeyChange, PriceChange, SeverityChange
from gate.inputs.cases import Case
from gate.inputs.config import (
    JudgeConfig,
    LoadedConfig,
    ReplaySystem,
    SandboxConfig,
    SuiteConfig,
)
from gate.inputs.paths import relative_posix

CASE_FIELDS: tuple[CaseField, ...] = ("expect", "input", "task", "agent")
OWN_SANDBOX_KEYS = {"pythonpath", "prelude"}  # each side's own SDK, not a limit that measures
# The kinds whose change can change an outcome: the head's instrument is asked about those.
JUDGING = (
    CasesRemoved,
    CasesAdded,
    CasesEdited,
    SeveritiesChanged,
    CaseFilesChanged,
    PricesChanged,
    JudgeChanged,
    SimulatedUserChanged,
    SandboxLimitsChanged,
    CheckCodeChanged,
)
_JSON: TypeAdapter[JsonValue] = TypeAdapter(JsonValue)


@dataclass(frozen=True)
class SuiteDefinition:
    """One side's definition of the suite: its gate.yml, its suite, its cases, its checkout."""

    loaded: LoadedConfig
    suite: SuiteConfig
    cases: Sequence[Case]
    root: Path


def case_changes(
    base: Sequence[Case], head: Sequence[Case], unjudged: Sequence[str]
) -> list[Finding]:
    """Cases removed, added, edited, re-graded and un-held-out, by id."""
    before, after = {c.id: c for c in base}, {c.id: c for c in head}
    both = [i for i in before if i in after]
    found: list[Finding] = []
    removed = [i for i in before if i not in after]
    if removed:
        found.append(CasesRemoved(ids=removed))
    added = [i for i in after if i not in before]
    if added:
        found.append(CasesAdded(ids=added, unjudged=[i for i in added if i in set(unjudged)]))
    for field in CASE_FIELDS:
        ids = [i for i in both if getattr(before[i], field) != getattr(after[i], field)]
        if ids:
            found.append(CasesEdited(field=field, ids=ids))
    severities = [
        SeverityChange(id=i, base=before[i].severity, head=after[i].severity)
        for i in both
        if before[i].severity != after[i].severity
    ]
    if severities:
        found.append(SeveritiesChanged(changes=severities))
    shown = [i for i in both if before[i].heldout and not after[i].heldout]
    hidden = [i for i in both if after[i].heldout and not before[i].heldout]
    if shown or hidden:
        found.append(HeldoutChanged(shown=shown, hidden=hidden))
    return found


def _patterns(side: SuiteDefinition) -> list[str]:
    return [*side.loaded.config.watch, *side.suite.watch]


def _spec(suite: SuiteConfig) -> list[str]:
    """Where the suite's cases come from: its `cases:`, or its promptfoo config."""
    if suite.promptfoo is not None:
        return [suite.promptfoo]
    return [suite.cases] if isinstance(suite.cases, str) else list(suite.cases or [])


def _dumped(model: BaseModel | None, skip: set[str]) -> dict[str, JsonValue]:
    if model is None:
        return {}
    data = model.model_dump(mode="json", by_alias=True, exclude=skip)
    return {k: _JSON.validate_python(v) for k, v in data.items()}


def _key_changes(base: dict[str, JsonValue], head: dict[str, JsonValue]) -> list[KeyChange]:
    return [
        KeyChange(key=key, base=base.get(key), head=head.get(key))
        for key in sorted(set(base) | set(head))
        if base.get(key) != head.get(key)
    ]


def _judge(judge: JudgeConfig | None, key: str = "judge") -> dict[str, JsonValue]:
    """A model block's keys (the judge's, the simulated user's); of its headers only the names
    (a value may be a secret)."""
    if judge is None:
        return {key: None}
    names: list[JsonValue] = [*sorted(judge.headers)]
    return {**_dumped(judge, {"headers"}), "headers": names}


def _system(side: SuiteDefinition) -> dict[str, JsonValue]:
    """The system block's keys; of its headers only the names (a value may be a secret), a
    promptfoo config by its path in the side's checkout (it is read as an absolute path)."""
    system = side.suite.system
    headers: dict[str, str] = getattr(system, "headers", {})
    names: list[JsonValue] = [*sorted(headers)]
    data = {**_dumped(system, {"headers"}), **({"headers": names} if headers else {})}
    config = data.get("config")
    if system.kind == "promptfoo" and isinstance(config, str):
        data["config"] = relative_posix(Path(config), side.root) or config
    return data


def _sandbox(sandbox: SandboxConfig) -> dict[str, JsonValue]:
    return _dumped(sandbox, OWN_SANDBOX_KEYS)


def config_changes(base: SuiteDefinition, head: SuiteDefinition) -> list[Finding]:
    """The measuring blocks of gate.yml that differ: `cases:`, `watch`, `prices`, the judge,
    the sandbox's limits, the `system` block (its kind, or where it points)."""
    found: list[Finding] = []
    if _spec(base.suite) != _spec(head.suite):
        found.append(CaseFilesChanged(base=_spec(base.suite), head=_spec(head.suite)))
    watch_base, watch_head = _patterns(base), _patterns(head)
    removed = [p for p in watch_base if not p.startswith("!") and p not in watch_head]
    excluded = [p for p in watch_head if p.startswith("!") and p not in watch_base]
    if removed or excluded:
        found.append(WatchNarrowed(removed=removed, excluded=excluded))
    prices_base = {m: p.model_dump() for m, p in base.loaded.config.prices.items()}
    prices_head = {m: p.model_dump() for m, p in head.loaded.config.prices.items()}
    prices = [
        PriceChange(model=m, base=prices_base.get(m), head=prices_head.get(m))
        for m in sorted(set(prices_base) | set(prices_head))
        if prices_base.get(m) != prices_head.get(m)
    ]
    if prices:
        found.append(PricesChanged(changes=prices))
    judge = _key_changes(_judge(base.loaded.config.judge), _judge(head.loaded.config.judge))
    if judge:
        found.append(JudgeChanged(changes=judge))
    users = (base.loaded.config.simulated_user, head.loaded.config.simulated_user)
    user = _key_changes(_judge(users[0], "simulated_user"), _judge(users[1], "simulated_user"))
    if user:
        found.append(SimulatedUserChanged(changes=user))
    limits = _key_changes(
        _sandbox(base.loaded.config.sandbox), _sandbox(head.loaded.config.sandbox)
    )
    if limits:
        found.append(SandboxLimitsChanged(changes=limits))
    system = _key_changes(_system(base), _system(head))
    if system:
        found.append(SystemChanged(changes=system))
    found += replayed(base, head)
    return found


def replayed(base: SuiteDefinition, head: SuiteDefinition) -> list[Finding]:
    """A head that reads recorded answers (`replay`) where the base asks a system: it fails,
    whatever the answers say (they are the PR's own)."""
    system = head.suite.system
    if not isinstance(system, ReplaySystem) or base.suite.system.kind == "replay":
        return []
    return [AnswersReplayed(base_kind=base.suite.system.kind, file=system.file)]


def _files_below(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _template_folder(side: SuiteDefinition) -> Path | None:
    templates = side.loaded.config.templates
    return side.loaded.base_dir / templates if templates else None


def template_changes(base: SuiteDefinition, head: SuiteDefinition) -> list[Finding]:
    """The comment templates: another folder, or other files in it."""
    folders = _template_folder(base), _template_folder(head)
    roots = base.root, head.root
    shown = [relative_posix(f, r) if f else None for f, r in zip(folders, roots, strict=True)]
    before, after = (_files_below(f) if f else {} for f in folders)
    files = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    if shown[0] == shown[1] and not files:
        return []
    return [TemplatesChanged(base=shown[0], head=shown[1], files=files)]


def _module_files(side: SuiteDefinition, module: str) -> dict[str, bytes]:
    """A check module's file, found where the sandbox finds it (the pythonpath, the root)."""
    parts = module.split(".")
    folders = [side.root / entry for entry in side.loaded.config.sandbox.pythonpath]
    for folder in [*folders, side.root]:
        module_path = folder.joinpath(*parts)
        for path in (module_path.with_suffix(".py"), module_path / "__init__.py"):
            if path.is_file():
                return {relative_posix(path, side.root) or str(path): path.read_bytes()}
    return {}


def check_code_changes(base: SuiteDefinition, head: SuiteDefinition) -> list[Finding]:
    """The files of the `expect.python` modules both sides' cases name, where they differ."""
    modules = sorted(
        {t.partition(":")[0] for c in (*base.cases, *head.cases) for t in c.expect.python}
    )
    before: dict[str, bytes] = {}
    after: dict[str, bytes] = {}
    for module in modules:
        before |= _module_files(base, module)
        after |= _module_files(head, module)
    files = sorted(n for n in set(before) | set(after) if before.get(n) != after.get(n))
    return [CheckCodeChanged(files=files)] if files else []


def instrument_changes(
    base: SuiteDefinition, head: SuiteDefinition, unjudged: Sequence[str] = ()
) -> list[Finding]:
    """Every change the head makes to the suite's instrument, in the comment's order."""
    return [
        *case_changes(base.cases, head.cases, unjudged),
        *config_changes(base, head),
        *check_code_changes(base, head),
        *template_changes(base, head),
    ]


def changes_judging(changes: Sequence[Finding]) -> bool:
    """Whether a change may change an outcome (so the head's own instrument is asked)."""
    return any(isinstance(change, JUDGING) for change in changes)
