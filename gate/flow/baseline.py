"""The base's own `gate.yml`, read from the base commit.

It decides what the head may not: which suites have a baseline (a suite the base's config
lacks is new: the head runs alone; one the head's lacks was removed or renamed), what
measures them (`gate.flow.instrument`: the base's gate.yml, read again in its checkout), and
the policy that judges the PR (a PR cannot relax the gate that judges it).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, JsonValue, TypeAdapter

from gate.compare.findings import Finding, HeadPolicyApplies, HeadPolicyChanges, PolicyChange
from gate.errors import InputError
from gate.flow.git import GitRepo
from gate.flow.git_files import commit_checkout
from gate.flow.overrides import tightened
from gate.flow.request import PolicyOverrides
from gate.inputs.config import LoadedConfig, read_config
from gate.inputs.policy import Policy, PolicyKeys

DEFAULT_CONFIG = "gate.yml"  # the config's path when none is named


@dataclass(frozen=True)
class Baseline:
    """What the base commit's gate.yml says; `relative` is the config's path in the repo
    (None: the config lives outside the repository, so both sides use the one given). Read
    from the commit's objects, it stands where the base checkout will put it (`root`)."""

    relative: str | None
    loaded: LoadedConfig | None = None  # None: no gate.yml there, or it cannot be read
    problem: str | None = None  # why the base's gate.yml cannot be read
    root: Path | None = None  # where the base commit is checked out (`GitRepo.worktree`)

    @property
    def shared(self) -> bool:
        return self.relative is None

    def has_suite(self, name: str) -> bool:
        if self.shared or self.problem:
            return True  # a shared config has every suite; a broken one errs when run
        return self.loaded is not None and any(s.name == name for s in self.loaded.config.suites)

    @property
    def suites(self) -> list[str]:
        """The base's own suites (none when it shares the head's config or has none)."""
        if self.shared or self.loaded is None:
            return []
        return [s.name for s in self.loaded.config.suites]


def config_path(repo_root: Path, named: Path) -> str | None:
    """The config's path in the repository as it is named (`gate check -c`, the Action's
    `config`), symlinks not followed: a PR that makes the file a link elsewhere does not move
    where the base's is read. None: it lies outside the repository."""
    absolute = Path(os.path.abspath(named))
    for folder in absolute.parents:
        if folder.resolve() == repo_root.resolve():
            relative = absolute.relative_to(folder).as_posix()
            return None if relative.startswith("../") else relative
    return None


def read_baseline(
    repo: GitRepo, base_sha: str, relative: str | None, head: LoadedConfig, root: Path
) -> Baseline:
    """The base commit's gate.yml at `relative` (a link there followed inside the commit's
    tree), parsed once, as it lies in the base checkout `root`; `head` when the config lies
    outside the repository."""
    if relative is None:
        return Baseline(relative=None, loaded=head)
    found = repo.blob_path(base_sha, relative)
    text = repo.file_at(base_sha, found) if found is not None else None
    if found is None or text is None:
        return Baseline(relative=relative, root=root)
    shown = f"{found} (base {base_sha[:12]})"
    try:
        checkout = commit_checkout(repo, base_sha, found)  # its promptfoo configs too
        loaded = read_config(text, root / found, checkout)
    except InputError as exc:
        where = InputError(exc.message, file=shown, line=exc.line, key=exc.key)
        return Baseline(relative=relative, problem=str(where), root=root)
    return Baseline(relative=found, loaded=loaded, root=root)


def policy_source(baseline: Baseline, head: LoadedConfig) -> PolicyKeys:
    """The base's policy; the head's only where the base has no gate.yml."""
    return baseline.loaded.config if baseline.loaded is not None else head.config


def flow_policy(
    baseline: Baseline, head: LoadedConfig, overrides: PolicyOverrides | None = None
) -> tuple[Policy, list[Finding]]:
    """The policy that judges the PR (the base's, tightened by the overrides) and the notes
    on the overrides it did not apply as given."""
    return tightened(policy_source(baseline, head), overrides or PolicyOverrides())


def policy_findings(baseline: Baseline, head: LoadedConfig) -> list[Finding]:
    """Notes for the comment: the head's policy changes, or whose policy applies."""
    if baseline.shared or baseline.problem:  # a broken base config: its side's error says why
        return []
    if baseline.loaded is None:
        moved = baseline.relative if baseline.relative != DEFAULT_CONFIG else None
        return [HeadPolicyApplies(config=moved)]
    base = Policy.from_config(baseline.loaded.config)
    changed = base.differences(head.config)
    if not changed:
        return []
    changes = [
        PolicyChange(key=key, base=_value(old), head=_value(new))
        for key, (old, new) in changed.items()
    ]
    return [HeadPolicyChanges(changes=changes)]


_JSON: TypeAdapter[JsonValue] = TypeAdapter(JsonValue)


def _value(value: object) -> JsonValue:
    """A policy value as data (budgets: only the keys that are set)."""
    if isinstance(value, BaseModel):
        return _JSON.validate_python(value.model_dump(exclude_none=True))
    return _JSON.validate_python(value)
