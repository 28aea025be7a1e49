"""Retry delays: backoff with jitter, Retry-After and the providers' rate-limit reset headers."""

from __future__ import annotations

import random
from email.utils import formatdate

import pytest
from requests.structures import CaseInsensitiveDict

from gate.providers.backoff import is_retryable_status, parse_duration, server_delay
from gate.retry import RetryPolicy, backoff_delay, epoch_reset, next_delay, retry_after

NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("7", 7.0)],
)
def test_openai_reset_durations(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "5x", "1s garbage"])
def test_unparseable_durations_are_ignored(text: str) -> None:
    assert parse_duration(text) is None


def headers(**values: str) -> CaseInsensitiveDict[str]:
    return CaseInsensitiveDict({k.replace("_", "-"): v for k, v in values.items()})


def test_retry_after_in_seconds_and_as_http_date() -> None:
    assert server_delay(headers(Retry_After="3"), NOW) == 3.0
    date = formatdate(NOW + 42, usegmt=True)
    assert server_delay(headers(Retry_After=date), NOW) == pytest.approx(42, abs=1)
    assert server_delay(headers(Retry_After=formatdate(NOW - 10, usegmt=True)), NOW) == 0.0


def test_retry_after_ms_wins_over_retry_after() -> None:
    assert server_delay(headers(retry_after_ms="250", Retry_After="9"), NOW) == 0.25


def test_openai_reset_of_the_exhausted_limit_only() -> None:
    both = headers(
        x_ratelimit_remaining_requests="12",
        x_ratelimit_reset_requests="1s",
        x_ratelimit_remaining_tokens="0",
        x_ratelimit_reset_tokens="6m0s",
    )
    assert server_delay(both, NOW) == 360.0
    requests_out = headers(x_ratelimit_remaining_requests="0", x_ratelimit_reset_requests="20ms")
    assert server_delay(requests_out, NOW) == pytest.approx(0.02)


def test_anthropic_reset_timestamps() -> None:
    from datetime import UTC, datetime

    at = datetime.fromtimestamp(NOW + 5, UTC).isoformat().replace("+00:00", "Z")
    assert server_delay(headers(anthropic_ratelimit_tokens_reset=at), NOW) == pytest.approx(5)


def test_github_headers_read_by_the_same_parser() -> None:
    assert retry_after("7", NOW) == 7.0
    assert retry_after(formatdate(NOW + 30, usegmt=True), NOW) == pytest.approx(30, abs=1)
    assert epoch_reset(str(int(NOW) + 12), NOW) == 12.0
    assert epoch_reset(str(int(NOW) - 5), NOW) == 0.0
    assert epoch_reset("soon", NOW) is None


def test_silence_means_no_server_delay() -> None:
    assert server_delay(headers(Content_Type="application/json"), NOW) is None


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=8, base_s=1.0, max_s=10.0)
    rng = random.Random(7)
    for retry, step in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0), (6, 10.0)]:
        delays = [backoff_delay(policy, retry, rng) for _ in range(200)]
        assert min(delays) >= step / 2 and max(delays) <= step
        assert len({round(d, 6) for d in delays}) > 100  # jittered, not constant


def test_next_delay_follows_the_server_but_never_past_the_cap() -> None:
    policy = RetryPolicy(max_retries=3, base_s=0.01, max_s=30.0)
    rng = random.Random(1)
    asked = next_delay(policy, 0, server_delay(headers(Retry_After="2"), NOW), rng)
    assert asked is not None and 2.0 <= asked <= 2.0 + 0.21
    assert next_delay(policy, 0, server_delay(headers(Retry_After="3600"), NOW), rng) == 30.0
    silent = next_delay(policy, 0, server_delay(headers(), NOW), rng)
    assert silent is not None and silent <= 0.01


@pytest.mark.parametrize("status", [429, 408, 500, 502, 503, 529])
def test_rate_limits_timeouts_and_server_errors_are_retried(status: int) -> None:
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 422])
def test_other_client_errors_are_not(status: int) -> None:
    assert not is_retryable_status(status)
