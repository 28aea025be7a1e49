"""Retry delays: exponential backoff with jitter, and what the provider asks us to wait.

Pure functions: the clock and the random source are passed in. The one parser of the
retry headers (`Retry-After`, the rate-limit resets) for the providers' and GitHub's clients.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime

RETRY_STATUSES = frozenset({408, 429})
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
# OpenAI: the reset of whichever limit ran out; Anthropic: RFC 3339 times per limit.
OPENAI_RESETS = (
    ("x-ratelimit-remaining-requests", "x-ratelimit-reset-requests"),
    ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
)
ANTHROPIC_RESETS = (
    "anthropic-ratelimit-requests-reset",
    "anthropic-ratelimit-tokens-reset",
    "anthropic-ratelimit-input-tokens-reset",
    "anthropic-ratelimit-output-tokens-reset",
)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    base_s: float = 1.0
    max_s: float = 60.0

    @property
    def attempts(self) -> int:
        return self.max_retries + 1


def is_retryable_status(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


def backoff_delay(policy: RetryPolicy, retry: int, rng: random.Random) -> float:
    """Equal jitter: half of the exponential step is fixed, half random (retry counts from 0)."""
    step = min(policy.max_s, policy.base_s * (2**retry))
    return step / 2 + rng.uniform(0, step / 2)


def parse_duration(text: str) -> float | None:
    """OpenAI's reset format: "1s", "6m0s", "20ms", "1h2m3.5s"; a bare number means seconds."""
    text = text.strip().lower()
    try:
        return max(float(text), 0.0)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _until(moment: datetime, now: float) -> float | None:
    """Seconds from `now` to `moment`; a time without a zone says nothing."""
    return None if moment.tzinfo is None else max(moment.timestamp() - now, 0.0)


def _http_date_delay(text: str, now: float) -> float | None:
    try:
        return _until(parsedate_to_datetime(text), now)
    except (TypeError, ValueError, IndexError):
        return None


def _iso_delay(text: str, now: float) -> float | None:
    try:
        return _until(datetime.fromisoformat(text.strip().replace("Z", "+00:00")), now)
    except ValueError:
        return None


def retry_after(value: str, now: float) -> float | None:
    """`Retry-After`: delta seconds or an HTTP date (the GitHub client reads it too)."""
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        return _http_date_delay(value, now)


def epoch_reset(value: str, now: float) -> float | None:
    """GitHub's `x-ratelimit-reset`: the epoch second at which the limit resets."""
    try:
        return max(float(value) - now, 0.0)
    except ValueError:
        return None


def server_delay(headers: Mapping[str, str], now: float) -> float | None:
    """How long the provider asked us to wait, from any header it sent; None when silent.

    `headers` must be case-insensitive (requests' `CaseInsensitiveDict`) or lower-cased.
    """
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return max(float(ms) / 1000, 0.0)
        except ValueError:
            pass
    if (value := headers.get("retry-after")) is not None:
        delay = retry_after(value, now)
        if delay is not None:
            return delay
    resets = [
        parse_duration(headers[reset])
        for remaining, reset in OPENAI_RESETS
        if reset in headers and headers.get(remaining, "0").strip() == "0"
    ]
    resets += [_iso_delay(headers[name], now) for name in ANTHROPIC_RESETS if name in headers]
    known = [r for r in resets if r is not None]
    return max(known) if known else None


def next_delay(
    policy: RetryPolicy,
    retry: int,
    headers: Mapping[str, str],
    now: float,
    rng: random.Random,
) -> float:
    """The wait before retry number `retry`: the server's word when it gave one, else backoff.

    A small jitter on top of the server's delay keeps waiting workers from all waking together.
    """
    asked = server_delay(headers, now)
    if asked is None:
        return min(backoff_delay(policy, retry, rng), policy.max_s)
    return min(asked + rng.uniform(0, 0.1 * asked + 0.01), policy.max_s)
