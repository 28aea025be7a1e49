"""Where the response cache lives and how it is kept: one folder for both sides (a relative one
taken from the repository, not from a side's working directory), never a change, a watched
file or part of a diff, ignored by git; reads recorded in the entries' times; pruning; the
Action's default in the workspace, and its files handed to the workspace's owner."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from helpers.cli import Done, gate_here
from helpers.reports import case, report
from helpers.servers.git_http import git
from helpers.servers.model_server import ModelServer

from gate.compare.pairing import compare
from gate.github.response_cache import CACHE_DIR, cache_environ, hand_over, tidy_cache
from gate.inputs.config import load_config
from gate.inputs.policy import Policy
from gate.providers.cache import ResponseCache, cache_key, prune, resolve_cache_dir
from gate.render.style import MARKDOWN
from gate.render.usage import usage_rows

DAY = 86400.0
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def test_a_relative_folder_is_taken_from_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    env = {"GATE_CACHE_DIR": "answers", "HOME": str(tmp_path / "home")}
    assert resolve_cache_dir(None, env, repo) == repo.resolve() / "answers"
    assert resolve_cache_dir("cfg/cache", env, repo) == repo.resolve() / "cfg/cache"
    assert resolve_cache_dir("/abs", env, repo) == Path("/abs")
    assert resolve_cache_dir("~/c", env, repo) == Path("~/c").expanduser()
    home = resolve_cache_dir(None, {"HOME": str(tmp_path / "home")}, repo)
    assert home == tmp_path / "home" / ".cache" / "eval-gate"


def test_the_action_keeps_it_in_the_workspace(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    assert cache_environ({"HOME": "/github/home"}, workspace)["GATE_CACHE_DIR"] == str(
        workspace.resolve() / CACHE_DIR
    )
    chosen = cache_environ({"GATE_CACHE_DIR": "answers"}, workspace)
    assert chosen["GATE_CACHE_DIR"] == str(workspace.resolve() / "answers")
    assert cache_environ({"GATE_CACHE_DIR": "/elsewhere"}, workspace)["GATE_CACHE_DIR"] == (
        "/elsewhere"
    )


def test_a_read_records_when_the_answer_was_used(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key("u", BODY, 0)
    cache.put(key, {"a": 1})
    old = time.time() - 30 * DAY
    os.utime(cache.path(key), (old, old))
    assert cache.lookup(key) is not None
    assert cache.path(key).stat().st_mtime > time.time() - 60
    assert cache.lookup(cache_key("u", BODY, 1)) is None  # a miss touches nothing


def test_prune_deletes_what_no_run_read_for_keep_days(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    keys = [cache_key("u", BODY, n) for n in range(4)]
    for key in keys:
        cache.put(key, {"text": "x" * 100})
    now = time.time()
    for key, age in zip(keys, (0, 6.9, 7.1, 40), strict=True):
        os.utime(cache.path(key), (now - age * DAY, now - age * DAY))
    leftover = cache.path(keys[0]).with_name(f".{keys[0]}.json.abc123.tmp")
    leftover.write_text("half")
    os.utime(leftover, (now - 8 * DAY, now - 8 * DAY))
    stale_lock, held = (cache.path(k).with_suffix(".lock") for k in keys[:2])  # killed runs'
    stale_lock.write_text("")
    os.utime(stale_lock, (now - 8 * DAY, now - 8 * DAY))
    held.write_text("")  # a run's lock today: kept, and no answer
    other = cache.path(keys[0]).with_name("notes.json")
    other.write_text("not ours")
    os.utime(other, (now - 99 * DAY, now - 99 * DAY))
    size = prune(tmp_path, 7, now=now)
    assert (size.entries, size.removed) == (2, 4)
    assert size.bytes == sum(cache.path(k).stat().st_size for k in keys[:2])
    assert [cache.path(k).exists() for k in keys] == [True, True, False, False]
    assert not leftover.exists() and not stale_lock.exists() and held.exists()
    assert other.exists() and (tmp_path / ".gitignore").exists()
    assert prune(tmp_path / "nothing-here", 7).entries == 0


def test_git_never_sees_the_cache_whatever_the_repository_ignores(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / ".gitignore").write_text("!*\n!.eval-gate/**\n")  # un-ignores everything
    ResponseCache(repo / CACHE_DIR).put(cache_key("u", BODY, 0), {"a": 1})
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == "?? .gitignore"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as another user")
def test_what_root_wrote_goes_to_the_workspaces_owner(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "ws", tmp_path / "outside"
    cache = ResponseCache(workspace / CACHE_DIR)
    cache.put(cache_key("u", BODY, 0), {"a": 1})
    outside.mkdir()
    (workspace / CACHE_DIR / "link").symlink_to(outside)
    os.chown(workspace, 1000, 1000)
    hand_over(workspace / CACHE_DIR, workspace)
    owned = [workspace / ".eval-gate", *(workspace / ".eval-gate").rglob("*")]
    assert {(p.lstat().st_uid, p.lstat().st_gid) for p in owned} == {(1000, 1000)}
    assert outside.stat().st_uid == 0  # a link is not followed
    hand_over(outside, workspace)  # not in the workspace: left alone
    assert outside.stat().st_uid == 0


def test_the_action_prunes_and_says_what_the_cache_holds(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "gate.yml").parent.mkdir()
    (workspace / "gate.yml").write_text(
        "cache: {keep_days: 3}\nsuites: [{cases: c.jsonl, system: {kind: replay, file: r}}]\n"
    )
    settings = load_config(workspace / "gate.yml").config.cache
    folder = Path(cache_environ({}, workspace)["GATE_CACHE_DIR"])
    assert tidy_cache(folder, settings, workspace) is None  # nothing cached yet
    cache = ResponseCache(workspace / CACHE_DIR)
    keys = [cache_key("u", BODY, n) for n in range(3)]
    for key in keys:
        cache.put(key, {"text": "answer"})
    stale = time.time() - 4 * DAY
    os.utime(cache.path(keys[0]), (stale, stale))
    line = tidy_cache(folder, settings, workspace)
    assert line is not None and line.startswith(f"[gate] response cache {CACHE_DIR}: 2 answers")
    assert line.endswith("; 1 not read for 3 days deleted")


# --- gate check: both sides, one folder in the repository ------------------------------------


@pytest.fixture
def model(server: ModelServer) -> ModelServer:
    return server


def chat_repo(root: Path, model: ModelServer, **cache: str) -> Path:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    system = {
        "kind": "openai",
        "model_config": "model.yaml",
        "prompt": "ask.j2",
        "base_url": model.openai_base_url,
        "api_key_env": "UPKEEP_KEY",
    }
    config = {
        "watch": ["**"],  # everything, the cache folder included if the gate did not skip it
        **({"cache": cache} if cache else {}),
        "suites": [{"name": "s", "cases": "cases.jsonl", "system": system}],
    }
    (root / "gate.yml").write_text(json.dumps(config))
    (root / "model.yaml").write_text("model: m1\n")
    (root / "ask.j2").write_text("About {{ topic }}.")
    rows = [{"id": f"c{i}", "input": {"topic": f"t{i}"}, "expect": {"must_include": ["t"]}}
            for i in range(4)]  # fmt: skip
    (root / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    (root / "ask.j2").write_text("Tell me about {{ topic }}.")
    return root


def check(repo: Path, env: dict[str, str]) -> tuple[dict[str, dict[str, int]], Done]:
    """`gate check`: each side's cache counts, and what it printed."""
    done = gate_here("check", "--base", "main", cwd=repo, env={"UPKEEP_KEY": "k", **env})
    assert done.code == 0, done.err
    summaries = {
        s: repo / ".eval-gate/reports" / "s" / f"{s}.summary.json" for s in ("base", "head")
    }
    return {side: json.loads(path.read_text())["cache"] for side, path in summaries.items()}, done


@pytest.mark.parametrize("where", ["env", "config"])
def test_both_sides_share_a_relative_folder_that_is_never_a_change(
    tmp_path: Path, model: ModelServer, where: str
) -> None:
    repo = chat_repo(tmp_path / "repo", model, **({"dir": "answers"} if where == "config" else {}))
    env = {"GATE_CACHE_DIR": "answers"} if where == "env" else {"GATE_CACHE_DIR": ""}
    first, _ = check(repo, env)
    assert first["base"]["misses"] == 4 and first["head"]["misses"] == 4
    assert len(list((repo / "answers").rglob("*.json"))) == 8  # the base's too, not its worktree's
    model.reset_counts()
    again, done = check(repo, env)  # with the folder now full
    assert model.requests == 0
    assert again == {"base": {"hits": 4, "misses": 0}, "head": {"hits": 4, "misses": 0}}
    head = json.loads((repo / ".eval-gate/reports/s/head.jsonl").read_text().splitlines()[0])
    assert not [f for f in head["files"] if f.startswith("answers/")]  # not a watched file
    assert "ask.j2" in done.out and "answers/" not in done.out  # not a change, in no diff


def test_cache_files_are_no_change_even_when_committed(tmp_path: Path, model: ModelServer) -> None:
    repo = chat_repo(tmp_path / "repo", model)
    env = {"GATE_CACHE_DIR": "answers"}
    check(repo, env)
    git(repo, "checkout", "-q", "ask.j2")  # the prompt as on main again
    git(repo, "checkout", "-q", "-b", "pr")
    git(repo, "add", "-f", "answers")
    git(repo, "commit", "-qm", "the cache, committed by mistake")
    done = gate_here("check", "--base", "main", cwd=repo, env={"UPKEEP_KEY": "k", **env})
    assert done.code == 0, done.err
    assert "skipped" in done.err and "no file changed between the base and the head" in done.out


def test_the_cost_table_says_how_many_calls_the_cache_answered(tmp_path: Path) -> None:
    judge = {"calls": 1, "cached": 1, "tokens": {"prompt": 9, "completion": 1}}
    base = [case("a", cached=True, judge=judge), case("b", cached=True), case("c", cached=True)]
    head = [case("a", cached=True), case("b"), case("c", judge={**judge, "cached": 0})]
    c = compare(report(tmp_path, "base", base), report(tmp_path, "head", head), Policy())
    assert (c.base_usage.cached_calls, c.head_usage.cached_calls) == (3, 1)
    rows = {str(r["label"]): (str(r["base"]), str(r["head"])) for r in usage_rows(c, MARKDOWN)}
    assert rows["Calls"] == ("3", "3") and rows["From the cache"] == ("3", "1")
    assert rows["Judge calls from the cache"] == ("1", "0")
    labels = [str(r["label"]) for r in usage_rows(c, MARKDOWN)]
    assert labels.index("From the cache") == labels.index("Calls") + 1
    assert labels.index("Judge calls from the cache") == labels.index("Judge calls") + 1
