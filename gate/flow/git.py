"""Git for the PR flow (gitpython): refs, merge base, changed files and the base worktree.

CI checkouts are hostile to a naive `git diff base...head`:
- actions/checkout fetches one commit (`fetch-depth: 1`), so the base commit and the merge
  base are missing; they are fetched with the job token the way actions/checkout does (an
  `http.<server>/.extraheader` passed through the environment, never on a command line, never
  printed), deepening until the merge base appears;
- a container action runs as root on a workspace owned by the runner's user, which git refuses
  ("dubious ownership") unless the path is a `safe.directory`; it is declared for our own git
  calls through `GIT_CONFIG_*` variables, leaving every config file alone.

What changed is read without the repository's attributes (a PR's `.gitattributes` could mark
its prompt `binary` or hand it to a diff driver): the changed files come from a raw diff with
no external diff, no text conversion, and neither the system's nor the user's attributes
file; file contents are read as blobs (`cat-file`, which applies none), and the gate diffs
them itself (`gate.flow.system_diff`).

The base is materialised as a temporary `git worktree`, removed even when the run fails.
"""

from __future__ import annotations

import base64
import os
import posixpath
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import git

from gate.errors import GitError, InputError

REMOTE = "origin"
GITLINK = "160000"  # a submodule's entry in a tree
# The attributes git reads from outside the tree: none (the tree's own play no part in a raw
# diff of two commits, nor in `cat-file`).
NO_OUTSIDE_ATTRIBUTES = (("core.attributesFile", "/dev/null"),)
DEEPEN_STEPS = (50, 250, 1000)
SHA = re.compile(r"[0-9a-fA-F]{7,64}")
FULL_DEPTH_HINT = "give actions/checkout `fetch-depth: 0` (full history)"


# --- changed files ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FileChange:
    status: str  # A, M, D, R (renamed), T (type changed), C (copied)
    path: str
    old_path: str | None = None
    submodule: bool = False  # a gitlink: a submodule's commit, and so everything below it

    @property
    def paths(self) -> tuple[str, ...]:
        """Both sides of a rename: moving a watched file away is a change to it."""
        return (self.path,) if self.old_path in (None, self.path) else (self.old_path, self.path)

    def __str__(self) -> str:
        return (
            f"{self.status} {self.old_path} -> {self.path}"
            if self.old_path
            else f"{self.status} {self.path}"
        )


def _change(diff: git.Diff) -> FileChange:
    kind = (diff.change_type or "M")[0]
    link = GITLINK in (f"{diff.a_mode or 0:o}", f"{diff.b_mode or 0:o}")
    if kind in ("R", "C"):
        return FileChange(kind, diff.b_path or "", diff.a_path, submodule=link)
    if kind == "D":
        return FileChange("D", diff.a_path or diff.b_path or "", submodule=link)
    return FileChange(kind, diff.b_path or diff.a_path or "", submodule=link)


# --- environment for git ---------------------------------------------------------------------


def config_env(entries: Sequence[tuple[str, str]], environ: Mapping[str, str]) -> dict[str, str]:
    """`GIT_CONFIG_*` variables adding `entries` after any the environment already holds."""
    try:
        start = int(environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    env = {"GIT_CONFIG_COUNT": str(start + len(entries))}
    for offset, (key, value) in enumerate(entries):
        env[f"GIT_CONFIG_KEY_{start + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    return env


def auth_header(token: str) -> str:
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    return f"AUTHORIZATION: basic {basic}"


def redact(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


class GitRepo:
    """A checkout and the git calls the PR flow makes on it.

    `token` (the job token) is used only to fetch from `server_url`; `trusted` paths are
    declared `safe.directory` for every git call made here and in `subprocess_env()`.
    """

    def __init__(
        self,
        path: Path,
        *,
        token: str | None = None,
        server_url: str | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.environ = dict(os.environ if environ is None else environ)
        self.token = token
        self.server_url = (server_url or "").rstrip("/")
        start = Path(path).resolve()
        self.trusted: list[str] = [str(start)]
        try:
            self.repo = git.Repo(start, search_parent_directories=True)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise InputError("not inside a git repository", file=start) from None
        if self.repo.working_tree_dir is None:
            raise InputError("a bare repository has no checkout to evaluate", file=start)
        self.root = Path(self.repo.working_tree_dir).resolve()
        self.trust(self.root)

    # -- plumbing --

    @property
    def _secrets(self) -> list[str]:
        if not self.token:
            return []
        return [self.token, auth_header(self.token).split()[-1]]

    def trust(self, path: Path) -> None:
        if str(path) not in self.trusted:
            self.trusted.append(str(path))
        self.repo.git.update_environment(**self.subprocess_env(include_parent=False))

    def subprocess_env(self, *, include_parent: bool = True) -> dict[str, str]:
        """Environment for processes that run git on these checkouts (the side runs)."""
        extra = config_env([("safe.directory", p) for p in self.trusted], self.environ)
        return {**self.environ, **extra} if include_parent else extra

    def git(self, *args: str, auth: bool = False, env: Mapping[str, str] | None = None) -> str:
        extra = dict(env or {})
        if auth and self.token and self.server_url and not self._has_own_auth():
            entries = [("safe.directory", p) for p in self.trusted]
            entries.append((f"http.{self.server_url}/.extraheader", auth_header(self.token)))
            extra |= config_env(entries, self.environ)
        env = extra or None
        try:
            return str(self.repo.git.execute(["git", *args], env=env, with_extended_output=False))
        except git.GitCommandError as exc:
            detail = (exc.stderr or "").strip().replace("stderr: ", "").strip("'\n ")
            raise GitError(redact(f"git {args[0]} failed: {detail}", self._secrets)) from None

    def _has_own_auth(self) -> bool:
        """actions/checkout may have left its header in .git/config (persist-credentials)."""
        try:
            out = self.repo.git.config("--local", "--get-regexp", r"^http\..*\.extraheader$")
        except git.GitCommandError:
            return False
        return bool(out.strip())

    # -- queries --

    def head_sha(self) -> str:
        return self.git("rev-parse", "--verify", "HEAD^{commit}").strip()

    def rev_parse(self, rev: str) -> str | None:
        try:
            return self.git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").strip() or None
        except GitError:
            return None

    def recorded_parents(self, sha: str) -> list[str]:
        """The parents a commit names, even when a shallow clone lacks them."""
        body = self.git("cat-file", "commit", sha)
        headers = body.split("\n\n", 1)[0].splitlines()
        return [line.split()[1] for line in headers if line.startswith("parent ")]

    def is_shallow(self) -> bool:
        return self.git("rev-parse", "--is-shallow-repository").strip() == "true"

    def has_remote(self) -> bool:
        return REMOTE in [r.name for r in self.repo.remotes]

    def fetch(self, *args: str) -> None:
        if not self.has_remote():
            raise GitError(f"the repository has no remote `{REMOTE}` to fetch from")
        self.git(
            "fetch", "--no-tags", "--no-recurse-submodules", "--quiet", REMOTE, *args, auth=True
        )

    # -- base resolution --

    def ensure_commit(self, sha: str) -> str:
        """The full sha of `sha`, fetched (one commit deep in a shallow clone) if missing."""
        found = self.rev_parse(sha)
        if found is not None:
            return found
        depth = ("--depth=1",) if self.is_shallow() else ()
        try:
            self.fetch(*depth, sha)
        except GitError as exc:
            raise GitError(
                f"cannot fetch base commit {sha[:12]}: {exc}; or {FULL_DEPTH_HINT}"
            ) from None
        found = self.rev_parse(sha)
        if found is None:
            raise GitError(f"base commit {sha[:12]} is not in the repository; {FULL_DEPTH_HINT}")
        return found

    def fetch_ref(self, ref: str) -> str | None:
        """Fetch branch or tag `ref` from the remote; its sha, or None if the remote lacks it."""
        name = ref.removeprefix("refs/heads/").removeprefix(f"{REMOTE}/")
        depth = ("--depth=1",) if self.is_shallow() else ()
        for source, local in (
            (f"refs/heads/{name}", f"refs/remotes/{REMOTE}/{name}"),
            (
                f"refs/tags/{name.removeprefix('refs/tags/')}",
                f"refs/tags/{name.removeprefix('refs/tags/')}",
            ),
        ):
            try:
                self.fetch(*depth, f"+{source}:{local}")
            except GitError:
                continue
            return self.rev_parse(local)
        return None

    def resolve_ref(self, ref: str, *, fetch: bool) -> str:
        """A base given by name: fetched fresh from the remote in CI, else resolved locally."""
        if SHA.fullmatch(ref) and self.rev_parse(ref) is None and fetch:
            return self.ensure_commit(ref)
        fetched = self.fetch_ref(ref) if fetch and self.has_remote() else None
        found = fetched or self.rev_parse(ref)
        if found is None:
            raise InputError(
                f"base ref {ref!r} not found" + (f" on `{REMOTE}`" if fetch else ""), key="base-ref"
            )
        return found

    def parent_of(self, sha: str, *, fetch: bool) -> str | None:
        """The first parent of `sha`, deepening a shallow clone by one commit if needed."""
        found = self.rev_parse(f"{sha}^1")
        if found is None and fetch and self.is_shallow():
            try:
                self.fetch("--deepen=1", sha)
            except GitError as exc:
                raise GitError(
                    f"cannot fetch the parent commit: {exc}; or {FULL_DEPTH_HINT}"
                ) from None
            found = self.rev_parse(f"{sha}^1")
        return found

    def default_base(self) -> str:
        """The remote's default branch (`origin/HEAD`), else main or master."""
        try:
            ref = self.git("symbolic-ref", "--quiet", f"refs/remotes/{REMOTE}/HEAD").strip()
            return ref.removeprefix("refs/remotes/")
        except GitError:
            pass
        for candidate in (f"{REMOTE}/main", f"{REMOTE}/master", "main", "master"):
            if self.rev_parse(candidate):
                return candidate
        raise InputError(
            "cannot tell the base branch (no origin/HEAD, main or master): pass --base"
        )

    def merge_base(self, base: str, head: str, *, fetch: bool) -> str:
        """The merge base, deepening a shallow clone step by step until it appears."""
        found = self._merge_base(base, head)
        steps = [f"--deepen={n}" for n in DEEPEN_STEPS] + ["--unshallow"]
        while found is None and fetch and steps and self.is_shallow():
            self._fetch_for("the merge base", steps.pop(0), base, head)
            found = self._merge_base(base, head)
        if found is None:
            hint = f"; {FULL_DEPTH_HINT}" if self.is_shallow() else ""
            raise GitError(f"base {base[:12]} and head {head[:12]} have no common ancestor{hint}")
        return found

    def _merge_base(self, base: str, head: str) -> str | None:
        try:
            return self.git("merge-base", base, head).strip() or None
        except GitError:
            return None

    def _fetch_for(self, what: str, *args: str) -> None:
        try:
            self.fetch(*args)
        except GitError as exc:
            raise GitError(f"cannot fetch {what}: {exc}; or {FULL_DEPTH_HINT}") from None

    def changed_files(self, since: str, head: str | None) -> list[FileChange]:
        """Files changed from `since` to `head` (None: the working tree, untracked files too),
        a submodule's new commit among them whatever `.gitmodules` says (`ignore = all`)."""
        entries = [("safe.directory", p) for p in self.trusted] + list(NO_OUTSIDE_ATTRIBUTES)
        env = {**config_env(entries, self.environ), "GIT_ATTR_NOSYSTEM": "1"}
        try:
            with self.repo.git.custom_environment(**env):
                diffs = self.repo.commit(since).diff(
                    head, no_ext_diff=True, no_textconv=True, ignore_submodules="none"
                )
            changes = [_change(d) for d in diffs]
            if head is None:
                changes += [FileChange("A", p) for p in self.repo.untracked_files]
        except (git.GitCommandError, ValueError) as exc:
            raise GitError(redact(f"cannot list changed files: {exc}", self._secrets)) from None
        return sorted(set(changes), key=lambda c: (c.path, c.status))

    def file_at(self, sha: str, path: str) -> str | None:
        """The text of `path` (repo-relative) at commit `sha`; None when it has no such file."""
        data = self.blob(sha, path)
        return None if data is None else data.decode("utf-8", errors="replace")

    def blob(self, sha: str, path: str) -> bytes | None:
        """The bytes git stores for `path` at commit `sha`, no attribute applied (no text
        conversion, filter or end-of-line rule), a file of a submodule's too (from the
        checkout's submodule); None when it has no such file."""
        where: tuple[str, ...] = ()
        if self._object_type(where, f"{sha}:{path}") != "blob":
            link = self._gitlink_above(sha, path)
            if link is None:
                return None
            folder, commit = link
            if self.submodule_commit(folder) is None:
                return None
            where, sha, path = ("-C", str(self.root / folder)), commit, path[len(folder) + 1 :]
            if self._object_type(where, f"{sha}:{path}") != "blob":
                return None
        try:
            data = self.repo.git.execute(
                ["git", *where, "cat-file", "blob", f"{sha}:{path}"],
                stdout_as_string=False,
                strip_newline_in_stdout=False,
            )
        except git.GitCommandError as exc:
            raise GitError(redact(f"git cat-file failed: {exc.stderr}", self._secrets)) from None
        return bytes(data)

    def _object_type(self, where: tuple[str, ...], name: str) -> str | None:
        try:
            return self.git(*where, "cat-file", "-t", name).strip()
        except GitError:
            return None

    # -- submodules --

    def gitlinks(self, sha: str | None) -> dict[str, str]:
        """The submodules `sha` records, folder → commit (None: the index's, the working
        tree's)."""
        if sha is None:  # `160000 <commit> 0\t<path>`
            listing, at = self.git("ls-files", "--stage", "-z"), 1
        else:  # `160000 commit <commit>\t<path>`
            listing, at = self.git("ls-tree", "-r", "-z", sha), 2
        links = {}
        for entry in listing.split("\0"):
            info, _, path = entry.partition("\t")
            fields = info.split()
            if len(fields) > at and fields[0] == GITLINK:
                links[path] = fields[at]
        return links

    def _gitlink_above(self, sha: str, path: str) -> tuple[str, str] | None:
        """The submodule of commit `sha` that `path` lies in: its folder and commit."""
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            entry = self.git("ls-tree", "-z", sha, "--", folder).split("\0")[0].split()
            if not entry:
                return None
            if entry[0] == GITLINK:
                return folder, entry[2].split("\t")[0]
        return None

    def submodule_commit(self, folder: str) -> str | None:
        """The commit the checkout's submodule at `folder` has checked out; None when the
        folder is not a checkout of its own (a submodule never initialised: empty)."""
        path = self.root / folder
        if not (path / ".git").exists():
            return None
        self.trust(path)
        try:
            return self.git("-C", str(path), "rev-parse", "--verify", "-q", "HEAD^{commit}").strip()
        except GitError:
            return None

    def submodule_source(self, folder: str, commit: str, *, fetch: bool) -> Path | None:
        """The checkout's submodule at `folder`, when it holds `commit`: fetched from the
        submodule's own remote when it does not (with `fetch`); None when it cannot."""
        if self.submodule_commit(folder) is None:
            return None
        path, where = self.root / folder, ("-C", str(self.root / folder))
        if self._object_type(where, f"{commit}^{{commit}}") == "commit":
            return path
        if not fetch:
            return None
        shallow = self.git(*where, "rev-parse", "--is-shallow-repository").strip() == "true"
        depth = ("--depth=1",) if shallow else ()
        with suppress(GitError):
            self.git(*where, "fetch", "--no-tags", "--quiet", *depth, REMOTE, commit)
        return path if self._object_type(where, f"{commit}^{{commit}}") == "commit" else None

    def _checkout_submodules(self, sha: str, dest: Path) -> None:
        """Each submodule `sha` records, its files at its commit in `dest`'s folder for it,
        read from the checkout's submodule; one that holds no such commit stays empty (a suite
        that reads it stops first: `gate.flow.submodules`)."""
        for folder, commit in self.gitlinks(sha).items():
            source = self.submodule_source(folder, commit, fetch=False)
            if source is None:
                continue
            git_dir = self.git("-C", str(source), "rev-parse", "--absolute-git-dir").strip()
            target = dest / folder
            target.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix="gate-index-") as index:
                env = {"GIT_INDEX_FILE": str(Path(index) / "index")}
                where = (f"--git-dir={git_dir}", f"--work-tree={target}")
                self.git(*where, "read-tree", "--reset", "-u", commit, env=env)

    def blob_path(self, sha: str, path: str, hops: int = 8) -> str | None:
        """Where the file `path` names lies in commit `sha`'s own tree: `path` itself, or,
        when the commit holds a symlink there, its target (relative links followed inside the
        tree, at most `hops` times). None: no such file, or a link out of the tree. Nothing of
        the checkout on disk is read."""
        for _ in range(hops):
            entry = self.git("ls-tree", "-z", sha, "--", path).rstrip("\0")
            if not entry:
                return None
            mode, kind = entry.split(" ", 2)[:2]
            if kind != "blob":
                return None
            if mode != "120000":
                return path
            target = self.git("cat-file", "blob", f"{sha}:{path}")
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if target.startswith("/") or joined == ".." or joined.startswith("../"):
                return None
            path = joined
        return None

    def tracked_below(self, folder: str) -> list[str]:
        """The files git tracks below `folder` (repo-relative) in the checkout's index."""
        listing = self.git("ls-files", "-z", "--", folder or ".")
        return [name for name in listing.split("\0") if name]

    def files_below(self, sha: str, folder: str) -> list[tuple[str, str]]:
        """Every file below `folder` (repo-relative) at commit `sha`: its path inside the
        folder and its text. None there: an empty list."""
        prefix = folder.strip("/") + "/"
        listing = self.git("ls-tree", "-r", "-z", "--name-only", sha, "--", prefix)
        names = [name for name in listing.split("\0") if name.startswith(prefix)]
        return [(name[len(prefix) :], self.file_at(sha, name) or "") for name in sorted(names)]

    # -- the base checkout --

    @staticmethod
    def worktree_path() -> Path:
        """A new place for a base checkout (`worktree`), known before it is made: a config
        read from the commit's objects is parsed as it will lie there."""
        return (
            Path(tempfile.gettempdir()).resolve() / f"gate-base-{secrets.token_hex(8)}" / "checkout"
        )

    @contextmanager
    def worktree(self, sha: str, path: Path | None = None) -> Iterator[Path]:
        """`sha` checked out (detached) in a temporary worktree at `path` (default: a new
        one), its submodules too (at the commits `sha` records), removed on the way out."""
        path = path or self.worktree_path()
        parent = path.parent
        # The base's system runs as an unprivileged uid of its own (gate.systems.worker), which
        # must enter its checkout; the folder holds nothing but the base commit's files.
        parent.mkdir(mode=0o700)
        parent.chmod(0o755)
        self.trust(path)
        try:
            self.git("worktree", "add", "--detach", "--force", "--quiet", str(path), sha)
            self._checkout_submodules(sha, path)
            yield path
        finally:
            with suppress(GitError):
                self.git("worktree", "remove", "--force", str(path))
            shutil.rmtree(parent, ignore_errors=True)
            with suppress(GitError):
                self.git("worktree", "prune")

    def close(self) -> None:
        self.repo.close()
