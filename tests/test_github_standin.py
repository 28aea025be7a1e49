"""The API stand-in holds GitHub's OpenAPI description to account: wrong requests fail, and
its own answers are checked too (so the other tests' green means something)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import requests
from helpers.servers.github_api import GitHubServer, OpenApi

TOKEN = "ghs_standinToken"
HEADERS = {
    "Accept": "application/vnd.github+json",
    "X-GitHub-Api-Version": "2022-11-28",
    "Authorization": f"Bearer {TOKEN}",
    "User-Agent": "test",
}
COMMENTS = "/repos/octo/app/issues/3/comments"


@pytest.fixture
def server() -> Iterator[GitHubServer]:
    with GitHubServer() as srv:
        srv.state.add_token(TOKEN)
        yield srv


def test_request_without_the_required_body_field_is_rejected(server: GitHubServer) -> None:
    response = requests.post(server.url + COMMENTS, json={"text": "hi"}, headers=HEADERS)
    assert response.status_code == 422
    assert any("'body' is a required property" in v for v in server.state.violations)


def test_wrongly_typed_body_and_unknown_query_are_violations(server: GitHubServer) -> None:
    requests.post(server.url + COMMENTS, json={"body": 5}, headers=HEADERS)
    requests.get(server.url + COMMENTS, params={"perpage": 100}, headers=HEADERS)
    requests.get(server.url + COMMENTS, params={"per_page": "lots"}, headers=HEADERS)
    joined = "\n".join(server.state.violations)
    assert "5 is not of type 'string'" in joined
    assert "'perpage' is not defined" in joined
    assert "'per_page' must be an integer" in joined


def test_unsupported_api_version_and_missing_headers(server: GitHubServer) -> None:
    bad = requests.get(
        server.url + COMMENTS, headers={**HEADERS, "X-GitHub-Api-Version": "1999-01-01"}
    )
    assert bad.status_code == 400
    requests.get(server.url + COMMENTS, headers={"Authorization": f"Bearer {TOKEN}"})
    assert "missing X-GitHub-Api-Version header" in server.state.violations


def test_its_own_comment_objects_satisfy_the_schema(server: GitHubServer) -> None:
    created = requests.post(server.url + COMMENTS, json={"body": "hi"}, headers=HEADERS)
    assert created.status_code == 201
    listed = requests.get(server.url + COMMENTS, headers=HEADERS).json()
    api = OpenApi()
    op, _ = api.find("GET", COMMENTS) or (None, None)
    assert op is not None and api.response_errors(op, 200, listed) == []
    assert server.state.violations == []


def test_the_schema_check_catches_a_malformed_comment() -> None:
    api = OpenApi()
    found = api.find("POST", COMMENTS)
    assert found is not None
    op, params = found
    assert params == {"owner": "octo", "repo": "app", "issue_number": "3"}
    broken = {"id": "not-an-int", "body": "x", "user": None}
    problems = api.response_errors(op, 201, broken)
    assert any("'not-an-int' is not of type 'integer'" in p for p in problems)
    assert any("'node_id' is a required property" in p for p in problems)
    # `user` is nullable in GitHub's description: null is fine
    assert not any(p.startswith("response 201 user") for p in problems)


def test_pagination_links_point_back_at_the_stand_in(server: GitHubServer) -> None:
    user = server.state.tokens[TOKEN]
    for n in range(5):
        server.state.add_comment("octo/app", 3, str(n), user)
    first = requests.get(server.url + COMMENTS, params={"per_page": 2}, headers=HEADERS)
    assert [c["body"] for c in first.json()] == ["0", "1"]
    assert first.links["next"]["url"].startswith(server.url)
    assert "page=3" in first.links["last"]["url"]
    last = requests.get(first.links["last"]["url"], headers=HEADERS)
    assert [c["body"] for c in last.json()] == ["4"] and "next" not in last.links
