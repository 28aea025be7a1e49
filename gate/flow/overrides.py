"""What the Action's inputs and `gate check`'s flags may change in the policy: they only
tighten it.

On `pull_request` the workflow file, and so the Action's inputs, are the PR's own: an input
that loosened the policy would let the PR relax the gate that judges it. So a `threshold`
above the policy's is not applied, and `block-severities` that drop one of the policy's keep
it (the severities an override adds still block); each such override is a note in the
comment (`OverrideIgnored`). `fail-on-regression: false` cannot be taken back by the gate
(the step's exit code is the workflow's), so the comment says the verdict is not enforced.
"""

from __future__ import annotations

from pydantic import JsonValue

from gate.compare.findings import Finding, NotEnforced, OverrideIgnored
from gate.flow.request import PolicyOverrides
from gate.inputs.policy import SEVERITIES, Policy, PolicyKeys


def tightened(keys: PolicyKeys, overrides: PolicyOverrides) -> tuple[Policy, list[Finding]]:
    """The policy of `keys` with the overrides' stricter parts, and a note per override that
    would have loosened it."""
    policy = Policy.from_config(keys)
    notes: list[Finding] = []
    threshold = overrides.threshold
    if threshold is not None and threshold > policy.threshold:
        kept_threshold = policy.threshold
        notes.append(
            OverrideIgnored(
                key="threshold", asked=threshold, base=kept_threshold, applied=kept_threshold
            )
        )
        threshold = None
    severities: list[str] | None = None
    if overrides.block_severities is not None:
        asked = list(overrides.block_severities)
        kept = set(asked) | set(policy.block_severities)
        severities = [s for s in SEVERITIES if s in kept]
        if not set(policy.block_severities) <= set(asked):
            base: list[JsonValue] = [*policy.block_severities]
            notes.append(
                OverrideIgnored(
                    key="block_severities", asked=[*asked], base=base, applied=[*severities]
                )
            )
    if not overrides.enforce:
        notes.append(NotEnforced())
    applied = Policy.from_config(keys, threshold=threshold, block_severities=severities)
    return applied, notes
