"""A small GitHub REST client: base URL, headers, retries and pagination; no domain calls.

GitHub Enterprise works by passing its API root (`GITHUB_API_URL`, e.g.
`https://ghe.example.com/api/v3`). Retries cover server errors and both kinds of rate limit
(GitHub answers 403 or 429 with `Retry-After`, or with `x-ratelimit-remaining: 0` and
`x-ratelimit-reset`). The token is sent in a header and never appears in errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import requests

from gate import __version__
from gate.errors import GateError
from gate.retry import Failed, GaveUp, RetryPolicy, call_with_retries, epoch_reset, retry_after

DEFAULT_API_URL = "https://api.github.com"
API_VERSION = "2022-11-28"
SERVER_ERRORS = frozenset({500, 502, 503, 504})
SAFE_METHODS = frozenset({"GET", "HEAD", "PATCH", "PUT", "DELETE"})
SECONDARY_LIMIT_WAIT_S = 60.0  # GitHub's advice when a rate limit comes without headers
# One job's calls, one at a time: no jitter. A limit beyond the cap resets at a fixed time, so
# retrying sooner cannot help: fail instead of hanging.
GITHUB_RETRY = RetryPolicy(max_retries=4, base_s=1.0, max_s=120.0, jitter=False, over_cap="give_up")


class GitHubApiError(GateError):
    """A request failed for good (after retries). `status` is None when no answer came back."""

    def __init__(self, method: str, url: str, status: int | None, message: str) -> None:
        self.method = method
        self.url = url
        self.status = status
        self.reason = message
        code = f"HTTP {status}" if status is not None else "no response"
        super().__init__(f"GitHub API {method} {url}: {code}: {message}")


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:200] or response.reason or ""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return str(body["message"])
    return response.reason or ""


def failure_of(response: requests.Response, now: float, idempotent: bool) -> Failed:
    """An error answer: server errors are retried when the request may be repeated; rate limits
    (403 or 429 with `Retry-After`, or `x-ratelimit-remaining: 0` and `x-ratelimit-reset`, or a
    secondary limit without headers) always, after the wait GitHub asks for."""
    status = response.status_code
    message = _message(response)
    if status in SERVER_ERRORS:
        return Failed(message, retry=idempotent, status=status)
    if status not in (403, 429):
        return Failed(message, status=status)
    headers = response.headers
    asked = headers.get("retry-after")
    wait = retry_after(asked, now) if asked is not None else None
    reset = headers.get("x-ratelimit-reset")
    if wait is None and reset is not None and headers.get("x-ratelimit-remaining") == "0":
        until = epoch_reset(reset, now)
        wait = until + 1.0 if until is not None else None
    if wait is None and (status == 429 or "secondary rate limit" in message.lower()):
        wait = SECONDARY_LIMIT_WAIT_S
    return Failed(message, retry=wait is not None, asked_s=wait, status=status)


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
        self.retry = retry or GITHUB_RETRY
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

        def attempt(_: int) -> requests.Response | Failed:
            try:
                response = self.session.request(
                    method, url, params=params, json=json, timeout=self.timeout_s
                )
            except (requests.ConnectionError, requests.Timeout) as exc:
                return Failed(type(exc).__name__, retry=idempotent)
            if response.status_code < 400:
                return response
            return failure_of(response, self._clock(), idempotent)

        def give_up(gave_up: GaveUp) -> GitHubApiError:
            return GitHubApiError(method, url, gave_up.failed.status, gave_up.failed.reason)

        return call_with_retries(attempt, self.retry, give_up, sleep=self._sleep)

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
