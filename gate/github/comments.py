"""The PR comment: one per PR, found again by its hidden marker and edited in place.

The marker is the comment's first line, matched across all pages of the issue's comments (100
per page); when the token's login is known, only that author's comments count (anyone can
paste a marker).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict

from gate.errors import GateError
from gate.github.client import SERVER_ERRORS, GitHubApiError, GitHubClient
from gate.retry import Failed, GaveUp, call_with_retries

PER_PAGE = 100
MAX_BODY = 65_536


class CommentError(GateError):
    """A comment could not be read or written; `status` is GitHub's answer, if any."""

    def __init__(self, message: str, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class CannotReadComments(CommentError):
    pass


class CannotPostComment(CommentError):
    pass


class CommentTarget(BaseModel):
    model_config = ConfigDict(frozen=True)

    repository: str  # owner/name
    issue_number: int


class IssueComment(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    body: str
    author: str | None
    author_is_bot: bool


class Upserted(BaseModel):
    model_config = ConfigDict(frozen=True)

    action: Literal["created", "updated", "unchanged", "absent"]
    comment: IssueComment | None
    seen: tuple[IssueComment, ...] = ()  # the issue's comments as the last listing had them


def _parse(raw: dict) -> IssueComment:
    user = raw.get("user") or {}
    return IssueComment(
        id=raw["id"],
        body=raw.get("body") or "",
        author=user.get("login"),
        author_is_bot=user.get("type") == "Bot",
    )


def authenticated_login(client: GitHubClient) -> str | None:
    """The token's login; None for tokens that may not ask (the job token answers 403)."""
    try:
        data = client.get_json("/user")
    except GitHubApiError:
        return None
    login = data.get("login") if isinstance(data, dict) else None
    return login if isinstance(login, str) else None


def list_comments(client: GitHubClient, target: CommentTarget) -> list[IssueComment]:
    path = f"/repos/{target.repository}/issues/{target.issue_number}/comments"
    try:
        return [_parse(raw) for raw in client.paginate(path, {"per_page": PER_PAGE})]
    except GitHubApiError as exc:
        raise CannotReadComments(
            f"cannot list the comments of #{target.issue_number}: {exc.reason}", exc.status
        ) from None


def pick_comment(
    comments: list[IssueComment], marker: str, author: str | None
) -> IssueComment | None:
    """Ours: starts with the marker and is by `author`; oldest first.

    Only the first line counts: the gate writes the marker there, and nothing below it (a
    template, a quoted output) can make a comment pass for another suite's. An unknown author
    means an app token (the job token may not ask who it is), whose comments are always by a
    bot: then only bots' comments count.
    """
    for comment in comments:
        if comment.body.split("\n", 1)[0].strip() != marker:
            continue
        if comment.author == author if author is not None else comment.author_is_bot:
            return comment
    return None


def _write(
    client: GitHubClient, target: CommentTarget, body: str, existing: IssueComment | None
) -> IssueComment:
    if existing is not None:
        path = f"/repos/{target.repository}/issues/comments/{existing.id}"
        return _parse(client.request("PATCH", path, json={"body": body}).json())
    path = f"/repos/{target.repository}/issues/{target.issue_number}/comments"
    return _parse(client.request("POST", path, json={"body": body}).json())


def upsert_comment(
    client: GitHubClient,
    target: CommentTarget,
    body: str,
    marker: str,
    *,
    author: str | None = None,
    create: bool = True,
    attempts: int = 3,
    sleep: Callable[[float], None] = time.sleep,
) -> Upserted:
    """Edit our comment in place, or create it (`create=False`: only ever edit).

    A POST that fails with a server error may have been applied anyway, so instead of blindly
    retrying it the comments are listed again first: a retry never duplicates the comment.
    """
    if len(body) > MAX_BODY:
        raise CannotPostComment(
            f"comment body has {len(body)} characters, GitHub allows {MAX_BODY}"
        )

    def attempt(_: int) -> Upserted | Failed:
        seen = tuple(list_comments(client, target))
        existing = pick_comment(list(seen), marker, author)
        if existing is not None and existing.body == body:
            return Upserted(action="unchanged", comment=existing, seen=seen)
        if existing is None and not create:
            return Upserted(action="absent", comment=None, seen=seen)
        try:
            written = _write(client, target, body, existing)
        except GitHubApiError as exc:
            verb = "edit" if existing else "create"
            return Failed(
                f"cannot {verb} the comment on #{target.issue_number}: "
                f"{exc.status or 'no response'} {exc.reason}",
                retry=exc.status is None or exc.status in SERVER_ERRORS,
                status=exc.status,
            )
        action = "updated" if existing else "created"
        return Upserted(action=action, comment=written, seen=seen)

    def give_up(gave_up: GaveUp) -> CannotPostComment:
        return CannotPostComment(gave_up.failed.reason, gave_up.failed.status)

    policy = replace(client.retry, max_retries=attempts - 1)
    return call_with_retries(attempt, policy, give_up, sleep=sleep)


SUITE_MARKER = re.compile(r"<!-- eval-gate:(?!retired\b)[^\n]* -->")
RETIRED = (
    "<!-- eval-gate:retired -->\n"
    "_This comment of an earlier Eval Gate version is superseded by the PR's one comment._\n"
)


def retire_suite_comments(
    client: GitHubClient, target: CommentTarget, seen: Sequence[IssueComment], author: str | None
) -> int:
    """Earlier versions posted one comment per suite (`<!-- eval-gate:SUITE -->`); ours among
    the issue's comments (`seen`: as `upsert_comment` listed them) say they are superseded,
    once, so a PR does not show stale verdicts beside the current one. Best effort: a comment
    that cannot be edited is left as it is. How many."""
    retired = 0
    for comment in seen:
        first = comment.body.split("\n", 1)[0].strip()
        mine = comment.author == author if author is not None else comment.author_is_bot
        if not mine or not SUITE_MARKER.fullmatch(first):
            continue
        path = f"/repos/{target.repository}/issues/comments/{comment.id}"
        try:
            client.request("PATCH", path, json={"body": RETIRED})
        except GitHubApiError:
            continue
        retired += 1
    return retired
