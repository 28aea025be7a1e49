"""A GitHub Actions world for end-to-end tests of `gate action`, built from real parts.

- an origin repository served over smart HTTP behind the job token (`GitHttpServer`);
- the GitHub API stand-in (`GitHubServer`) holding the PR's comments;
- a project with a `python` system whose answers follow its prompt file, pushed as a base
  branch and a PR branch, plus the merge commit GitHub builds (`refs/pull/N/merge`);
- the workspace checked out like actions/checkout does (one commit deep, no credentials kept);
- a real webhook payload (@octokit/webhooks-examples) with its SHAs rewritten to these commits;
- the Actions environment (`GITHUB_*`, `INPUT_*`) for `python -m gate action`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from helpers.servers.git_http import Author, GitHttpServer, checkout_like_actions, git, make_bare
from helpers.servers.github_api import GitHubServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
REPO_ROOT = Path(__file__).resolve().parents[3]


def action_command() -> list[str]:
    """How the Action's image starts the gate: the Dockerfile's ENTRYPOINT, its `python` this
    interpreter (which has the gate installed, as the image does)."""
    for line in (REPO_ROOT / "Dockerfile").read_text(encoding="utf-8").splitlines():
        if line.startswith("ENTRYPOINT "):
            argv = json.loads(line.removeprefix("ENTRYPOINT "))
            return [sys.executable if argv[0] == "python" else argv[0], *argv[1:]]
    raise AssertionError("the Dockerfile has no ENTRYPOINT")


REPOSITORY = "Codertocat/Hello-World"  # the payloads' repository
TOKEN = "ghs_e2eJobToken0123456789abcdefABCDEF"

# The system under test: answers with the words its prompt allows, tagged with which checkout
# its code came from, and says whether it can see any credential of the gate.
BOT = """
import os
from pathlib import Path

SIDE_TAG = "{tag}"
PROMPT = Path(__file__).resolve().parent.parent / "prompts" / "support.md"


def answer(inputs):
    words = [l.split(":", 1)[1].strip() for l in PROMPT.read_text().splitlines() if l.startswith("say:")]
    leaked = any(
        "ghs_" in value or "AUTHORIZATION" in value.upper() for value in os.environ.values()
    )
    return {{"text": " ".join(words) + f" [{{SIDE_TAG}}] leak={{'yes' if leaked else 'no'}}"}}
"""

WORDS = ["CAC", "fees", "licensed", "minutes", "statement", "card"]


def prompt(words: list[str]) -> str:
    return "You are the support bot.\n" + "".join(f"say: {w}\n" for w in words)


def cases(words: list[str]) -> str:
    rows = [
        {
            "id": f"faq-{i:03d}",
            "task": "faq",
            "severity": "major",
            "input": {"question": f"tell me about {w}"},
            "expect": {"must_include": [w]},
        }
        for i, w in enumerate(words, start=1)
    ]
    return "".join(json.dumps(r) + "\n" for r in rows)


GATE_YML = """
watch: ["prompts/**"]
threshold: 3
suites:
  - name: support
    cases: cases/support.jsonl
    system: {kind: python, target: "app.bot:answer"}
"""


def project_files(tag: str, words: list[str]) -> dict[str, str | None]:
    return {
        "gate.yml": textwrap.dedent(GATE_YML).lstrip(),
        "cases/support.jsonl": cases(WORDS),
        "app/__init__.py": "",
        "app/bot.py": BOT.format(tag=tag),
        "prompts/support.md": prompt(words),
        "README.md": "# app\n",
    }


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str
    outputs: dict[str, str]
    summary: str

    @property
    def log(self) -> str:
        return self.stdout + self.stderr


@dataclass
class World:
    tmp: Path
    api: GitHubServer
    git_server: GitHttpServer
    origin: Path
    author: Author
    number: int = 7
    base_sha: str = ""
    head_sha: str = ""
    merge_sha: str = ""
    workspace: Path | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    runs: int = 0

    @property
    def url(self) -> str:
        return f"{self.git_server.url}/app.git"

    # -- history --

    def base(self, files: dict[str, str | None] | None = None) -> str:
        """The base branch: the project with every rule in its prompt."""
        self.author.commit("project", files or project_files("base", WORDS))
        self.author.push("HEAD:main")
        self.base_sha = git(self.author.path, "rev-parse", "HEAD")
        return self.base_sha

    def pr(self, files: dict[str, str | None], message: str = "change") -> str:
        """A commit on the PR branch and GitHub's merge commit for it."""
        git(self.author.path, "checkout", "-q", "-B", "feature", self.head_sha or self.base_sha)
        self.head_sha = self.author.commit(message, files)
        self.author.push("feature")
        self.merge_sha = self.author.merge_ref(
            self.base_sha, self.head_sha, f"refs/pull/{self.number}/merge"
        )
        return self.head_sha

    def checkout(self, sha: str | None = None, *, depth: int = 1) -> Path:
        self.runs += 1
        ref = f"refs/remotes/pull/{self.number}/merge"
        self.workspace = self.tmp / f"workspace{self.runs}"
        checkout_like_actions(
            self.workspace, self.url, sha or self.merge_sha, ref, TOKEN, depth=depth
        )
        return self.workspace

    # -- the event and the environment --

    def event(self, name: str = "pull_request.synchronize", **replace: Any) -> Path:
        payload = json.loads((FIXTURES / "webhooks" / f"{name}.json").read_text())
        text = json.dumps(payload)
        if name.startswith("pull_request."):
            pr = payload["pull_request"]
            text = text.replace(pr["base"]["sha"], self.base_sha).replace(
                pr["head"]["sha"], self.head_sha
            )
            payload = json.loads(text)
            payload["number"] = payload["pull_request"]["number"] = self.number
        payload.update(replace)
        path = self.tmp / f"event{self.runs}.json"
        path.write_text(json.dumps(payload), encoding="utf-8")
        return path

    def environ(
        self, event: Path, event_name: str = "pull_request", **inputs: str
    ) -> dict[str, str]:
        assert self.workspace is not None
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_", "GIT_"))
        }
        out = self.tmp / f"output{self.runs}"
        summary = self.tmp / f"summary{self.runs}"
        out.write_text("")
        summary.write_text("")
        env.update(
            {
                "GITHUB_EVENT_NAME": event_name,
                "GITHUB_EVENT_PATH": str(event),
                "GITHUB_REPOSITORY": REPOSITORY,
                "GITHUB_API_URL": self.api.url,
                "GITHUB_SERVER_URL": self.git_server.url,
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_OUTPUT": str(out),
                "GITHUB_STEP_SUMMARY": str(summary),
                "GITHUB_RUN_ID": "4242",
                "GATE_CACHE_DIR": str(self.tmp / "cache"),
                "GIT_TERMINAL_PROMPT": "0",
                "PYTHONPATH": str(REPO_ROOT),
                "INPUT_GITHUB-TOKEN": TOKEN,
                "ACTIONS_RUNTIME_TOKEN": "ghs_runnerRuntimeToken",  # the runner's, never passed on
                **{f"INPUT_{k.upper()}": v for k, v in {**self.inputs, **inputs}.items()},
            }
        )
        return env

    def run(self, env: dict[str, str], argv: list[str] | None = None) -> Run:
        done = subprocess.run(
            argv or action_command(),
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        return _finished(done.returncode, done.stdout, done.stderr, env)

    def run_here(self, env: dict[str, str]) -> Run:
        """`gate action` in this process (`helpers.cli.gate_here`) with exactly `env`: for
        tests of what the action decides; its sides are still processes. What the image's
        process itself does (its log as the runner reads it, exit codes, isolation) is for
        `run`."""
        from helpers.cli import gate_here

        assert self.workspace is not None, "checkout() first"
        done = gate_here("action", cwd=self.workspace, environ=env)
        return _finished(done.code, done.out, done.err, env)

    def comments(self) -> list[Any]:
        return self.api.state.comments_on(REPOSITORY, self.number)


def _finished(code: int, stdout: str, stderr: str, env: dict[str, str]) -> Run:
    """A run's result: its exit code, its output, and the step's outputs and summary files."""
    outputs = parse_outputs(Path(env["GITHUB_OUTPUT"]).read_text())
    return Run(code, stdout, stderr, outputs, Path(env["GITHUB_STEP_SUMMARY"]).read_text())


def parse_outputs(text: str) -> dict[str, str]:
    """Read `GITHUB_OUTPUT` the way the runner does (heredoc entries)."""
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, sep, delimiter = line.partition("<<")
        if not sep:
            key, _, value = line.partition("=")
            outputs[key] = value
            continue
        value_lines = []
        for inner in lines:
            if inner == delimiter:
                break
            value_lines.append(inner)
        outputs[name] = "\n".join(value_lines)
    return outputs


@contextmanager
def serve_api(prefix: str = "") -> Iterator[GitHubServer]:
    """The GitHub API stand-in, knowing the job token; fails the test on any request or
    response off GitHub's OpenAPI description."""
    with GitHubServer(prefix=prefix) as server:
        server.state.add_token(TOKEN)  # the job token: github-actions[bot]
        yield server
        assert server.state.violations == []


@contextmanager
def serve_world(tmp: Path, api: GitHubServer) -> Iterator[World]:
    """A git server on 127.0.0.1 holding the origin, and the world around it."""
    root = tmp / "srv"
    root.mkdir()
    with GitHttpServer(root, TOKEN) as git_server:
        yield make_world(tmp, api, git_server)


def make_world(tmp: Path, api: GitHubServer, git_server: GitHttpServer) -> World:
    origin = make_bare(git_server.root / "app.git")
    author = Author(tmp / "author", origin)
    git(author.path, "checkout", "-q", "-B", "main")
    return World(tmp, api, git_server, origin, author)
