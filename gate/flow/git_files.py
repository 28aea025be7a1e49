"""A commit's files as a promptfoo config reads them (`gate.promptfoo.inputs.files.Files`):
the base's gate.yml names promptfoo configs whose prompts and providers decide its suites."""

from __future__ import annotations

from gate.flow.git import GitRepo
from gate.promptfoo.inputs.files import Checkout


class CommitFiles:
    """The files of `sha`, by path relative to the repository's root."""

    def __init__(self, repo: GitRepo, sha: str) -> None:
        self.repo = repo
        self.sha = sha
        self.seen: list[str] = []
        self._listing: list[str] | None = None

    def text(self, path: str) -> str | None:
        return self.repo.file_at(self.sha, path)

    def listing(self, folder: str) -> list[str]:
        if self._listing is None:
            out = self.repo.git("ls-tree", "-r", "--name-only", "-z", self.sha)
            self._listing = [p for p in out.split("\0") if p]
        prefix = f"{folder.rstrip('/')}/" if folder else ""
        return [p for p in self._listing if p.startswith(prefix)]


def commit_checkout(repo: GitRepo, sha: str, config: str) -> Checkout:
    """Where the commit's gate.yml (`config`, relative to the root) reads promptfoo configs."""
    folder = config.rsplit("/", 1)[0] if "/" in config else ""
    return Checkout(CommitFiles(repo, sha), folder)
