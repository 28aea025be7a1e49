"""A stateful stand-in for the parts of GitHub's REST API the gate uses, on 127.0.0.1.

Real HTTP, real state (issue comments and labels per repository and issue, with ids, authors and
timestamps), real pagination (`per_page`, `page`, `Link` headers pointing back at this server),
fault injection (403 for read-only tokens, queued failures such as a 502 or a secondary rate
limit) and a request log. Every request and every response is checked against GitHub's own
OpenAPI description (tests/fixtures/github-openapi.json, trimmed from @octokit/openapi): a
request of the wrong shape gets a 422 like GitHub's and lands in `violations`, which tests
assert to be empty.

Run alone (the container test does): `python tests/helpers/servers/github_api.py --port 8080 --token
T=login`; the stand-in's own state is at `GET /_stand-in/state` (not a GitHub endpoint).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlencode, urlsplit

import jsonschema
import referencing
from referencing.jsonschema import DRAFT4

from helpers.servers.openapi_schema import as_json_schema

SPEC_PATH = Path(__file__).resolve().parents[2] / "fixtures" / "github-openapi.json"
SPEC_URI = "urn:github-openapi"
API_VERSIONS = {"2022-11-28"}
READ_ONLY = "Resource not accessible by integration"
DOCS = "https://docs.github.com/rest"
BASIC_ERROR = {"$ref": "#/components/schemas/basic-error"}


# --- GitHub's OpenAPI description as JSON Schema ---------------------------------------------


def to_json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schemas are draft-4 JSON Schema plus `nullable` and `discriminator`."""
    return as_json_schema(node, SPEC_URI)


@dataclass
class Operation:
    operation_id: str
    method: str
    pattern: re.Pattern[str]
    spec: dict[str, Any]


class OpenApi:
    def __init__(self, path: Path = SPEC_PATH) -> None:
        self.doc = json.loads(path.read_text(encoding="utf-8"))
        resource = DRAFT4.create_resource(to_json_schema(self.doc))
        self.registry: referencing.Registry = referencing.Registry().with_resource(
            SPEC_URI, resource
        )
        self.operations = [
            Operation(
                op["operationId"],
                method.upper(),
                re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$"),
                op,
            )
            for template, methods in self.doc["paths"].items()
            for method, op in methods.items()
        ]

    def find(self, method: str, path: str) -> tuple[Operation, dict[str, str]] | None:
        for op in self.operations:
            match = op.pattern.match(path)
            if match and op.method == method:
                return op, match.groupdict()
        return None

    def resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in node:
            target: Any = self.doc
            for part in node["$ref"].lstrip("#/").split("/"):
                target = target[part]
            node = target
        return node

    def errors(self, schema: dict[str, Any], value: Any) -> list[str]:
        validator = jsonschema.Draft4Validator(to_json_schema(schema), registry=self.registry)
        return [
            f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}"
            for e in validator.iter_errors(value)
        ]

    def request_errors(
        self, op: Operation, query: dict[str, list[str]], body: Any, has_body: bool
    ) -> list[str]:
        problems: list[str] = []
        declared = [self.resolve(p) for p in op.spec.get("parameters", [])]
        params = {p["name"]: p for p in declared if p["in"] == "query"}
        for name, values in query.items():
            if name not in params:
                problems.append(f"query parameter {name!r} is not defined for {op.operation_id}")
                continue
            value: Any = values[-1]
            if params[name]["schema"].get("type") == "integer":
                if not re.fullmatch(r"-?\d+", value):
                    problems.append(f"query parameter {name!r} must be an integer: {value!r}")
                    continue
                value = int(value)
            problems += [f"query {name}: {m}" for m in self.errors(params[name]["schema"], value)]
        spec_body = op.spec.get("requestBody")
        if spec_body is None:
            return problems + ([f"{op.operation_id} takes no body"] if has_body else [])
        if not has_body:
            return [*problems, f"{op.operation_id} requires a JSON body"]
        schema = self.resolve(spec_body)["content"]["application/json"]["schema"]
        return problems + [f"body {m}" for m in self.errors(schema, body)]

    def response_errors(self, op: Operation, status: int, body: Any) -> list[str]:
        spec = op.spec["responses"].get(str(status))
        if spec is None and status >= 400:
            # GitHub answers errors the description leaves out (403 on an edit): basic-error.
            spec = {"content": {"application/json": {"schema": BASIC_ERROR}}}
        if spec is None:
            return [f"{op.operation_id} does not document status {status}"]
        content = self.resolve(spec).get("content")
        if content is None:
            return []
        schema = content["application/json"]["schema"]
        return [f"response {status} {m}" for m in self.errors(schema, body)]


# --- State -----------------------------------------------------------------------------------


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "Bot" for the job token's github-actions[bot]
    read_only: bool = False
    installation: bool = False  # app/job tokens may not call GET /user


@dataclass
class Comment:
    id: int
    repository: str
    issue: int
    body: str
    user: User
    created_at: str
    updated_at: str


@dataclass
class Fault:
    """Answer the next `times` requests matching `method` and the `path` regex like this."""

    method: str
    path: str
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None  # default: GitHub's error shape
    times: int = 1
    apply: bool = False  # carry the request out anyway (a 502 after the write happened)


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    status: int


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class GitHubState:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tokens: dict[str, User] = {}
        self.comments: dict[int, Comment] = {}
        self.labels: dict[tuple[str, int], list[str]] = {}  # (repository, issue) -> names
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self.violations: list[str] = []
        self._ids = itertools.count(1_000_001)
        self._user_ids = itertools.count(41)

    def add_token(
        self,
        token: str,
        login: str = "github-actions[bot]",
        *,
        read_only: bool = False,
        installation: bool | None = None,
    ) -> User:
        bot = login.endswith("[bot]")
        user = User(
            login,
            next(self._user_ids),
            "Bot" if bot else "User",
            read_only,
            bot if installation is None else installation,
        )
        self.tokens[token] = user
        return user

    def add_comment(self, repository: str, issue: int, body: str, user: User) -> Comment:
        stamp = _now()
        comment = Comment(next(self._ids), repository, issue, body, user, stamp, stamp)
        self.comments[comment.id] = comment
        return comment

    def comments_on(self, repository: str, issue: int) -> list[Comment]:
        return sorted(
            (c for c in self.comments.values() if (c.repository, c.issue) == (repository, issue)),
            key=lambda c: c.id,
        )

    def set_labels(self, repository: str, issue: int, names: list[str]) -> None:
        with self.lock:
            self.labels[(repository, issue)] = list(names)

    def inject(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)

    def take_fault(self, method: str, path: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.method == method and re.search(fault.path, path) and fault.times > 0:
                    fault.times -= 1
                    return fault
        return None

    def requests(self, method: str | None = None, path: str = "") -> list[LoggedRequest]:
        return [
            r
            for r in self.log
            if (method is None or r.method == method) and re.search(path, r.path)
        ]

    def snapshot(self) -> dict[str, Any]:
        return {
            "comments": [
                {**asdict(c), "user": c.user.login}
                for c in sorted(self.comments.values(), key=lambda c: c.id)
            ],
            "requests": [asdict(r) for r in self.log],
            "violations": list(self.violations),
        }


# --- JSON shapes -----------------------------------------------------------------------------


def user_json(base: str, user: User) -> dict[str, Any]:
    url = f"{base}/users/{user.login}"
    return {
        "login": user.login,
        "id": user.id,
        "node_id": f"MDQ6VXNlcj{user.id}",
        "avatar_url": f"https://avatars.githubusercontent.com/u/{user.id}?v=4",
        "gravatar_id": "",
        "url": url,
        "html_url": f"https://github.com/{user.login}",
        "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}",
        "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs",
        "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events",
        "type": user.type,
        "site_admin": False,
    }


def private_user_json(base: str, user: User) -> dict[str, Any]:
    return {
        **user_json(base, user),
        "name": user.login,
        "company": None,
        "blog": "",
        "location": None,
        "email": None,
        "hireable": None,
        "bio": None,
        "public_repos": 1,
        "public_gists": 0,
        "followers": 0,
        "following": 0,
        "created_at": "2020-01-01T00:00:00Z",
        "updated_at": "2020-01-01T00:00:00Z",
        "private_gists": 0,
        "total_private_repos": 0,
        "owned_private_repos": 0,
        "disk_usage": 0,
        "collaborators": 0,
        "two_factor_authentication": True,
        "user_view_type": "private",
    }


def comment_json(base: str, c: Comment) -> dict[str, Any]:
    url = f"{base}/repos/{c.repository}/issues/comments/{c.id}"
    return {
        "id": c.id,
        "node_id": f"IC_kwDO{c.id}",
        "url": url,
        "html_url": f"https://github.com/{c.repository}/pull/{c.issue}#issuecomment-{c.id}",
        "body": c.body,
        "user": user_json(base, c.user),
        "created_at": c.created_at,
        "updated_at": c.updated_at,
        "issue_url": f"{base}/repos/{c.repository}/issues/{c.issue}",
        "author_association": "CONTRIBUTOR" if c.user.type == "User" else "NONE",
        "performed_via_github_app": None,
        "reactions": {
            "url": f"{url}/reactions",
            "total_count": 0,
            **dict.fromkeys(("+1", "-1", "laugh", "confused", "heart", "hooray", "eyes"), 0),
            "rocket": 0,
        },
    }


def label_json(base: str, repository: str, name: str) -> dict[str, Any]:
    number = int(hashlib.sha256(name.encode()).hexdigest()[:8], 16)
    return {
        "id": number,
        "node_id": f"LA_{number}",
        "url": f"{base}/repos/{repository}/labels/{quote(name)}",
        "name": name,
        "description": None,
        "color": "ededed",
        "default": False,
    }


def error_json(message: str, status: int, doc: str = DOCS) -> dict[str, Any]:
    return {"message": message, "documentation_url": doc, "status": str(status)}


def validation_failed(problems: list[str]) -> dict[str, Any]:
    return {
        "message": "Validation Failed",
        "documentation_url": DOCS,
        "errors": [{"code": "invalid", "message": problem} for problem in problems],
    }


# --- HTTP ------------------------------------------------------------------------------------


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


class Handler(BaseHTTPRequestHandler):
    server: GitHubServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PATCH(self) -> None:
        self._handle()

    def _base(self) -> str:
        return f"http://{self.headers.get('Host', '127.0.0.1')}{self.server.prefix}"

    def _handle(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query, keep_blank_values=True)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if parts.path == "/_stand-in/state":
            self._send(Reply(200, self.server.state.snapshot()))
            return
        prefix = self.server.prefix
        if not parts.path.startswith(prefix + "/"):
            self._send(Reply(404, error_json("Not Found", 404)))
            return
        path = parts.path[len(prefix) :]
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            self._send(Reply(400, error_json("Problems parsing JSON", 400)))
            return
        reply = self._dispatch(self.command, path, query, body, bool(raw))
        state = self.server.state
        with state.lock:
            state.log.append(
                LoggedRequest(
                    self.command,
                    path,
                    query,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    reply.status,
                )
            )
        self._send(reply)

    def _dispatch(
        self, method: str, path: str, query: dict[str, list[str]], body: Any, has_body: bool
    ) -> Reply:
        state = self.server.state
        api = self.server.api
        found = api.find(method, path)
        if found is None:
            return Reply(404, error_json("Not Found", 404))
        op, params = found
        problem = self._header_problem()
        if problem is not None:
            return problem
        user = state.tokens.get(_token(self.headers.get("Authorization", "")))
        if user is None:
            return self._checked(op, Reply(401, error_json("Bad credentials", 401)))
        violations = api.request_errors(op, query, body, has_body)
        if violations:
            with state.lock:
                state.violations += [f"{method} {path}: {v}" for v in violations]
            return Reply(422, validation_failed(violations))
        fault = state.take_fault(method, path)
        if fault is not None and fault.apply:
            self._operation(op.operation_id, params, query, body, user)
        if fault is not None:
            reply = Reply(
                fault.status,
                fault.body if fault.body is not None else error_json("injected", fault.status),
            )
            reply.headers.update(fault.headers)
            return reply  # an injected failure is not GitHub's documented answer
        reply = self._operation(op.operation_id, params, query, body, user)
        return self._checked(op, reply)

    def _checked(self, op: Operation, reply: Reply) -> Reply:
        problems = self.server.api.response_errors(op, reply.status, reply.body)
        if problems:
            with self.server.state.lock:
                self.server.state.violations += [f"{op.operation_id}: {p}" for p in problems]
        return reply

    def _header_problem(self) -> Reply | None:
        accept = self.headers.get("Accept", "")
        version = self.headers.get("X-GitHub-Api-Version")
        if "application/vnd.github+json" not in accept and "application/json" not in accept:
            self.server.state.violations.append(f"unexpected Accept header {accept!r}")
        if version is not None and version not in API_VERSIONS:
            return Reply(400, error_json(f"API version {version!r} is not supported.", 400))
        if version is None:
            self.server.state.violations.append("missing X-GitHub-Api-Version header")
        if not self.headers.get("User-Agent"):
            return Reply(403, error_json("Request forbidden by administrative rules.", 403))
        return None

    def _operation(
        self,
        operation_id: str,
        params: dict[str, str],
        query: dict[str, list[str]],
        body: Any,
        user: User,
    ) -> Reply:
        state = self.server.state
        base = self._base()
        repository = f"{params.get('owner')}/{params.get('repo')}"
        if operation_id == "users/get-authenticated":
            if user.installation:
                return Reply(403, error_json(READ_ONLY, 403))
            return Reply(200, private_user_json(base, user))
        if operation_id == "issues/list-comments":
            return self._page(
                [
                    comment_json(base, c)
                    for c in state.comments_on(repository, int(params["issue_number"]))
                ],
                query,
            )
        if operation_id == "issues/list-labels-on-issue":
            names = state.labels.get((repository, int(params["issue_number"])), [])
            return self._page([label_json(base, repository, n) for n in names], query)
        if user.read_only:
            return Reply(403, error_json(READ_ONLY, 403))
        if operation_id == "issues/create-comment":
            with state.lock:
                comment = state.add_comment(
                    repository, int(params["issue_number"]), body["body"], user
                )
            payload = comment_json(base, comment)
            return Reply(201, payload, {"Location": payload["url"]})
        if operation_id == "issues/update-comment":
            with state.lock:
                comment = state.comments.get(int(params["comment_id"]))
                if comment is None or comment.repository != repository:
                    return Reply(404, error_json("Not Found", 404))
                if comment.user.login != user.login:
                    return Reply(403, error_json(READ_ONLY, 403))
                comment.body = body["body"]
                comment.updated_at = _now()
            return Reply(200, comment_json(base, comment))
        return Reply(404, error_json("Not Found", 404))

    def _page(self, items: list[Any], query: dict[str, list[str]]) -> Reply:
        per_page = min(int(query.get("per_page", ["30"])[-1]), 100)
        page = max(int(query.get("page", ["1"])[-1]), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        links = []
        base = f"http://{self.headers.get('Host', '127.0.0.1')}{urlsplit(self.path).path}"

        def link(number: int, rel: str) -> str:
            rest = {k: v[-1] for k, v in query.items() if k != "page"}
            return f'<{base}?{urlencode({**rest, "page": number})}>; rel="{rel}"'

        if page > 1:
            links += [link(page - 1, "prev"), link(1, "first")]
        if page < last:
            links += [link(page + 1, "next"), link(last, "last")]
        return Reply(200, chunk, {"Link": ", ".join(links)} if links else {})

    def _send(self, reply: Reply) -> None:
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)


def _token(header: str) -> str:
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() in ("bearer", "token") else ""


class GitHubServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, port: int = 0, state: GitHubState | None = None, prefix: str = "") -> None:
        """`prefix` mimics GitHub Enterprise's API root, e.g. `/api/v3`."""
        self.state = state or GitHubState()
        self.prefix = prefix.rstrip("/")
        self.api = OpenApi()
        super().__init__(("127.0.0.1", port), Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}{self.prefix}"

    def start(self) -> GitHubServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def __enter__(self) -> GitHubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument(
        "--token", action="append", default=[], metavar="TOKEN=LOGIN", help="a known token"
    )
    args = parser.parse_args()
    server = GitHubServer(args.port)
    for spec in args.token:
        token, _, login = spec.partition("=")
        server.state.add_token(token, login or "github-actions[bot]")
    print(server.url, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
