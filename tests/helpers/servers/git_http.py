"""A git server over smart HTTP on 127.0.0.1: `git http-backend` behind token auth.

Like github.com it serves repositories to clients that send the job token the way
actions/checkout does (`Authorization: basic base64(x-access-token:TOKEN)`) and answers 401
otherwise. It allows fetching any commit by sha, as GitHub does, and logs every request.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit


@dataclass
class GitRequest:
    method: str
    path: str
    authorized: bool
    authorization: str | None
    auth_headers: int = 1


def basic_token(token: str) -> str:
    return "basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


class _Handler(BaseHTTPRequestHandler):
    server: GitHttpServer

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        parts = urlsplit(self.path)
        auth = self.headers.get("Authorization")
        token = self.server.token
        ok = token is None or (auth or "").lower() == basic_token(token).lower()
        count = len(self.headers.get_all("Authorization") or [])
        self.server.log.append(GitRequest(self.command, parts.path, ok, auth, count))
        body = self._body()
        if not ok:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        env = {
            "GIT_PROJECT_ROOT": str(self.server.root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": parts.path,
            "QUERY_STRING": parts.query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
            "PATH": "/usr/bin:/bin:/usr/local/bin",
            "HOME": str(self.server.root),
        }
        done = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


class GitHttpServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, root: Path, token: str | None = None) -> None:
        self.root = root
        self.token = token
        self.log: list[GitRequest] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> GitHttpServer:
        threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    full = {**os.environ, **IDENTITY, **(env or {})}
    done = subprocess.run(
        ["git", "-C", str(cwd), *args], env=full, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def commit_main(
    root: Path, files: dict[str, str] | None = None, *, branch: str | None = None
) -> Path:
    """`root` (made if missing, `files` written into it first) as a repository whose `main`
    commits all it holds, then on a new `branch` when given: a developer's local clone."""
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    if branch is not None:
        git(root, "checkout", "-q", "-b", branch)
    return root


def make_bare(path: Path) -> Path:
    """A bare origin that, like GitHub, lets clients fetch any commit by sha."""
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(path)], check=True)
    git(path, "config", "uploadpack.allowAnySHA1InWant", "true")
    git(path, "config", "http.receivepack", "true")
    return path


class Author:
    """A full clone used to write commits and push them to the origin."""

    def __init__(self, path: Path, origin: Path) -> None:
        self.path = path
        git(path.parent, "clone", "-q", str(origin), path.name)

    def write(self, files: dict[str, str | None]) -> None:
        for name, content in files.items():
            target = self.path / name
            if content is None:
                target.unlink()
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")

    def commit(self, message: str, files: dict[str, str | None] | None = None) -> str:
        if files:
            self.write(files)
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.path, "rev-parse", "HEAD")

    def push(self, *refspecs: str) -> None:
        git(self.path, "push", "-q", "--force", "origin", *refspecs)

    def merge_ref(self, base: str, head: str, ref: str) -> str:
        """What GitHub builds for a PR: head merged into base, published at `ref`."""
        git(self.path, "checkout", "-q", "--detach", base)
        git(self.path, "merge", "-q", "--no-ff", "-m", f"Merge {head[:7]} into {base[:7]}", head)
        sha = git(self.path, "rev-parse", "HEAD")
        self.push(f"{sha}:{ref}")
        return sha


def checkout_like_actions(
    workspace: Path, url: str, sha: str, ref: str, token: str | None, *, depth: int = 1
) -> None:
    """What actions/checkout does with `persist-credentials: false`: one commit deep."""
    workspace.mkdir(parents=True)
    git(workspace, "init", "-q")
    git(workspace, "remote", "add", "origin", url)
    auth = []
    if token:
        auth = ["-c", f"http.{url}/.extraheader=AUTHORIZATION: {basic_token(token)}"]
    depth_args = [f"--depth={depth}"] if depth else []
    git(
        workspace,
        *auth,
        "fetch",
        "-q",
        "--no-tags",
        "--prune",
        *depth_args,
        "origin",
        f"+{sha}:{ref}",
    )
    git(workspace, "checkout", "-q", "--force", ref)
