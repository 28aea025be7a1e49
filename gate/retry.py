"""Retries of an HTTP call: one policy and one loop, for the model providers' and GitHub's clients.

An attempt returns its result or a `Failed`: what went wrong, whether another attempt may help
and how long the server asked to wait (`Retry-After` and GitHub's `x-ratelimit-reset` are read
here, the providers' own headers in `gate.providers.backoff`). The loop waits that long, else
backs off exponentially (with jitter, so that concurrent workers do not wake together), never
longer than the policy's cap, and gives up saying why: not retryable, out of attempts, past
the caller's deadline, or asked to wait longer than the cap by a policy that gives up then.

Imports nothing of the gate; the clock, the sleep and the random source are passed in.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Literal, TypeVar

T = TypeVar("T")
GiveUpReason = Literal["not_retried", "attempts", "deadline", "over_cap"]
_RNG = random.Random()


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_s: float = 1.0  # the first backoff step; it doubles each retry
    max_s: float = 60.0  # the longest single wait
    jitter: bool = True  # half of each backoff step random, a little on top of the server's word
    # A longer wait the server asks for: cut to max_s and retry ("cap"), or give up at once
    # ("give_up": a limit that resets at a fixed time is not worth retrying sooner).
    over_cap: Literal["cap", "give_up"] = "cap"

    @property
    def attempts(self) -> int:
        return self.max_retries + 1


@dataclass(frozen=True)
class Failed:
    """An attempt that did not succeed."""

    reason: str
    retry: bool = False  # whether another attempt may succeed
    asked_s: float | None = None  # the wait the server asked for; None when it said nothing
    status: int | None = None  # the HTTP status, if an answer came
    # No later call will succeed either (a refused connection, a refused key): the caller
    # stops calling, not only retrying.
    final: bool = False


@dataclass(frozen=True)
class GaveUp:
    """Why the loop stopped: the last failure, after how many attempts, and the wait refused."""

    failed: Failed
    attempts: int
    why: GiveUpReason
    wait_s: float = 0.0


def backoff_delay(policy: RetryPolicy, retry: int, rng: random.Random) -> float:
    """The exponential step of retry number `retry` (from 0), capped; with jitter, "equal
    jitter": half of the step fixed, half random."""
    step = min(policy.max_s, policy.base_s * (2**retry))
    return step / 2 + rng.uniform(0, step / 2) if policy.jitter else step


def next_delay(
    policy: RetryPolicy, retry: int, asked_s: float | None, rng: random.Random
) -> float | None:
    """The wait before retry number `retry`: the server's word when it gave one, else backoff;
    None when the server asked for more than the cap and the policy gives up then."""
    if asked_s is None:
        return backoff_delay(policy, retry, rng)
    if asked_s > policy.max_s and policy.over_cap == "give_up":
        return None
    spread = rng.uniform(0, 0.1 * asked_s + 0.01) if policy.jitter else 0.0
    return min(asked_s + spread, policy.max_s)


def call_with_retries(
    attempt: Callable[[int], T | Failed],
    policy: RetryPolicy,
    give_up: Callable[[GaveUp], Exception],
    *,
    rng: random.Random | None = None,
    sleep: Callable[[float], None] = time.sleep,
    deadline: float | None = None,
    on_wait: Callable[[Failed, float], None] | None = None,
) -> T:
    """The result of `attempt(n)` for n = 1, 2, ...: a `Failed` is retried after its wait, or
    `give_up(...)` is raised. `deadline` (a `time.monotonic()` value) ends the retries when the
    wait would pass it. `on_wait` hears of every wait decided, the last attempt's too: a rate
    limit the server announced holds for the other workers whether or not this one retries."""
    for n in range(1, policy.attempts + 1):
        result = attempt(n)
        if not isinstance(result, Failed):
            return result
        if not result.retry:
            raise give_up(GaveUp(result, n, "not_retried"))
        delay = next_delay(policy, n - 1, result.asked_s, rng or _RNG)
        if delay is None:
            raise give_up(GaveUp(result, n, "over_cap", result.asked_s or 0.0))
        if on_wait is not None:
            on_wait(result, delay)
        if n == policy.attempts:
            raise give_up(GaveUp(result, n, "attempts"))
        if deadline is not None and time.monotonic() + delay >= deadline:
            raise give_up(GaveUp(result, n, "deadline", delay))
        sleep(delay)
    raise AssertionError("unreachable: the last attempt returns or raises")


def seconds_until(moment: datetime, now: float) -> float | None:
    """Seconds from `now` to `moment`; a time without a zone says nothing."""
    return None if moment.tzinfo is None else max(moment.timestamp() - now, 0.0)


def retry_after(value: str, now: float) -> float | None:
    """`Retry-After`: delta seconds or an HTTP date."""
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return seconds_until(parsedate_to_datetime(value), now)
    except (TypeError, ValueError, IndexError):
        return None


def epoch_reset(value: str, now: float) -> float | None:
    """GitHub's `x-ratelimit-reset`: the epoch second at which the limit resets."""
    try:
        return max(float(value) - now, 0.0)
    except ValueError:
        return None
