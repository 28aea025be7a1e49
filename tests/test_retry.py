"""The one retry loop of the providers' and GitHub's clients: waits, give-up reasons, hooks."""

from __future__ import annotations

import random
import time

import pytest

from gate.retry import Failed, GaveUp, RetryPolicy, call_with_retries, next_delay


class Stop(Exception):
    def __init__(self, gave_up: GaveUp) -> None:
        super().__init__(gave_up.why)
        self.gave_up = gave_up


def failing(*outcomes: object) -> tuple[list[int], object]:
    """An attempt that returns the outcomes in turn (the last one again and again)."""
    calls: list[int] = []

    def attempt(n: int) -> object:
        calls.append(n)
        return outcomes[min(n, len(outcomes)) - 1]

    return calls, attempt


def test_the_result_after_retries_with_the_servers_wait_else_backoff() -> None:
    calls, attempt = failing(Failed("503", retry=True), Failed("429", True, 0.5), "ok")
    sleeps: list[float] = []
    policy = RetryPolicy(max_retries=3, base_s=0.1, max_s=5.0, jitter=False)
    assert call_with_retries(attempt, policy, Stop, sleep=sleeps.append) == "ok"
    assert calls == [1, 2, 3] and sleeps == [0.1, 0.5]


@pytest.mark.parametrize(
    ("outcome", "policy", "why", "attempts"),
    [
        (Failed("400"), RetryPolicy(), "not_retried", 1),
        (Failed("503", retry=True), RetryPolicy(max_retries=2, base_s=0), "attempts", 3),
        (Failed("403", True, 900.0), RetryPolicy(max_s=120, over_cap="give_up"), "over_cap", 1),
    ],
)
def test_each_reason_to_give_up(
    outcome: Failed, policy: RetryPolicy, why: str, attempts: int
) -> None:
    calls, attempt = failing(outcome)
    with pytest.raises(Stop) as info:
        call_with_retries(attempt, policy, Stop, sleep=lambda s: None)
    assert info.value.gave_up.why == why and info.value.gave_up.attempts == attempts
    assert info.value.gave_up.failed is outcome and len(calls) == attempts


def test_a_wait_past_the_deadline_gives_up_without_sleeping() -> None:
    _, attempt = failing(Failed("429", True, 3.0))
    sleeps: list[float] = []
    with pytest.raises(Stop) as info:
        call_with_retries(
            attempt, RetryPolicy(), Stop, sleep=sleeps.append, deadline=time.monotonic() + 1
        )
    assert info.value.gave_up.why == "deadline" and info.value.gave_up.wait_s >= 3.0
    assert sleeps == []


def test_every_wait_is_announced_the_last_attempts_too() -> None:
    _, attempt = failing(Failed("429", True, 0.2))
    heard: list[float] = []
    policy = RetryPolicy(max_retries=1, jitter=False)
    with pytest.raises(Stop):
        call_with_retries(
            attempt, policy, Stop, sleep=lambda s: None, on_wait=lambda f, d: heard.append(d)
        )
    assert heard == [0.2, 0.2]


def test_a_longer_wait_than_the_cap_is_cut_or_refused_by_the_policy() -> None:
    rng = random.Random(3)
    assert next_delay(RetryPolicy(max_s=30, jitter=False), 0, 3600.0, rng) == 30.0
    assert next_delay(RetryPolicy(max_s=30, over_cap="give_up"), 0, 3600.0, rng) is None
    assert next_delay(RetryPolicy(max_s=30, over_cap="give_up", jitter=False), 0, 30.0, rng) == 30.0
