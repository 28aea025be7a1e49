"""The provider transport against a real HTTP server: retries, timeouts, pooling, secrets."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from helpers.servers.model_server import Faults, ModelServer, Scripted

from gate.providers.secrets import Secrets
from gate.providers.transport import Endpoint, ProviderError, Transport, proxies_for
from gate.retry import RetryPolicy

KEY = "sk-transport-test-0123456789"
BODY = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def transport(
    url: str,
    *,
    retries: int = 3,
    timeout_s: float = 2.0,
    base_s: float = 0.01,
    pool: int = 4,
    environ: dict[str, str] | None = None,
) -> Transport:
    endpoint = Endpoint(
        provider="openai",
        url=url,
        display_url=url,
        headers={"Authorization": f"Bearer {KEY}"},
        secrets=Secrets([KEY]),
    )
    return Transport(
        endpoint,
        policy=RetryPolicy(max_retries=retries, base_s=base_s, max_s=5.0),
        timeout_s=timeout_s,
        pool_size=pool,
        environ=environ or {},
    )


def chat_url(server: ModelServer) -> str:
    return f"{server.openai_base_url}/chat/completions"


def test_success_returns_the_decoded_answer_and_sends_the_key(server: ModelServer) -> None:
    client = transport(chat_url(server))
    data = client.post_json(BODY)
    assert data["choices"][0]["message"]["content"] == "[m] hello"
    assert server.log[0].headers["authorization"] == f"Bearer {KEY}"
    assert server.log[0].body == BODY


def test_429_is_retried_after_the_servers_retry_after(server: ModelServer) -> None:
    server.script(Scripted(429, {"error": {"message": "slow down"}}, {"Retry-After": "0.4"}))
    client = transport(chat_url(server))
    started = time.monotonic()
    client.post_json(BODY)
    assert time.monotonic() - started >= 0.4
    assert server.requests == 2 and client.stats.rate_limited == 1 and client.stats.retries == 1


def test_openai_reset_header_is_honoured_without_retry_after(server: ModelServer) -> None:
    server.script(
        Scripted(
            429,
            {"error": {"message": "tokens"}},
            {"x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "300ms"},
        )
    )
    client = transport(chat_url(server))
    started = time.monotonic()
    client.post_json(BODY)
    assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("status", [500, 502, 503, 529, 408])
def test_server_errors_are_retried(server: ModelServer, status: int) -> None:
    server.script(Scripted(status, {"error": {"message": "oops"}}))
    assert transport(chat_url(server)).post_json(BODY)["choices"]
    assert server.requests == 2


@pytest.mark.parametrize("status", [400, 422])  # 401, 403, 404: tests/test_dead_endpoints.py
def test_client_errors_are_not_retried(server: ModelServer, status: int) -> None:
    server.script(Scripted(status, {"error": {"message": "model `m` does not exist"}}))
    with pytest.raises(ProviderError) as caught:
        transport(chat_url(server)).post_json(BODY)
    assert server.requests == 1
    message = str(caught.value)
    assert f"HTTP {status}" in message and "not retried" in message
    assert "model `m` does not exist" in message and caught.value.status == status


def test_after_the_last_retry_the_error_names_status_and_attempts(server: ModelServer) -> None:
    server.script(*[Scripted(503, {"error": {"message": "overloaded"}})] * 4)
    with pytest.raises(ProviderError) as caught:
        transport(chat_url(server), retries=3).post_json(BODY)
    assert server.requests == 4
    assert str(caught.value) == (
        "openai: HTTP 503 Service Unavailable: overloaded, after 4 attempts"
    )
    assert caught.value.attempts == 4


def test_a_hang_times_out_and_is_retried() -> None:
    faults = Faults(rate_hang=1.0, hang_s=5)
    with ModelServer(faults=faults) as hanging:
        started = time.monotonic()
        with pytest.raises(ProviderError) as caught:
            transport(chat_url(hanging), retries=2, timeout_s=0.2).post_json(BODY)
        elapsed = time.monotonic() - started
        assert hanging.requests == 3
    assert "no response within 0.2s, after 3 attempts" in str(caught.value)
    assert elapsed < 2.0


def test_a_hang_then_success() -> None:
    with ModelServer(faults=Faults(rate_hang=0.3, hang_s=5), seed=3) as flaky:
        client = transport(chat_url(flaky), retries=10, timeout_s=0.2)
        for n in range(4):
            client.post_json({**BODY, "n": n})
        assert flaky.counts["hang"] > 0 and flaky.counts["200"] == 4


def test_the_case_deadline_stops_retries_early(server: ModelServer) -> None:
    server.script(Scripted(429, {"error": {"message": "wait"}}, {"Retry-After": "3"}))
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        transport(chat_url(server)).post_json(BODY, deadline=time.monotonic() + 1.0)
    assert time.monotonic() - started < 0.9  # not the 3 s the server asked for
    assert "would pass the case timeout" in str(caught.value)
    assert "HTTP 429" in str(caught.value)


def test_connection_refused_is_reported_at_once_with_the_fix() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    client = transport(url, retries=2, base_s=5.0)
    started = time.monotonic()
    with pytest.raises(ProviderError) as caught:
        client.post_json(BODY)
    assert time.monotonic() - started < 2.0  # no 5 s backoff: a refusal is not retried
    assert str(caught.value) == (
        f"openai: connection refused at 127.0.0.1:{port} ({url}): nothing is listening "
        "there; start the server, or fix `base_url`"
    )
    assert client.stats.requests == 1 and client.stats.retries == 0


def test_a_non_json_success_is_an_error(server: ModelServer) -> None:
    server.script(Scripted(200, b"<html>gateway</html>"))
    with pytest.raises(ProviderError, match="not JSON"):
        transport(chat_url(server)).post_json(BODY)


def test_secrets_echoed_by_the_server_are_scrubbed_from_errors(server: ModelServer) -> None:
    server.script(Scripted(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}}))
    with pytest.raises(ProviderError) as caught:
        transport(chat_url(server)).post_json(BODY)
    assert KEY not in str(caught.value) and "Incorrect API key provided: ***" in str(caught.value)


def test_secrets_echoed_in_an_answer_are_scrubbed(server: ModelServer) -> None:
    server.script(Scripted(200, {"echo": f"Bearer {KEY}", "raw": KEY}))
    data = transport(chat_url(server)).post_json(BODY)
    assert KEY not in str(data)


def test_one_pooled_session_reuses_connections(server: ModelServer) -> None:
    client = transport(chat_url(server), pool=4)
    threads = [
        threading.Thread(
            target=lambda i=i: [client.post_json({**BODY, "i": i, "j": j}) for j in range(10)]
        )
        for i in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert server.requests == 40
    assert server.connections <= 4


def test_proxies_come_from_the_environ_passed_in() -> None:
    env = {"HTTPS_PROXY": "http://proxy:3128", "NO_PROXY": "localhost,127.0.0.1"}
    assert proxies_for("https://api.openai.com/v1", env) == {"https": "http://proxy:3128"}
    assert proxies_for("http://127.0.0.1:8000/v1", env) == {}
    assert proxies_for("https://api.openai.com/v1", {}) == {}
    corp = {"all_proxy": "http://corp:8080", "no_proxy": ".internal.example, llm:8000"}
    assert proxies_for("http://vllm.internal.example/v1", corp) == {}
    assert proxies_for("http://llm:8000/v1", corp) == {}
    assert proxies_for("http://api.example/v1", corp) == {"http": "http://corp:8080"}
    assert proxies_for("http://x/v1", {"HTTP_PROXY": "http://p:1", "NO_PROXY": "*"}) == {}
