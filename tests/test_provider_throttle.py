"""The shared slow-down, with real threads: a cool-down gate and an adaptive in-flight limit."""

from __future__ import annotations

import threading
import time

import pytest
from helpers.servers.model_server import Faults, ModelServer

from gate.providers.throttle import Throttle, ThrottleTimeout
from gate.providers.transport import Endpoint, Transport
from gate.retry import RetryPolicy


def test_a_429_closes_the_gate_for_every_worker() -> None:
    throttle = Throttle(8)
    throttle.rate_limited(0.3)
    started = time.monotonic()
    passed: list[float] = []

    def worker() -> None:
        with throttle.slot(deadline=None):
            passed.append(time.monotonic() - started)

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert len(passed) == 6
    assert min(passed) >= 0.28


def test_the_first_429_of_a_pile_up_halves_the_limit_and_successes_restore_it() -> None:
    throttle = Throttle(16)
    throttle.rate_limited(0.0)
    assert throttle.limit == 8
    throttle.rate_limited(0.0)
    assert throttle.limit == 4 and throttle.slowdowns == 2
    for _ in range(200):
        throttle.succeeded()
    assert throttle.limit == 16


def test_429s_during_a_cool_down_count_once() -> None:
    throttle = Throttle(16)
    for _ in range(10):  # answers to requests that were already in flight
        throttle.rate_limited(0.5)
    assert throttle.limit == 8 and throttle.slowdowns == 1


def test_the_limit_bounds_requests_in_flight() -> None:
    throttle = Throttle(4)
    throttle.rate_limited(0.0)  # limit 2
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def worker() -> None:
        with throttle.slot(deadline=None):
            with lock:
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.02)
            with lock:
                state["now"] -= 1

    threads = [threading.Thread(target=worker) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert state["peak"] == 2


def test_a_cool_down_longer_than_the_deadline_gives_up_at_once() -> None:
    throttle = Throttle(2)
    throttle.rate_limited(10.0)
    started = time.monotonic()
    with pytest.raises(ThrottleTimeout), throttle.slot(deadline=time.monotonic() + 1.0):
        pass
    assert time.monotonic() - started < 0.5


class NoSlowDown(Throttle):
    """What a client without the shared limiter does: retry on its own, never slow down."""

    def rate_limited(self, wait_s: float) -> None:
        pass


def hammer(throttle: Throttle, server_limit: int) -> tuple[int, int]:
    """16 workers, 96 requests against a server that accepts `server_limit` at once."""
    with ModelServer(
        latency_s=0.03, max_in_flight=server_limit, faults=Faults(retry_after="0.05")
    ) as server:
        transport = Transport(
            Endpoint("openai", f"{server.openai_base_url}/chat/completions", "test"),
            policy=RetryPolicy(max_retries=20, base_s=0.05, max_s=0.2),
            timeout_s=5,
            pool_size=16,
            environ={},
            throttle=throttle,
        )
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}

        def work(worker: int) -> None:
            for n in range(6):
                transport.post_json({**body, "n": n, "worker": worker})

        threads = [threading.Thread(target=work, args=(w,)) for w in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        transport.close()
        return server.counts["200"], server.counts["429"]


def test_a_rate_limited_run_slows_down_instead_of_hammering() -> None:
    answered, rejected = hammer(Throttle(16), server_limit=4)
    alone_answered, alone_rejected = hammer(NoSlowDown(16), server_limit=4)
    assert answered == alone_answered == 96
    # the shared limiter settles near the server's limit; lone retries keep knocking
    assert rejected * 2 < alone_rejected, (rejected, alone_rejected)
