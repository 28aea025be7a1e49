"""What a PR flow is asked to do, in parts that say what they hold.

`gate check` (`gate.flow.pr.run_check`) and the Action (`gate.github.action`) each build one
`FlowRequest`; `gate.flow.plan.plan_flow` turns it into the flow's plan once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from gate.flow.git import GitRepo
from gate.inputs.config import LoadedConfig
from gate.inputs.policy import Severity


@dataclass(frozen=True)
class Revisions:
    """The repository and the two revisions compared."""

    repo: GitRepo
    base_sha: str
    head_sha: str | None = None  # None: the working tree (gate check)
    fetch: bool = False  # fetch what a shallow clone lacks (the Action's checkout)


@dataclass(frozen=True)
class PolicyOverrides:
    """The command line's or the Action's explicit overrides of the base's policy: they may
    only tighten it (`gate.flow.overrides`). `enforce` False: a fail does not block (the
    Action's `fail-on-regression: false`), which the comment says."""

    threshold: float | None = None
    block_severities: tuple[Severity, ...] | None = None
    enforce: bool = True


@dataclass(frozen=True)
class FlowIO:
    """Where the flow writes and what it reads from its surroundings."""

    out_dir: Path  # the reports, one folder per suite
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    stream: TextIO = field(default_factory=lambda: sys.stderr)  # the runs' progress
    heldout_detail: Path | None = None  # a folder for full held-out reports (never uploaded)
    use_cache: bool = True  # False: fresh answers, the response cache neither read nor written


@dataclass(frozen=True)
class FlowRequest:
    """One PR flow: what it compares, by which config, where it writes.

    `config` is the head's gate.yml (its suites' systems, the triggers; what measures and the
    policy come from the base's, see `gate.flow.baseline` and `gate.flow.instrument`);
    `config_at` is its path in the repository as the workflow (or `gate check -c`) names it,
    where the base's is read (None: a config outside the repository serves both sides).
    `labels` are the PR's labels (the accept label turns a fail into a pass).
    """

    revisions: Revisions
    config: LoadedConfig
    config_at: str | None
    io: FlowIO
    overrides: PolicyOverrides = field(default_factory=PolicyOverrides)
    labels: tuple[str, ...] = ()
