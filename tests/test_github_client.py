"""The generic GitHub client against the stand-in server: headers, retries, pagination."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.servers.github_api import Fault, GitHubServer

from gate.github.client import GITHUB_RETRY, GitHubApiError, GitHubClient

TOKEN = "ghs_client_test_token_0123456789"
REPO = "octo/app"
COMMENTS = f"/repos/{REPO}/issues/7/comments"


@pytest.fixture
def server(api: GitHubServer) -> GitHubServer:
    """conftest's GitHub stand-in (no request off GitHub's description), knowing TOKEN."""
    api.state.add_token(TOKEN)
    return api


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def client_for(server: GitHubServer, **kwargs: object) -> tuple[GitHubClient, Sleeps]:
    sleeps = Sleeps()
    policy = kwargs.pop("retry", replace(GITHUB_RETRY, max_retries=3, base_s=0.5))
    client = GitHubClient(TOKEN, server.url, retry=policy, sleep=sleeps, **kwargs)  # type: ignore[arg-type]
    return client, sleeps


def test_sends_github_headers_and_token(server: GitHubServer) -> None:
    client, _ = client_for(server)
    client.request("POST", COMMENTS, json={"body": "hi"})
    sent = server.state.requests("POST")[0].headers
    assert sent["accept"] == "application/vnd.github+json"
    assert sent["x-github-api-version"] == "2022-11-28"
    assert sent["authorization"] == f"Bearer {TOKEN}"
    assert sent["user-agent"].startswith("eval-gate/")


def test_enterprise_api_root_with_path_prefix() -> None:
    with GitHubServer(prefix="/api/v3") as ghes:
        ghes.state.add_token(TOKEN)
        client, _ = client_for(ghes)
        assert ghes.url.endswith("/api/v3")
        created = client.request("POST", COMMENTS, json={"body": "on GHES"}).json()
        assert created["url"].startswith(ghes.url + "/repos/")
        assert [c["body"] for c in client.paginate(COMMENTS)] == ["on GHES"]
        assert ghes.state.violations == []


def test_server_error_is_retried_with_backoff(server: GitHubServer) -> None:
    server.state.inject(Fault("GET", "/comments$", 502, times=2))
    client, sleeps = client_for(server)
    assert client.get_json(COMMENTS) == []
    assert [r.status for r in server.state.requests("GET")] == [502, 502, 200]
    assert sleeps == [0.5, 1.0]


def test_secondary_rate_limit_waits_retry_after(server: GitHubServer) -> None:
    body = {"message": "You have exceeded a secondary rate limit.", "documentation_url": "x"}
    server.state.inject(Fault("GET", "/comments$", 403, {"Retry-After": "7"}, body))
    client, sleeps = client_for(server)
    assert client.get_json(COMMENTS) == []
    assert sleeps == [7.0]


def test_rate_limit_reset_header_is_honoured(server: GitHubServer) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1000030"}
    server.state.inject(Fault("GET", "/comments$", 429, headers))
    client, sleeps = client_for(server, clock=lambda: 1_000_000.0)
    client.get_json(COMMENTS)
    assert sleeps == [31.0]


def test_rate_limit_wait_beyond_the_cap_fails_instead_of_hanging(server: GitHubServer) -> None:
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1009999"}
    server.state.inject(Fault("GET", "/comments$", 403, headers))
    client, sleeps = client_for(server, clock=lambda: 1_000_000.0)
    with pytest.raises(GitHubApiError) as info:
        client.get_json(COMMENTS)
    assert info.value.status == 403 and sleeps == []


def test_forbidden_is_not_retried_and_never_shows_the_token(server: GitHubServer) -> None:
    server.state.add_token("ghs_readonly_secret_value", read_only=True)
    client = GitHubClient("ghs_readonly_secret_value", server.url, sleep=Sleeps())
    with pytest.raises(GitHubApiError) as info:
        client.request("POST", COMMENTS, json={"body": "x"})
    assert info.value.status == 403
    assert "Resource not accessible by integration" in str(info.value)
    assert "ghs_readonly_secret_value" not in str(info.value)
    assert len(server.state.requests("POST")) == 1


def test_post_is_not_blindly_retried_on_server_error(server: GitHubServer) -> None:
    server.state.inject(Fault("POST", "/comments$", 502))
    client, sleeps = client_for(server)
    with pytest.raises(GitHubApiError) as info:
        client.request("POST", COMMENTS, json={"body": "x"})
    assert info.value.status == 502 and sleeps == []


def test_gives_up_after_the_last_attempt(server: GitHubServer) -> None:
    server.state.inject(Fault("GET", "/comments$", 503, times=10))
    client, sleeps = client_for(server)
    with pytest.raises(GitHubApiError) as info:
        client.get_json(COMMENTS)
    assert info.value.status == 503
    assert len(server.state.requests("GET")) == 4 and len(sleeps) == 3


def test_bad_credentials_fail_with_githubs_message(server: GitHubServer) -> None:
    client = GitHubClient("wrong", server.url, sleep=Sleeps())
    with pytest.raises(GitHubApiError, match="Bad credentials"):
        client.get_json(COMMENTS)


def test_pagination_follows_link_headers(server: GitHubServer) -> None:
    user = server.state.tokens[TOKEN]
    for n in range(250):
        server.state.add_comment(REPO, 7, f"comment {n}", user)
    client, _ = client_for(server)
    bodies = [c["body"] for c in client.paginate(COMMENTS, {"per_page": 100})]
    assert bodies == [f"comment {n}" for n in range(250)]
    pages = [r.query.get("page", ["1"])[0] for r in server.state.requests("GET")]
    assert pages == ["1", "2", "3"]
    assert all(r.query["per_page"] == ["100"] for r in server.state.requests("GET"))


def test_pagination_refuses_links_to_another_host(server: GitHubServer) -> None:
    link = '<https://api.github.com/repos/octo/app/issues/7/comments?page=2>; rel="next"'
    server.state.inject(Fault("GET", "/comments$", 200, {"Link": link}, body=[]))
    client, _ = client_for(server)
    with pytest.raises(GitHubApiError, match="leaves the API host"):
        list(client.paginate(COMMENTS))


def test_connection_refused_is_retried_then_reported() -> None:
    with GitHubServer() as srv:
        url = srv.url
    client = GitHubClient(TOKEN, url, retry=replace(GITHUB_RETRY, max_retries=1, base_s=0.01))
    with pytest.raises(GitHubApiError) as info:
        client.get_json(COMMENTS)
    assert info.value.status is None and "ConnectionError" in str(info.value)
