"""The comment upsert against the stateful stand-in: found across pages, edited in place,
never duplicated, and one exception per failure."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers.servers.github_api import Fault, GitHubServer

from gate.github.client import GITHUB_RETRY, GitHubClient
from gate.github.comments import (
    CannotPostComment,
    CannotReadComments,
    CommentTarget,
    authenticated_login,
    list_comments,
    upsert_comment,
)

JOB_TOKEN = "ghs_jobTokenForComments"
PAT = "ghp_personalAccessToken"
REPO = "octo/app"
TARGET = CommentTarget(repository=REPO, issue_number=12)
MARKER = "<!-- eval-gate:support -->"


@pytest.fixture
def server(api: GitHubServer) -> GitHubServer:
    """conftest's GitHub stand-in (no request off GitHub's description), knowing the job's
    token and a person's."""
    api.state.add_token(JOB_TOKEN)
    api.state.add_token(PAT, "ada")
    return api


def client(server: GitHubServer, token: str = JOB_TOKEN) -> GitHubClient:
    return GitHubClient(token, server.url, retry=replace(GITHUB_RETRY, max_retries=2, base_s=0.01))


def body(text: str) -> str:
    return f"{MARKER}\n{text}"


def stored(server: GitHubServer) -> list[str]:
    return [c.body for c in server.state.comments_on(REPO, 12)]


def test_creates_then_edits_in_place_then_leaves_alone(server: GitHubServer) -> None:
    gh = client(server)
    first = upsert_comment(gh, TARGET, body("v1"), MARKER, sleep=lambda s: None)
    assert first.action == "created" and stored(server) == [body("v1")]
    second = upsert_comment(gh, TARGET, body("v2"), MARKER, sleep=lambda s: None)
    assert second.action == "updated" and second.comment and second.comment.id == first.comment.id  # type: ignore[union-attr]
    assert stored(server) == [body("v2")]
    third = upsert_comment(gh, TARGET, body("v2"), MARKER, sleep=lambda s: None)
    assert third.action == "unchanged"
    assert [r.method for r in server.state.log if r.method != "GET"] == ["POST", "PATCH"]


def test_found_on_the_second_page_of_150(server: GitHubServer) -> None:
    someone = server.state.add_token("ghp_other", "someone")
    for n in range(130):
        server.state.add_comment(REPO, 12, f"chatter {n}", someone)
    ours = server.state.add_comment(REPO, 12, body("old"), server.state.tokens[JOB_TOKEN])
    for n in range(20):
        server.state.add_comment(REPO, 12, f"more chatter {n}", someone)
    result = upsert_comment(client(server), TARGET, body("new"), MARKER, sleep=lambda s: None)
    assert result.action == "updated" and result.comment and result.comment.id == ours.id
    assert len(stored(server)) == 151
    gets = server.state.requests("GET", "/comments$")
    assert [r.query.get("page", ["1"])[0] for r in gets] == ["1", "2"]


def test_a_marker_pasted_by_someone_else_is_not_ours(server: GitHubServer) -> None:
    someone = server.state.add_token("ghp_other", "someone")
    server.state.add_comment(REPO, 12, body("spoof"), someone)
    # job token: login unknown (GET /user is 403 for it), so only bots' comments count
    assert authenticated_login(client(server)) is None
    result = upsert_comment(client(server), TARGET, body("real"), MARKER, sleep=lambda s: None)
    assert result.action == "created"
    # a personal token: its login is known and only its comments count
    gh = client(server, PAT)
    login = authenticated_login(gh)
    assert login == "ada"
    mine = upsert_comment(gh, TARGET, body("ada's"), MARKER, author=login, sleep=lambda s: None)
    assert mine.action == "created"
    assert stored(server) == [body("spoof"), body("real"), body("ada's")]


def test_only_the_first_line_marks_a_comment_as_a_suites(server: GitHubServer) -> None:
    """Another suite's comment by the bot that carries this suite's marker below its first
    line (a template printed it, or an output quoted it) is not this suite's."""
    bot = server.state.tokens[JOB_TOKEN]
    other = "<!-- eval-gate:other -->"
    server.state.add_comment(REPO, 12, f"{other}\n{MARKER}\nquoted", bot)
    result = upsert_comment(client(server), TARGET, body("ours"), MARKER, sleep=lambda s: None)
    assert result.action == "created"
    assert stored(server) == [f"{other}\n{MARKER}\nquoted", body("ours")]


def test_create_false_only_edits(server: GitHubServer) -> None:
    gh = client(server)
    absent = upsert_comment(gh, TARGET, body("x"), MARKER, create=False, sleep=lambda s: None)
    assert absent.action == "absent" and stored(server) == []
    upsert_comment(gh, TARGET, body("x"), MARKER, sleep=lambda s: None)
    edited = upsert_comment(gh, TARGET, body("y"), MARKER, create=False, sleep=lambda s: None)
    assert edited.action == "updated" and stored(server) == [body("y")]


def test_read_only_token_raises_cannot_post_with_status(server: GitHubServer) -> None:
    server.state.add_token("ghs_fork", read_only=True)
    with pytest.raises(CannotPostComment) as info:
        upsert_comment(client(server, "ghs_fork"), TARGET, body("x"), MARKER, sleep=lambda s: None)
    assert info.value.status == 403 and "Resource not accessible" in str(info.value)
    assert stored(server) == []


def test_post_that_failed_after_writing_is_not_repeated(server: GitHubServer) -> None:
    server.state.inject(Fault("POST", "/comments$", 502, apply=True))
    sleeps: list[float] = []
    result = upsert_comment(client(server), TARGET, body("x"), MARKER, sleep=sleeps.append)
    assert result.action == "unchanged"  # found on the second look: it had been written
    assert stored(server) == [body("x")] and len(sleeps) == 1


def test_post_that_failed_before_writing_is_retried(server: GitHubServer) -> None:
    server.state.inject(Fault("POST", "/comments$", 503))
    result = upsert_comment(client(server), TARGET, body("x"), MARKER, sleep=lambda s: None)
    assert result.action == "created" and stored(server) == [body("x")]
    assert [r.status for r in server.state.requests("POST")] == [503, 201]


def test_secondary_rate_limit_on_post_is_waited_out(server: GitHubServer) -> None:
    limit = {"message": "You have exceeded a secondary rate limit", "documentation_url": "x"}
    server.state.inject(Fault("POST", "/comments$", 403, {"Retry-After": "0"}, limit))
    result = upsert_comment(client(server), TARGET, body("x"), MARKER, sleep=lambda s: None)
    assert result.action == "created" and stored(server) == [body("x")]


def test_listing_failure_is_cannot_read(server: GitHubServer) -> None:
    server.state.inject(Fault("GET", "/comments$", 404, times=5))
    with pytest.raises(CannotReadComments) as info:
        list_comments(client(server), TARGET)
    assert info.value.status == 404


def test_body_over_githubs_limit_is_refused_before_any_request(server: GitHubServer) -> None:
    with pytest.raises(CannotPostComment, match="65536"):
        upsert_comment(client(server), TARGET, body("x" * 70_000), MARKER)
    assert server.state.log == []
