"""The pull request's labels at run time, read from the API: the accept label may have been
added or removed since the event was sent."""

from __future__ import annotations

from gate.github.client import GitHubClient

PER_PAGE = 100


def pr_labels(client: GitHubClient, repository: str, number: int) -> tuple[str, ...]:
    """The names of the labels on PR `number` of `repository` (`owner/name`); raises
    `GitHubApiError` when they cannot be read."""
    path = f"/repos/{repository}/issues/{number}/labels"
    names = []
    for label in client.paginate(path, {"per_page": PER_PAGE}):
        name = label.get("name") if isinstance(label, dict) else None
        if isinstance(name, str):
            names.append(name)
    return tuple(names)
