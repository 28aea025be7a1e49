"""API keys never reach reports, the cache, the replay file, stdout or stderr.

The server here is careless on purpose: it echoes the credentials it received in its error
messages and, for some cases, in its answers. `gate run` runs as a real subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers.cli import Project, run_gate
from helpers.servers.model_server import (
    ChatRequest,
    ModelServer,
    Scripted,
    echo_model,
    echo_service,
)

from gate.providers.secrets import Secrets, expand_headers, redact_url

KEY = "sk-live-4f9a2c7e1b3d5f6a8c0e"
TOKEN = "svc-token-9e8d7c6b5a4f3e2d"


def leaky_model(request: ChatRequest) -> str:
    if "leak" in request.user:
        return f"Sure! You sent: {request.headers.get('authorization')}"
    return echo_model(request)


def leaky_service(body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    answer = echo_service(body, headers)
    if "leak" in str(body):
        answer["text"] += f" (auth was {headers.get('authorization')})"
        answer["debug"] = {"headers": headers}
    return answer


MODEL_SERVER = {
    "api_key": KEY,
    "responder": leaky_model,
    "service": leaky_service,
}  # `server`'s options (conftest.py)


def secret_project(project: Project, server: ModelServer) -> Project:
    project.write("config/model.yaml", "model: m\n")
    project.write("prompts/ask.j2", "{{ question }}")
    rows = [
        {"id": f"q{i}", "input": {"question": q}, "expect": {"must_include": ["sent"]}}
        for i, q in enumerate(["please leak", "hello", "leak again", "fine", "ok", "more"])
    ]
    project.cases("cases/ask.jsonl", rows)
    retry = {"max_retries": 1, "backoff_s": 0.01}
    project.config(
        {
            "concurrency": 2,
            "suites": [
                {
                    "name": "chat",
                    "cases": "cases/ask.jsonl",
                    "system": {
                        "kind": "openai",
                        "model_config": "config/model.yaml",
                        "prompt": "prompts/ask.j2",
                        "base_url": server.openai_base_url,
                        "api_key_env": "MY_PROVIDER_KEY",
                        **retry,
                    },
                },
                {
                    "name": "service",
                    "cases": "cases/ask.jsonl",
                    "system": {
                        "kind": "http",
                        "url": server.service_url,
                        "headers": {"Authorization": "Bearer ${SERVICE_TOKEN}"},
                        "cache": True,
                        **retry,
                    },
                },
            ],
        }
    )
    return project


def all_text(folder: Path) -> str:
    return "\n".join(
        f"{path}\n{path.read_text(errors='replace')}"
        for path in folder.rglob("*")
        if path.is_file()
    )


def test_keys_are_nowhere_in_what_the_gate_writes(project: Project, server: ModelServer) -> None:
    secret_project(project, server)
    # the first answers of the run echo the key in an error body, as careless servers do (a
    # 400: a 401 would stop the endpoint's every call, tests/test_dead_endpoints.py)
    server.script(
        Scripted(400, {"error": {"message": f"Incorrect API key provided: Bearer {KEY}"}}),
        Scripted(500, {"error": {"message": f"upstream failed for x-api-key={KEY}"}}),
        Scripted(500, {"error": {"message": f"upstream failed for x-api-key={KEY}"}}),
    )
    env = {
        "GATE_CACHE_DIR": str(project.root / "cache"),
        "MY_PROVIDER_KEY": KEY,
        "SERVICE_TOKEN": TOKEN,
    }
    done = run_gate(
        "run", "--out", "out", "--record", "out/replay.jsonl", cwd=project.root, env=env
    )
    assert done.code == 0, done.err

    # the secrets really were sent, and really came back in answers and errors
    sent = [e for e in server.log if e.path == "/v1/chat/completions"]
    assert sent and all(e.headers["authorization"] == f"Bearer {KEY}" for e in sent)
    assert any(e.headers.get("authorization") == f"Bearer {TOKEN}" for e in server.log)
    report = (project.root / "out" / "run.chat.jsonl").read_text()
    assert "***" in report and "Incorrect API key provided" in report

    written = all_text(project.root / "out") + all_text(project.root / "cache")
    for secret in (KEY, TOKEN, KEY[-12:], TOKEN[-12:]):
        assert secret not in written
        assert secret not in done.out and secret not in done.err
    assert list((project.root / "cache").rglob("*.json"))

    # a rerun served from the cache stays clean too
    again = run_gate("run", "--out", "out2", cwd=project.root, env=env)
    assert again.code == 0, again.err
    assert KEY not in all_text(project.root / "out2") + again.out + again.err


# --- the scrubber itself ------------------------------------------------------------------


def test_scrub_masks_every_form_of_a_secret() -> None:
    secrets = Secrets(["ab/cd+ef==sekret"])
    assert secrets.scrub("key ab/cd+ef==sekret end") == "key *** end"
    assert secrets.scrub('{"k": "ab\\/cd+ef==sekret"}') == '{"k": "***"}'


def test_answers_keep_their_words_error_messages_lose_credentials() -> None:
    secrets = Secrets(["sk-known-secret"])
    answer = "Send it with Bearer authentication; the key sk-known-secret is yours."
    assert secrets.scrub(answer) == "Send it with Bearer authentication; the key *** is yours."
    message = "401: got Authorization: Bearer sk-other-0123456789 and sk-known-secret"
    assert secrets.scrub_message(message) == "401: got Authorization: Bearer *** and ***"


def test_short_values_are_not_treated_as_secrets() -> None:
    assert Secrets(["ab"]).scrub("abc ab") == "abc ab"


def test_header_expansion_marks_secrets() -> None:
    headers, secrets = expand_headers(
        {"Authorization": "Bearer ${TOKEN}", "X-Api-Key": "literal-key-123", "X-Team": "blue"},
        {"TOKEN": "tok-abcdef123"},
        "system.headers",
    )
    assert headers["Authorization"] == "Bearer tok-abcdef123"
    text = "Bearer tok-abcdef123 literal-key-123 blue tok-abcdef123"
    assert secrets.scrub(text) == "*** *** blue ***"


def test_urls_lose_user_info_and_sensitive_query_values() -> None:
    url = "https://user:pass@gw.example:8443/v1/chat?api-version=1&key=s3cr3t&sig=xyz"
    assert redact_url(url) == "https://gw.example:8443/v1/chat?api-version=1&key=***&sig=***"
