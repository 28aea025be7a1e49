"""One pooled HTTP session per provider; retries with backoff, through the shared throttle.

Every failure that survives the retries becomes a `ProviderError` whose message says what
happened (status, attempts) with every secret scrubbed out.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter

from gate.errors import SystemCallError
from gate.providers.backoff import RetryPolicy, is_retryable_status, next_delay
from gate.providers.secrets import Secrets
from gate.providers.throttle import Throttle, ThrottleTimeout
from gate.providers.traffic import Traffic

CONNECT_TIMEOUT_S = 10.0
EXCERPT_CHARS = 300
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")\]]+)")


class ProviderError(SystemCallError):
    """A provider call that finally failed; `status` is the last HTTP status, if any."""

    def __init__(self, message: str, *, status: int | None = None, attempts: int = 0) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


@dataclass(frozen=True)
class Endpoint:
    """Where and how to POST; `headers` hold secrets, `display_url` never does."""

    provider: str
    url: str
    display_url: str
    headers: dict[str, str] = field(default_factory=dict)
    secrets: Secrets = field(default_factory=Secrets)


@dataclass
class _Outcome:
    """The result of one attempt: a parsed body, or why it failed and whether to retry."""

    data: Any = None
    failure: str | None = None
    retry: bool = False
    status: int | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


def bypasses_proxy(host: str, no_proxy: str) -> bool:
    """curl's NO_PROXY rules: `*`, or a host or domain suffix (`example.com`, `.example.com`)."""
    for entry in (e.strip().lower().lstrip(".") for e in no_proxy.split(",")):
        name = entry.rsplit(":", 1)[0] if entry.count(":") == 1 else entry
        if entry == "*" or (name and (host == name or host.endswith("." + name))):
            return True
    return False


def proxies_for(url: str, environ: Mapping[str, str]) -> dict[str, str]:
    """The proxy for `url` from the given environment (requests would read os.environ)."""
    env = {k.lower(): v for k, v in environ.items() if k.lower().endswith("_proxy") and v}
    parts = urlsplit(url)
    if bypasses_proxy((parts.hostname or "").lower(), env.get("no_proxy", "")):
        return {}
    proxy = env.get(f"{parts.scheme}_proxy") or env.get("all_proxy")
    return {parts.scheme: proxy} if proxy else {}


def _ca_bundle(environ: Mapping[str, str]) -> str | bool:
    return environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE") or True


def _one_line(text: str, limit: int = EXCERPT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def error_excerpt(body: str) -> str:
    """The provider's own error message when it sent one (OpenAI and Anthropic shapes)."""
    try:
        data = json.loads(body)
    except ValueError:
        return _one_line(body)
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return _one_line(error["message"])
    if isinstance(error, str):
        return _one_line(error)
    return _one_line(body)


def _attempts(n: int) -> str:
    return f"{n} attempt" if n == 1 else f"{n} attempts"


def _decode(response: requests.Response) -> str:
    """The body as text; JSON is UTF-8, and decoding it here skips requests' charset guessing."""
    try:
        return response.content.decode(response.encoding or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return response.content.decode("utf-8", errors="replace")


def connection_reason(exc: requests.RequestException) -> str:
    """ "Connection refused" rather than urllib3's three nested reprs."""
    if isinstance(exc, requests.Timeout):
        return "timed out"
    match = _ERRNO.search(str(exc))
    if match:
        return match.group(1).strip()
    return type(exc).__name__


class Transport:
    def __init__(
        self,
        endpoint: Endpoint,
        *,
        policy: RetryPolicy,
        timeout_s: float,
        pool_size: int,
        environ: Mapping[str, str],
        throttle: Throttle | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.policy = policy
        self.timeout_s = timeout_s
        self.throttle = throttle or Throttle(pool_size)
        self.stats = Traffic()
        self._rng = rng or random.Random()
        self._session = requests.Session()
        self._session.trust_env = False  # proxies and CA come from the environ passed in
        self._session.proxies = proxies_for(endpoint.url, environ)
        self._session.verify = _ca_bundle(environ)
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=max(pool_size, 1), max_retries=0)
        self._session.mount("http://", adapter)
        self._session.mount("https://", adapter)

    def close(self) -> None:
        self._session.close()

    def post_json(self, body: Any, deadline: float | None = None) -> Any:
        """POST `body` as JSON and return the decoded answer, retrying what is worth retrying."""
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            outcome = self._attempt(payload, deadline, attempt)
            if outcome.failure is None:
                return outcome.data
            if not outcome.retry:
                raise self._give_up(outcome, attempt, " (not retried)")
            delay = next_delay(self.policy, attempt - 1, outcome.headers, time.time(), self._rng)
            if outcome.status == 429:
                self.throttle.rate_limited(delay)
            if attempt == self.policy.attempts:
                raise self._give_up(outcome, attempt, f", after {_attempts(attempt)}")
            if deadline is not None and time.monotonic() + delay >= deadline:
                raise self._give_up(
                    outcome,
                    attempt,
                    f"; gave up after {_attempts(attempt)}: waiting {delay:.2g}s more "
                    "would pass the case timeout",
                )
            self.stats.bump("retries")
            time.sleep(delay)

    def _give_up(self, outcome: _Outcome, attempt: int, why: str) -> ProviderError:
        self.stats.bump("failures")
        message = self._message(f"{outcome.failure}{why}")
        return ProviderError(message, status=outcome.status, attempts=attempt)

    def _message(self, text: str) -> str:
        return self.endpoint.secrets.scrub_message(f"{self.endpoint.provider}: {text}")

    def _attempt(self, payload: bytes, deadline: float | None, attempt: int) -> _Outcome:
        try:
            with self.throttle.slot(deadline):
                timeout = self.timeout_s
                if deadline is not None:
                    timeout = max(min(timeout, deadline - time.monotonic()), 0.001)
                self.stats.bump("requests")
                response = self._session.post(
                    self.endpoint.url,
                    data=payload,
                    headers={"Content-Type": "application/json", **self.endpoint.headers},
                    timeout=(min(CONNECT_TIMEOUT_S, timeout), timeout),
                )
        except ThrottleTimeout:
            self.stats.bump("failures")
            raise ProviderError(
                self._message(
                    f"gave up after {_attempts(attempt - 1)}: the rate-limit cool-down "
                    "outlasts the case timeout"
                ),
                attempts=attempt - 1,
            ) from None
        except requests.Timeout:
            return _Outcome(failure=f"no response within {timeout:.3g}s", retry=True)
        except requests.exceptions.SSLError as exc:
            return _Outcome(failure=f"TLS error: {connection_reason(exc)}")
        except requests.ConnectionError as exc:
            where = self.endpoint.display_url
            return _Outcome(
                failure=f"connection failed ({connection_reason(exc)}): {where}", retry=True
            )
        except requests.RequestException as exc:
            return _Outcome(failure=f"request failed: {type(exc).__name__}")
        return self._read(response)

    def _read(self, response: requests.Response) -> _Outcome:
        text = self.endpoint.secrets.scrub(_decode(response))
        status = response.status_code
        if 200 <= status < 300:
            self.throttle.succeeded()
            try:
                return _Outcome(data=json.loads(text), status=status)
            except ValueError:
                return _Outcome(
                    failure=f"HTTP {status} with a body that is not JSON: {_one_line(text, 120)}",
                    status=status,
                )
        if status == 429:
            self.stats.bump("rate_limited")
        failure = f"HTTP {status} {response.reason or ''}".rstrip()
        excerpt = error_excerpt(text)
        return _Outcome(
            failure=f"{failure}: {excerpt}" if excerpt else failure,
            retry=is_retryable_status(status),
            status=status,
            headers=response.headers,
        )
