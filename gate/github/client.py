"""A small GitHub REST client: base URL, headers, retries and pagination; no domain calls.

GitHub Enterprise works by passing its API root (`GITHUB_API_URL`, e.g.
`https://ghe.example.com/api/v3`). Retries cover server errors and both kinds of rate limit
(GitHub answers 403 or 429 with `Retry-After`, or with `x-ratelimit-remaining: 0` and
`x-ratelimit-reset`). The token is sent in a header and never appears in errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests

from gate import __version__
from gate.errors import GateError
from gate.providers.backoff import epoch_reset, retry_after

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
SERVER_ERRORS = frozenset({500, 502, 503, 504})
SAFE_METHODS = frozenset({"GET", "HEAD", "PATCH", "PUT", "DELETE"})


class GitHubApiError(GateError):
    """A request failed for good (after retries). `status` is None when no answer came back."""

    def __init__(self, method: str, url: str, status: int | None, message: str) -> None:
        self.method = method
        self.url = url
        self.status = status
        self.reason = message
        code = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"GitHub API {method} {url}: {code}: {message}")


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 5
    backoff_s: float = 1.0
    max_wait_s: float = 120.0


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or response.reason or ""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return response.reason or ""


def retry_delay(
    response: requests.Response, attempt: int, now: float, policy: RetryPolicy
) -> float | None:
    """Seconds to wait before retrying this response, or None when it must not be retried."""
    status = response.status_code
    headers = response.headers
    backoff = policy.backoff_s * 2**attempt
    if status in SERVER_ERRORS:
        return backoff
    if status not in (403, 429):
        return None
    asked = headers.get("retry-after")
    wait = retry_after(asked, now) if asked is not None else None
    if wait is not None:
        return wait
    reset = headers.get("x-ratelimit-reset")
    wait = epoch_reset(reset, now) if reset is not None else None
    if headers.get("x-ratelimit-remaining") == "0" and wait is not None:
        return wait + 1.0
    if status == 429 or "secondary rate limit" in _message(response).lower():
        # GitHub's advice without headers: wait at least a minute.
        return max(backoff, 60.0)
    return None


class GitHubClient:
    def __init__(
        self,
        token: str | None,
        api_url: str = DEFAULT_API_URL,
        *,
        retry: RetryPolicy | None = None,
        timeout_s: float = 30.0,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.retry = retry or RetryPolicy()
        self.timeout_s = timeout_s
        self.session = session or requests.Session()
        self.session.headers.update(
            {
                "Accept": "application/vnd.github+json",
                "X-GitHub-Api-Version": API_VERSION,
                "User-Agent": f"eval-gate/{__version__}",
            }
        )
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self._sleep = sleep
        self._clock = clock

    def url(self, path_or_url: str) -> str:
        if path_or_url.startswith(("http://", "https://")):
            return path_or_url
        return self.api_url + "/" + path_or_url.lstrip("/")

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        retry_server_errors: bool | None = None,
    ) -> requests.Response:
        """Send a request, retrying what may be retried; raise `GitHubApiError` on failure.

        Server errors and lost connections are retried only for idempotent methods unless
        `retry_server_errors` says otherwise: a POST that failed with 502 may still have been
        applied, so its caller decides (rate-limit rejections are always safe to retry).
        """
        method = method.upper()
        url = self.url(path_or_url)
        idempotent = method in SAFE_METHODS if retry_server_errors is None else retry_server_errors
        for attempt in range(self.retry.attempts):
            last = attempt == self.retry.attempts - 1
            try:
                response = self.session.request(
                    method, url, params=params, json=json, timeout=self.timeout_s
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                if last or not idempotent:
                    raise GitHubApiError(method, url, None, type(exc).__name__) from None
                self._sleep(self.retry.backoff_s * 2**attempt)
                continue
            if response.status_code < 400:
                return response
            delay = retry_delay(response, attempt, self._clock(), self.retry)
            if response.status_code in SERVER_ERRORS and not idempotent:
                delay = None
            if delay is None or last or delay > self.retry.max_wait_s:
                raise GitHubApiError(method, url, response.status_code, _message(response))
            self._sleep(delay)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def get_json(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=params).json()

    def paginate(self, path: str, params: dict[str, Any] | None = None) -> Iterator[Any]:
        """Every item of a list endpoint, following `Link: <...>; rel="next"`."""
        url: str | None = self.url(path)
        origin = urlsplit(self.api_url)
        while url is not None:
            response = self.request("GET", url, params=params)
            items = response.json()
            if not isinstance(items, list):
                raise GitHubApiError("GET", url, response.status_code, "expected a JSON array")
            yield from items
            url = response.links.get("next", {}).get("url")
            params = None  # the next link carries the query
            if url is not None and urlsplit(url)[:2] != origin[:2]:
                raise GitHubApiError("GET", url, None, "pagination link leaves the API host")

    def close(self) -> None:
        self.session.close()
