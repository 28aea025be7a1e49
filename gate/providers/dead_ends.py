"""Failures of a provider endpoint that no retry can mend, and what the user does about each.

A refused connection, a host name that does not resolve, a key the endpoint refuses (401,
403) and an endpoint or model that is not there (404) fail every call alike: the transport
stops at the first of them and fails the endpoint's other calls with the same words at once
(`gate.providers.transport`). Each is said with the endpoint and the fix. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

DeadEnd = Literal["refused", "unknown_host", "unauthorized", "forbidden", "not_found"]
DEAD_STATUSES: dict[int, DeadEnd] = {401: "unauthorized", 403: "forbidden", 404: "not_found"}
_ERRNO = re.compile(r"\[Errno (-?\d+)\]")
ECONNREFUSED = {111, 61, 10061}  # Linux, macOS, Windows
# getaddrinfo's "no such name" (EAI_NONAME, EAI_NODATA on Linux; EAI_NONAME on macOS).
# EAI_AGAIN ("temporary failure in name resolution") is left to the retries.
UNKNOWN_HOST = {-2, -5, 8, 11001}


@dataclass(frozen=True)
class Where:
    """What the words of a dead end name: the endpoint, where its URL and key come from."""

    display_url: str
    url_from: str = "`base_url`"  # e.g. "`base_url`", "$OPENAI_BASE_URL", "`url`"
    key_env: str | None = None  # the variable the key is read from (None: no key)
    key_sent: bool = False


def connection_dead_end(text: str) -> DeadEnd | None:
    """A refused connection or an unknown host, from the text of requests' exception."""
    numbers = {int(n) for n in _ERRNO.findall(text)}
    if numbers & ECONNREFUSED or "Connection refused" in text:
        return "refused"
    if numbers & UNKNOWN_HOST or "Name or service not known" in text:
        return "unknown_host"
    return None


def _host(where: Where) -> str:
    parts = urlsplit(where.display_url if "://" in where.display_url else f"//{where.display_url}")
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.hostname or where.display_url}{port}"


def _key_fix(where: Where, refused: str) -> str:
    if where.key_env is None:
        return "check the credentials its headers send"
    if not where.key_sent:
        return (
            f"no API key was sent: set ${where.key_env} (or name the variable that holds it "
            "with `api_key_env`)"
        )
    return f"{refused} ${where.key_env}"


def _not_found_fix(where: Where, detail: str) -> str:
    if "model" in detail.lower():
        return "the endpoint does not serve this model: fix `model` in the model config"
    return f"nothing is served at this path: fix {where.url_from}"


def dead_end_message(kind: DeadEnd, where: Where, detail: str = "") -> str:
    """The endpoint's failure and its fix, in one sentence a terminal and a comment show
    (the transport puts the provider's name in front)."""
    url = where.display_url
    said = f": {detail}" if detail else ""
    if kind == "refused":
        return (
            f"connection refused at {_host(where)} ({url}): nothing is "
            f"listening there; start the server, or fix {where.url_from}"
        )
    if kind == "unknown_host":
        return f"the host name in {url} does not resolve ({_host(where)}); fix {where.url_from}"
    if kind == "unauthorized":
        fix = _key_fix(where, "the endpoint refused the API key in")
        return f"HTTP 401 from {url}{said}; {fix}"
    if kind == "forbidden":
        fix = _key_fix(where, "the API key may not use this endpoint or model: check the access of")
        return f"HTTP 403 from {url}{said}; {fix}"
    return f"HTTP 404 from {url}{said}; {_not_found_fix(where, detail)}"
