"""The policy: the rules that turn a comparison into a verdict.

One home for them: `gate.yml` holds these keys at its top level (`GateConfig` extends
`PolicyKeys`), the comparison carries the `Policy` it was judged by, and the command line
or the Action's inputs may override a key. In the PR flow the policy is the base's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import ErrorDetails

from gate.errors import InputError

Severity = Literal["blocker", "major", "minor"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
SEVERITY_ORDER: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}


class Budgets(BaseModel):
    """The largest allowed increase, in percent of the base, over the cases both sides ran."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cost_pct: float | None = Field(None, ge=0, description="Cost (USD) may rise this many percent")
    tokens_pct: float | None = Field(None, ge=0, description="Total tokens may rise this much")
    latency_p95_pct: float | None = Field(
        None, ge=0, description="p95 latency of the system calls may rise this much"
    )

    @property
    def any(self) -> bool:
        return any(v is not None for v in (self.cost_pct, self.tokens_pct, self.latency_p95_pct))


class PolicyKeys(BaseModel):
    """The policy's keys and defaults, as `gate.yml` spells them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    threshold: float = Field(3.0, ge=0, description="Points of pass rate a PR may lose")
    block_severities: list[Severity] = Field(
        default_factory=lambda: list[Severity](["blocker"]),
        description="Severities whose failure on head blocks the PR",
    )
    false_block_rate: float = Field(
        0.02,
        gt=0,
        lt=1,
        description="Where the drop test decides (repeats: auto, or require_significance): the "
        "chance that a PR that changed nothing is blocked by the threshold rule, over all its "
        "suites; a drop past the threshold blocks only when it is significant against no change "
        "at its suite's share of this rate (Holm)",
    )
    inconclusive: Literal["pass", "block"] = Field(
        "pass",
        description="What an inconclusive suite does: a drop past the threshold that is not "
        "significant, or repeats: auto's budget spent before the suite was decided",
    )
    require_significance: bool = Field(
        False,
        description="Fixed repeats: a drop past the threshold blocks only when the drop test "
        "rejects no change at the suite's share of false_block_rate (else inconclusive); "
        "repeats: auto always asks the drop test",
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="Level of the confidence interval and the two-sided tests"
    )
    max_error_rate: float = Field(
        5.0, ge=0, le=100, description="Percent of errors per side above which the verdict is error"
    )
    blockers: Literal["any", "new"] = Field(
        "any",
        description="any: every blocking case failing on head blocks; new: only one that passed "
        "every run on base (or is new)",
    )
    budgets: Budgets = Field(
        default_factory=Budgets,
        description="Cost, token and latency increases that fail the PR (none by default)",
    )
    accept_label: str | None = Field(
        "eval-gate: accept",
        min_length=1,
        description="A PR label that turns a fail into an accepted pass (exit 0), which the "
        "comment records with what would have failed (an error is never accepted); the base's "
        "value counts. null: no way out",
    )
    max_repeats: int = Field(
        30, ge=3, le=100, description="repeats: auto: most runs of one case on one side"
    )
    max_calls_per_case: float = Field(
        16,
        gt=0,
        description="repeats: auto: most calls per case and side a suite's rounds may pay for "
        "(answers from the response cache are free)",
    )
    max_calls: int | None = Field(
        None,
        ge=1,
        description="repeats: auto: most calls per side and suite, over the cases both sides run",
    )
    max_cost_usd: float | None = Field(
        None,
        gt=0,
        description="repeats: auto: most USD a suite's rounds may pay for, both sides (none)",
    )
    detect: float | None = Field(
        None,
        gt=0,
        description="repeats: auto: the drop (points) the rounds spend to catch 9 times in 10 "
        "(default: 1.5 × threshold)",
    )

    @property
    def detect_points(self) -> float:
        return self.detect if self.detect is not None else 1.5 * self.threshold


class Policy(PolicyKeys):
    """The policy a comparison is judged by; built by `from_config` (the gate's code builds no
    other way)."""

    @classmethod
    def from_config(
        cls,
        keys: PolicyKeys | None = None,
        *,
        threshold: float | None = None,
        block_severities: Sequence[str] | None = None,
    ) -> Policy:
        """The policy of a config (the defaults without one), with the command line's or the
        Action's overrides."""
        keys = keys or PolicyKeys()
        fields = {name: getattr(keys, name) for name in PolicyKeys.model_fields}
        if threshold is not None:
            fields["threshold"] = threshold
        if block_severities is not None:
            fields["block_severities"] = list(block_severities)
        return cls.model_validate(fields)

    def differences(self, other: PolicyKeys) -> dict[str, tuple[object, object]]:
        """Keys whose value differs in `other`: name -> (this policy's, other's)."""
        return {
            name: (getattr(self, name), getattr(other, name))
            for name in PolicyKeys.model_fields
            if getattr(self, name) != getattr(other, name)
        }


def policy_value(key: str, value: object, *, flag: str) -> Any:
    """`value` as the policy key `key` takes it, checked by that key's own rule (its `Field`
    above): an override of the command line or the Action, checked before anything runs. An
    input error naming `flag` when it breaks the rule."""
    try:
        return getattr(PolicyKeys.model_validate({key: value}), key)
    except ValidationError as err:
        raise InputError(_in_words(err.errors()[0]), key=flag) from None


def parse_severities(text: str, *, flag: str) -> list[Severity]:
    """The one reader of severities written as text (`gate compare --block-severities`, the
    Action's `block-severities`): `blocker,major`, `blocker major` or `[blocker, major]`."""
    names = [name for name in re.split(r"[\s,]+", text.strip().strip("[]")) if name]
    severities: list[Severity] = policy_value("block_severities", names, flag=flag)
    return severities


def _in_words(error: ErrorDetails) -> str:
    if error["loc"][0] == "block_severities" and error["type"] == "literal_error":
        return f"unknown severity {error['input']!r}; use blocker, major or minor"
    if error["type"] == "greater_than_equal":
        return f"must be {error.get('ctx', {}).get('ge', 0):g} or more"
    return error["msg"]
