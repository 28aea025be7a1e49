"""One pooled HTTP session per provider; retried by `gate.retry`, through the shared throttle.

Every failure that survives the retries becomes a `ProviderError` whose message says what
happened (status, attempts) with every secret scrubbed out. A failure no retry mends (a refused
connection, an unknown host, 401, 403, 404: `gate.providers.dead_ends`) is not retried, and
the endpoint's later calls fail at once with the same words (a circuit breaker per endpoint):
each of their cases is still an error, none waits out the retries of a dead endpoint.
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
from gate.providers.backoff import is_retryable_status, server_delay
from gate.providers.dead_ends import (
    DEAD_STATUSES,
    Where,
    connection_dead_end,
    dead_end_message,
)
from gate.providers.secrets import Secrets
from gate.providers.throttle import Throttle, ThrottleTimeout
from gate.providers.traffic import Traffic
from gate.retry import Failed, GaveUp, RetryPolicy, call_with_retries

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
    url_from: str = "`base_url`"  # where the URL is set, for the fix of a dead endpoint
    key_env: str | None = None  # the variable its API key comes from (None: it takes none)

    def where(self) -> Where:
        return Where(
            display_url=self.display_url,
            url_from=self.url_from,
            key_env=self.key_env,
            key_sent=bool(self.secrets),
        )


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
        self._dead: ProviderError | None = None  # the failure every later call repeats
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
        if self._dead is not None:
            self.stats.bump("failures")
            raise ProviderError(str(self._dead), status=self._dead.status, attempts=0)
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return call_with_retries(
            lambda attempt: self._attempt(payload, deadline, attempt),
            self.policy,
            self._give_up,
            rng=self._rng,
            sleep=self._wait_to_retry,
            deadline=deadline,
            on_wait=self._on_wait,
        )

    def _on_wait(self, failed: Failed, delay: float) -> None:
        if failed.status == 429:
            self.throttle.rate_limited(delay)

    def _wait_to_retry(self, delay: float) -> None:
        self.stats.bump("retries")  # counted while it waits: the progress line shows it
        time.sleep(delay)

    def _give_up(self, gave_up: GaveUp) -> ProviderError:
        self.stats.bump("failures")
        if gave_up.failed.final:  # said as it is, once: every later call repeats it
            failed = gave_up.failed
            error = ProviderError(self._message(failed.reason), status=failed.status, attempts=1)
            self._dead = self._dead or error
            return error
        attempts = _attempts(gave_up.attempts)
        why = {
            "not_retried": " (not retried)",
            "attempts": f", after {attempts}",
            "deadline": f"; gave up after {attempts}: waiting {gave_up.wait_s:.2g}s more "
            "would pass the case timeout",
            "over_cap": f"; gave up after {attempts}: asked to wait {gave_up.wait_s:.2g}s",
        }[gave_up.why]
        message = self._message(f"{gave_up.failed.reason}{why}")
        return ProviderError(message, status=gave_up.failed.status, attempts=gave_up.attempts)

    def _message(self, text: str) -> str:
        return self.endpoint.secrets.scrub_message(f"{self.endpoint.provider}: {text}")

    def _attempt(self, payload: bytes, deadline: float | None, attempt: int) -> Any | Failed:
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
            return Failed(f"no response within {timeout:.3g}s", retry=True)
        except requests.exceptions.SSLError as exc:
            return Failed(f"TLS error: {connection_reason(exc)}")
        except requests.ConnectionError as exc:
            dead = connection_dead_end(str(exc))
            if dead is not None:
                return Failed(dead_end_message(dead, self.endpoint.where()), final=True)
            where = self.endpoint.display_url
            return Failed(f"connection failed ({connection_reason(exc)}): {where}", retry=True)
        except requests.RequestException as exc:
            return Failed(f"request failed: {type(exc).__name__}")
        return self._read(response)

    def _read(self, response: requests.Response) -> Any | Failed:
        text = self.endpoint.secrets.scrub(_decode(response))
        status = response.status_code
        if 200 <= status < 300:
            self.throttle.succeeded()
            try:
                return json.loads(text)
            except ValueError:
                return Failed(
                    f"HTTP {status} with a body that is not JSON: {_one_line(text, 120)}",
                    status=status,
                )
        if status == 429:
            self.stats.bump("rate_limited")
        excerpt = error_excerpt(text)
        if status in DEAD_STATUSES:
            reason = dead_end_message(DEAD_STATUSES[status], self.endpoint.where(), excerpt)
            return Failed(reason, status=status, final=True)
        failure = f"HTTP {status} {response.reason or ''}".rstrip()
        return Failed(
            f"{failure}: {excerpt}" if excerpt else failure,
            retry=is_retryable_status(status),
            asked_s=server_delay(response.headers, time.time()),
            status=status,
        )
