"""The base's own `gate.yml`, read from the base commit.

It decides what the head may not: which suites have a baseline (a suite the base's config
lacks is new: the head runs alone; one the head's lacks was removed or renamed), what
measures them (`gate.flow.instrument`: the base's gate.yml, read again in its checkout), and
the policy that judges the PR (a PR cannot relax the gate that judges it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, JsonValue, TypeAdapter

from gate.compare.findings import Finding, HeadPolicyApplies, HeadPolicyChanges, PolicyChange
from gate.errors import InputError
from gate.flow.git import GitRepo
from gate.flow.git_files import commit_checkout
from gate.inputs.config import LoadedConfig, read_config
from gate.inputs.policy import Policy, PolicyKeys


@dataclass(frozen=True)
class Baseline:
    """What the base commit's gate.yml says; `relative` is the config's path in the repo
    (None: the config lives outside the repository, so both sides use the one given)."""

    relative: str | None
    loaded: LoadedConfig | None = None  # None: no gate.yml there, or it cannot be read
    problem: str | None = None  # why the base's gate.yml cannot be read

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

    def config_in(self, base_root: Path) -> Path | None:
        """The base's gate.yml in the base checkout, for the base side's `--system-config`."""
        return None if self.relative is None else base_root / self.relative


def read_baseline(repo: GitRepo, base_sha: str, head: LoadedConfig) -> Baseline:
    try:
        relative = head.path.resolve().relative_to(repo.root.resolve()).as_posix()
    except ValueError:
        return Baseline(relative=None, loaded=head)
    text = repo.file_at(base_sha, relative)
    if text is None:
        return Baseline(relative=relative)
    try:
        checkout = commit_checkout(repo, base_sha, relative)  # its promptfoo configs too
        loaded = read_config(text, Path(f"{relative} (base {base_sha[:12]})"), checkout)
    except InputError as exc:
        return Baseline(relative=relative, problem=str(exc))
    return Baseline(relative=relative, loaded=loaded)


def policy_source(baseline: Baseline, head: LoadedConfig) -> PolicyKeys:
    """The base's policy; the head's only where the base has no gate.yml."""
    return baseline.loaded.config if baseline.loaded is not None else head.config


def flow_policy(
    baseline: Baseline,
    head: LoadedConfig,
    *,
    threshold: float | None = None,
    block_severities: Sequence[str] | None = None,
) -> Policy:
    return Policy.from_config(
        policy_source(baseline, head), threshold=threshold, block_severities=block_severities
    )


def policy_findings(baseline: Baseline, head: LoadedConfig) -> list[Finding]:
    """Notes for the comment: the head's policy changes, or whose policy applies."""
    if baseline.shared or baseline.problem:  # a broken base config: its side's error says why
        return []
    if baseline.loaded is None:
        return [HeadPolicyApplies()]
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
