"""Which system a side runs: its own.

In the PR flow both sides are measured with the base's cases, checks, judge and prices, but
each runs its own system under test: the head side gets the head's `gate.yml` as
`system_config`, whose suite of the same name supplies the `system` block and the team's SDK
(`sandbox.pythonpath`, `sandbox.prelude`). The sandbox's limits measure, so they stay the
measuring config's (the base's) for both sides.
"""

from __future__ import annotations

from gate.errors import InputError
from gate.inputs.config import LoadedConfig, SandboxConfig, SuiteConfig


def own_suite(measuring: LoadedConfig, own: LoadedConfig | None, name: str | None) -> SuiteConfig:
    """The suite, as the side's own config defines it (its `system` is what runs)."""
    suite = measuring.config.suite(name)
    if own is None:
        return suite
    for candidate in own.config.suites:
        if candidate.name == suite.name:
            return candidate
    raise InputError(
        f"suite {suite.name!r} is not in this side's config, so this side has no system for it",
        file=own.path,
        key="suites",
    )


def own_sandbox(measuring: LoadedConfig, own: LoadedConfig | None) -> SandboxConfig:
    """The measuring config's sandbox limits with the side's own SDK on the import path."""
    limits = measuring.config.sandbox
    if own is None:
        return limits
    sdk = own.config.sandbox
    return limits.model_copy(update={"pythonpath": sdk.pythonpath, "prelude": sdk.prelude})
