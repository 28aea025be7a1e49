"""One provider endpoint: the cache in front of the transport.

A request whose answer is in the cache costs no call; a fresh answer is cached only once it
parsed, so a malformed reply is never replayed from disk.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, Protocol

from gate.providers.cache import ResponseCache, cache_key
from gate.providers.transport import Endpoint, ProviderError, Transport
from gate.providers.wire_formats import ChatFormat, Conversation, Reply
from gate.retry import RetryPolicy


class ConnectionSettings(Protocol):
    """The retry and timeout keys every provider config has (`ProviderSettings`)."""

    @property
    def timeout_s(self) -> float: ...
    @property
    def max_retries(self) -> int: ...
    @property
    def backoff_s(self) -> float: ...
    @property
    def max_backoff_s(self) -> float: ...


class ProviderClient:
    def __init__(self, transport: Transport, cache: ResponseCache) -> None:
        self.transport = transport
        self.cache = cache

    @property
    def endpoint(self) -> Endpoint:
        return self.transport.endpoint

    def post(
        self,
        body: Any,
        parse: Callable[[Any], Reply],
        *,
        repeat: int,
        deadline: float | None,
        cache: bool = True,
    ) -> Reply:
        key = cache_key(self.endpoint.identity(), body, repeat) if cache else None
        with self.cache.single_flight(key):
            return self._answer(key, body, parse, deadline)

    def _answer(
        self, key: str | None, body: Any, parse: Callable[[Any], Reply], deadline: float | None
    ) -> Reply:
        if key is not None and (stored := self.cache.lookup(key)) is not None:
            try:
                reply = parse(stored["response"])
            except ValueError:
                pass  # an entry from an older, different format: fetch a fresh one
            else:
                latency = stored.get("latency_ms")
                return reply.model_copy(update={"cached": True, "latency_ms": latency})
        started = time.perf_counter()
        data = self.transport.post_json(body, deadline)
        latency_ms = round((time.perf_counter() - started) * 1000, 3)
        try:
            reply = parse(data)
        except ValueError as exc:
            message = self.endpoint.secrets.scrub_message(f"{self.endpoint.provider}: {exc}")
            raise ProviderError(message) from None
        if key is not None:
            self.cache.put(key, data, latency_ms=latency_ms)
        return reply

    def chat(
        self,
        fmt: ChatFormat,
        model: str,
        messages: Conversation,
        params: dict[str, Any],
        *,
        repeat: int,
        deadline: float | None,
    ) -> Reply:
        body = fmt.body(model, messages, params)
        return self.post(body, fmt.parse, repeat=repeat, deadline=deadline)

    def close(self) -> None:
        self.transport.close()


def open_client(
    endpoint: Endpoint,
    settings: ConnectionSettings,
    *,
    cache: ResponseCache,
    environ: dict[str, str],
    concurrency: int,
    rng: random.Random | None = None,
) -> ProviderClient:
    policy = RetryPolicy(
        max_retries=settings.max_retries, base_s=settings.backoff_s, max_s=settings.max_backoff_s
    )
    transport = Transport(
        endpoint,
        policy=policy,
        timeout_s=settings.timeout_s,
        pool_size=concurrency,
        environ=environ,
        rng=rng,
    )
    return ProviderClient(transport, cache)
