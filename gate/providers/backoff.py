"""What a model provider asks us to wait, and which of its answers are worth retrying.

Pure functions of the headers and the clock. `Retry-After` is read by `gate.retry` (GitHub's
client reads it too); here are the providers' own: `retry-after-ms`, OpenAI's reset durations
of whichever limit ran out, Anthropic's RFC 3339 reset times.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from gate.retry import retry_after, seconds_until

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


def is_retryable_status(status: int) -> bool:
    return status in RETRY_STATUSES or status >= 500


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


def _iso_delay(text: str, now: float) -> float | None:
    try:
        return seconds_until(datetime.fromisoformat(text.strip().replace("Z", "+00:00")), now)
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
