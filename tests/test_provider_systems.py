"""The openai, anthropic and http kinds against a real server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.servers.model_server import ModelServer, Scripted

from gate.errors import InputError, SystemCallError
from gate.inputs.config import AnthropicSystem, HttpSystem, OpenAISystem
from gate.providers.endpoints import anthropic_endpoint, openai_endpoint
from gate.providers.pricing import cost_usd
from gate.report.output import Usage
from gate.systems import SystemEnv, SystemRequest, build_system

KEY = "sk-systems-test-abcdef0123"
PRICES = {"chat-small": {"input": 1.0, "output": 4.0}, "service-v1": {"input": 2.0, "output": 2.0}}


MODEL_SERVER = {"api_key": KEY}  # `server`'s options (conftest.py)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    (root / "config").mkdir(parents=True)
    (root / "prompts").mkdir()
    (root / "config/model.yaml").write_text(
        "model: chat-small\ntemperature: 0\nmax_tokens: 64\nseed: 7\nsystem: prompts/system.md\n"
    )
    (root / "prompts/system.md").write_text("You are the {{ product }} assistant.")
    (root / "prompts/ask.j2").write_text("Question: {{ question }}")
    return root


def make_env(root: Path, **environ: str) -> SystemEnv:
    return SystemEnv(
        root=root,
        config_dir=root,
        environ=environ,
        cache_dir=root.parent / "cache",
        use_cache=True,
        prices=PRICES,
        concurrency=4,
    )


def request(case_id: str = "c1", **values: Any) -> SystemRequest:
    return SystemRequest(case_id=case_id, input={**values, "id": case_id}, timeout_s=10)


def openai_config(server: ModelServer, **extra: Any) -> OpenAISystem:
    return OpenAISystem.model_validate(
        {
            "kind": "openai",
            "model_config": "config/model.yaml",
            "prompt": "prompts/ask.j2",
            "base_url": server.openai_base_url,
            "api_key_env": "TEST_KEY",
            "max_retries": 1,
            "backoff_s": 0.01,
            **extra,
        }
    )


def test_openai_request_shape_output_usage_and_cost(server: ModelServer, checkout: Path) -> None:
    system = build_system(openai_config(server), make_env(checkout, TEST_KEY=KEY))
    output = system.call(request(question="Where is my card?", product="Ledgerly"))
    sent = server.log[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body == {
        "temperature": 0,
        "max_tokens": 64,
        "seed": 7,
        "model": "chat-small",
        "messages": [
            {"role": "system", "content": "You are the Ledgerly assistant."},
            {"role": "user", "content": "Question: Where is my card?"},
        ],
    }
    assert output.text == "[chat-small] Question: Where is my card?"
    # the server counts words: 5 + 5 in, 6 out
    assert output.usage == Usage(prompt_tokens=10, completion_tokens=6)
    assert output.cost_usd == pytest.approx((10 * 1.0 + 6 * 4.0) / 1e6)
    assert output.model == "chat-small" and output.finish_reason == "stop"
    assert not output.cached
    system.close()


def test_describe_and_files_hold_no_secret(server: ModelServer, checkout: Path) -> None:
    system = build_system(openai_config(server), make_env(checkout, TEST_KEY=KEY))
    described = system.describe()
    assert described["kind"] == "openai" and described["model"] == "chat-small"
    assert described["base_url"] == f"{server.openai_base_url}/chat/completions"
    assert described["provider"] == "openai-compatible"
    assert KEY not in json.dumps(described)
    assert sorted(p.name for p in system.files()) == ["ask.j2", "model.yaml", "system.md"]


def test_base_url_defaults_to_openai_base_url(server: ModelServer, checkout: Path) -> None:
    config = openai_config(server).model_copy(update={"base_url": None})
    env = make_env(checkout, TEST_KEY=KEY, OPENAI_BASE_URL=server.openai_base_url)
    assert build_system(config, env).call(request(question="q", product="p")).text.endswith("q")


def test_the_public_endpoint_needs_a_key(checkout: Path) -> None:
    config = OpenAISystem.model_validate(
        {"kind": "openai", "model_config": "config/model.yaml", "prompt": "prompts/ask.j2"}
    )
    with pytest.raises(InputError) as caught:
        build_system(config, make_env(checkout))
    assert caught.value.key == "system.api_key_env" and "OPENAI_API_KEY" in str(caught.value)


def test_a_wrong_key_is_an_error_that_does_not_repeat_the_key(
    server: ModelServer, checkout: Path
) -> None:
    wrong = "sk-wrong-key-9876543210"
    system = build_system(openai_config(server), make_env(checkout, TEST_KEY=wrong))
    with pytest.raises(SystemCallError) as caught:
        system.call(request(question="q", product="p"))
    assert "HTTP 401" in str(caught.value)
    assert "the endpoint refused the API key in $TEST_KEY" in str(caught.value)
    assert wrong not in str(caught.value)
    assert server.requests == 1


def test_a_response_of_the_wrong_shape_is_an_error(server: ModelServer, checkout: Path) -> None:
    server.script(Scripted(200, {"choices": []}))
    system = build_system(openai_config(server), make_env(checkout, TEST_KEY=KEY))
    with pytest.raises(SystemCallError, match="unexpected response shape at `choices`"):
        system.call(request(question="q", product="p"))


def test_the_second_identical_call_comes_from_the_cache(
    server: ModelServer, checkout: Path
) -> None:
    env = make_env(checkout, TEST_KEY=KEY)
    first = build_system(openai_config(server), env).call(request(question="q", product="p"))
    again = build_system(openai_config(server), env).call(request(question="q", product="p"))
    assert server.requests == 1 and again.cached and not first.cached
    assert again.text == first.text and again.usage == first.usage
    assert again.cost_usd == first.cost_usd  # what the call costs, cached or not


def test_a_changed_prompt_misses_the_cache(server: ModelServer, checkout: Path) -> None:
    env = make_env(checkout, TEST_KEY=KEY)
    build_system(openai_config(server), env).call(request(question="q", product="p"))
    (checkout / "prompts/ask.j2").write_text("Please answer: {{ question }}")
    changed = build_system(openai_config(server), env).call(request(question="q", product="p"))
    assert server.requests == 2 and not changed.cached
    assert changed.text == "[chat-small] Please answer: q"


def test_repeats_are_separate_requests(server: ModelServer, checkout: Path) -> None:
    system = build_system(openai_config(server), make_env(checkout, TEST_KEY=KEY))
    for repeat in range(3):
        system.call(
            SystemRequest(case_id="c", input={"question": "q", "product": "p"}, repeat=repeat)
        )
    assert server.requests == 3


def test_anthropic_request_shape_and_usage(server: ModelServer, checkout: Path) -> None:
    (checkout / "config/claude.yaml").write_text("model: claude-test\nsystem: prompts/system.md\n")
    config = AnthropicSystem.model_validate(
        {
            "kind": "anthropic",
            "model_config": "config/claude.yaml",
            "prompt": "prompts/ask.j2",
            "base_url": server.url,
        }
    )
    system = build_system(config, make_env(checkout, ANTHROPIC_API_KEY=KEY))
    output = system.call(request(question="Fees?", product="Ledgerly"))
    sent = server.log[0]
    assert sent.path == "/v1/messages"
    assert sent.headers["x-api-key"] == KEY and sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body == {
        "max_tokens": 1024,
        "model": "claude-test",
        "messages": [{"role": "user", "content": "Question: Fees?"}],
        "system": "You are the Ledgerly assistant.",
    }
    assert output.text == "[claude-test] Question: Fees?"
    assert output.usage == Usage(prompt_tokens=7, completion_tokens=3)
    assert system.describe()["provider"] == "anthropic"


def http_config(server: ModelServer, **extra: Any) -> HttpSystem:
    return HttpSystem.model_validate(
        {
            "kind": "http",
            "url": server.service_url,
            "headers": {"Authorization": "Bearer ${SERVICE_TOKEN}", "X-Team": "support"},
            **extra,
        }
    )


def test_http_posts_the_input_with_its_id(server: ModelServer, tmp_path: Path) -> None:
    system = build_system(http_config(server), make_env(tmp_path, SERVICE_TOKEN=KEY))
    output = system.call(request("case-7", question="Hi"))
    sent = server.log[0]
    assert sent.body == {"question": "Hi", "id": "case-7"}
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.headers["x-team"] == "support"
    assert output.text == "service: question=Hi"
    assert output.data == {"case": "case-7"} and output.model == "service-v1"
    assert output.cost_usd == pytest.approx((1 * 2.0 + 2 * 2.0) / 1e6)
    assert KEY not in json.dumps(system.describe())


def test_http_is_not_cached_unless_asked(server: ModelServer, tmp_path: Path) -> None:
    env = make_env(tmp_path, SERVICE_TOKEN=KEY)
    plain = build_system(http_config(server), env)
    plain.call(request(question="Hi"))
    plain.call(request(question="Hi"))
    assert server.requests == 2
    cached = build_system(http_config(server, cache=True), env)
    cached.call(request(question="Hi"))
    assert cached.call(request(question="Hi")).cached
    assert server.requests == 3


def test_http_header_variables_must_be_set(server: ModelServer, tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        build_system(http_config(server), make_env(tmp_path))
    assert caught.value.key == "system.headers.Authorization"
    assert "SERVICE_TOKEN is not set" in str(caught.value)


def test_http_answer_without_text_is_an_error(server: ModelServer, tmp_path: Path) -> None:
    server.script(Scripted(200, {"answer": "no text key"}))
    system = build_system(http_config(server), make_env(tmp_path, SERVICE_TOKEN=KEY))
    with pytest.raises(SystemCallError, match="no string `text`"):
        system.call(request(question="Hi"))


def test_azure_and_query_strings() -> None:
    env = {"AZURE_KEY": KEY}
    base = "https://acme.openai.azure.com/openai/deployments/gpt4o?api-version=2024-06-01"
    endpoint = openai_endpoint(base, "AZURE_KEY", env, "system")
    assert endpoint.url == (
        "https://acme.openai.azure.com/openai/deployments/gpt4o/chat/completions"
        "?api-version=2024-06-01"
    )
    assert endpoint.headers == {"api-key": KEY} and endpoint.provider == "azure"
    signed = openai_endpoint("https://proxy.example/v1?key=abc123secret", None, {}, "system")
    assert "abc123secret" not in signed.display_url and signed.headers == {}


def test_anthropic_base_url_forms() -> None:
    for base in ("https://gw.example", "https://gw.example/", "https://gw.example/v1"):
        assert anthropic_endpoint(base, None, {}, "s").url == "https://gw.example/v1/messages"


def test_prices_match_dated_snapshots_but_not_other_models() -> None:
    prices = {"gpt-4o": {"input": 2.5, "output": 10.0}}
    usage = Usage(prompt_tokens=1000, completion_tokens=100)
    assert cost_usd(prices, usage, "gpt-4o") == pytest.approx(0.0035)
    assert cost_usd(prices, usage, None, "gpt-4o-2024-08-06") == pytest.approx(0.0035)
    assert cost_usd(prices, usage, "gpt-4o-mini") is None
    assert cost_usd(prices, None, "gpt-4o") is None
