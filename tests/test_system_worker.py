"""A `python` or `command` system runs in a worker process of its own, never in the gate's.

The head's system module is the PR's code: imported into `gate run` it could patch the checks,
rewrite the reports or write answers into the response cache. Here it tries all of that, and
to read the gate's credentials, through the real `gate check` flow on a real repository: the
verdict stays the regression's fail, and each attempt fails (as root the worker runs as an
unprivileged uid of its own) or stays inside the worker's process.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.cli import run_gate
from helpers.drop_box import open_folder
from helpers.pr_scenarios import BOT, FEES, drop, make_project, visible
from helpers.servers.git_http import Author

from gate.errors import InputError, SystemCallError
from gate.inputs.config import CommandSystem, PythonSystem
from gate.providers.cache import ResponseCache
from gate.systems import SystemEnv, SystemRequest, build_system

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop needs root")
SECRET = "ghs_theGatesOwnJobToken0123456789"
CREDENTIALS = {
    "GITHUB_TOKEN": SECRET,
    "INPUT_GITHUB-TOKEN": SECRET,
    "ACTIONS_RUNTIME_TOKEN": SECRET,
    "OPENAI_API_KEY": "sk-the-systems-own-key",  # what the system needs stays
}

# The head's app/bot.py: the regression (it answers what the PR's prompt allows) plus an
# attack on the gate at import time and again on every call (the reports exist by then).
ATTACK = """
import glob, json, os, pathlib

DROP, REPORTS = pathlib.Path({drop!r}), pathlib.Path({reports!r})
CACHE = pathlib.Path(os.environ.get("GATE_CACHE_DIR") or {cache!r})
found = {{"uid": os.getuid(), "pid": os.getpid()}}


def attempt(name, action):
    try:
        action()
        found[name] = "done"
    except Exception as exc:
        found[name] = type(exc).__name__


def patch_checks():  # every must_include passes, in this process
    import gate.checks.text as text
    passed = lambda self, output, case, ctx: [
        text.PhraseResult(kind="include", name="include:" + self.needle, passed=True, phrase=self.needle)
    ]
    text.MustInclude.run = passed


def write_reports():
    for path in REPORTS.rglob("*.jsonl"):
        path.write_text("forged\\n")
    (REPORTS / "support" / "forged.jsonl").write_text("forged\\n")


def write_cache():
    for path in CACHE.rglob("*.json"):
        path.write_text('{{"forged": true}}')
    (CACHE / "forged.json").write_text("{{}}")


def steal():
    found["env"] = sorted(k for k in os.environ if k.startswith(("INPUT_", "ACTIONS_", "GITHUB_T")))
    found["own_key"] = os.environ.get("OPENAI_API_KEY")
    found["leaks"] = []
    for environ in glob.glob("/proc/[0-9]*/environ"):
        try:
            if b"GITHUB_TOKEN=" in open(environ, "rb").read():  # the gate's own
                found["leaks"].append(environ)
        except OSError:
            pass


def attack(when):
    for name, action in [("patch_checks", patch_checks), ("write_reports", write_reports),
                         ("write_cache", write_cache), ("steal", steal)]:
        attempt(name, action)
    (DROP / f"{{when}}-{{os.getpid()}}.json").write_text(json.dumps(found))


attack("import")
_answer = answer


def answer(inputs):
    attack("call")
    return _answer(inputs)
"""


@pytest.fixture
def drop_box() -> Iterator[Path]:
    """A folder anyone may write, outside the test's closed temporary folders: where the
    attack leaves what it found."""
    with open_folder("gate-attack-") as folder:
        yield folder


def planted_cache(folder: Path) -> tuple[Path, str]:
    """A cache entry for the base, as the gate's own run leaves one."""
    cache = ResponseCache(folder)
    cache.put("ab" * 32, {"text": "the base's answer"})
    entry = cache.path("ab" * 32)
    return entry, entry.read_text()


@needs_root
def test_the_heads_system_cannot_reach_the_gate(tmp_path: Path, drop_box: Path) -> None:
    author: Author = make_project(tmp_path / "repo")
    root = author.path
    cache = root / ".gate-cache"  # in the workspace, as the Action keeps it
    entry, planted = planted_cache(cache)
    bot = BOT + ATTACK.format(
        drop=str(drop_box), reports=str(root / ".eval-gate/reports"), cache=str(cache)
    )
    author.write({"prompts/support.md": drop("fees")["prompt"], "app/bot.py": bot})

    env = {**CREDENTIALS, "GATE_CACHE_DIR": str(cache)}
    done = run_gate("check", "--base", "main", "--format", "markdown", cwd=root, env=env)

    assert done.code == 1, done.err
    assert "❌ **Eval Gate: fail** (support)" in visible(done.out)
    assert "(−12.5 pts, threshold 3) · 5 regressions" in visible(done.out)
    assert all("<code>" + case.replace("-", "\\-") + "</code>" in done.out for case in FEES)
    assert SECRET not in done.out + done.err
    for report in (root / ".eval-gate/reports").rglob("*.jsonl"):
        assert not report.read_text().startswith("forged")
        assert SECRET not in report.read_text()
    assert not (root / ".eval-gate/reports" / "support" / "forged.jsonl").exists()
    assert entry.read_text() == planted and not (cache / "forged.json").exists()

    attempts = [json.loads(p.read_text()) for p in sorted(drop_box.iterdir())]
    assert {p.name.split("-")[0] for p in drop_box.iterdir()} == {"import", "call"}
    for found in attempts:
        assert found["uid"] not in (0, os.getuid())
        assert found["patch_checks"] == "done"  # in its own process: the verdict above holds
        assert found["write_reports"] == found["write_cache"] == "PermissionError"
        assert found["env"] == [] and found["leaks"] == []
        assert found["own_key"] == CREDENTIALS["OPENAI_API_KEY"]


def _env(root: Path, concurrency: int = 1) -> SystemEnv:
    environ = {**os.environ, **CREDENTIALS}
    return SystemEnv(root=root, config_dir=root, environ=environ, concurrency=concurrency)


def _call(system: object, **inputs: object) -> object:
    request = SystemRequest(case_id="c1", input={"id": "c1", **inputs}, timeout_s=10)
    return system.call(request)  # type: ignore[attr-defined]


WORKER_APP = """
import os

def answer(inputs):
    if inputs.get("die"):
        os._exit(7)
    return {"text": f"{os.getpid()} {os.getuid()} {os.getppid()}"}
"""


def test_one_worker_answers_every_call_and_a_crash_costs_one_case(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(WORKER_APP)
    system = build_system(PythonSystem(kind="python", target="app:answer"), _env(tmp_path))
    try:
        pids = {_call(system).text.split()[0] for _ in range(20)}  # type: ignore[attr-defined]
        assert len(pids) == 1 and pids != {str(os.getpid())}
        pid, uid, parent = _call(system).text.split()  # type: ignore[attr-defined]
        assert int(parent) == os.getpid()
        if os.geteuid() == 0:
            assert int(uid) >= 1_900_000_000
        with pytest.raises(SystemCallError, match="process ended"):
            _call(system, die=True)
        again = _call(system).text.split()[0]  # type: ignore[attr-defined]
        assert again != pid  # started again: only the call that killed it failed
    finally:
        system.close()


def test_a_target_that_fails_to_import_is_the_users_input(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("raise RuntimeError('no model here')\n")
    with pytest.raises(InputError, match="no model here") as err:
        build_system(PythonSystem(kind="python", target="app:answer"), _env(tmp_path))
    assert err.value.key == "system.target"


@needs_root
def test_a_command_runs_as_the_workers_uid(tmp_path: Path) -> None:
    (tmp_path / "who.py").write_text(
        "import json, os, sys\njson.load(sys.stdin)\n"
        "print(json.dumps({'text': f'{os.getuid()} {sorted(os.environ)}'}))\n"
    )
    config = CommandSystem(kind="command", command=["{python}", "who.py"])
    system = build_system(config, _env(tmp_path))
    try:
        uid, _, names = _call(system).text.partition(" ")  # type: ignore[attr-defined]
    finally:
        system.close()
    assert int(uid) >= 1_900_000_000
    assert "GITHUB_TOKEN" not in names and "INPUT_GITHUB-TOKEN" not in names
    assert "OPENAI_API_KEY" in names


@needs_root
def test_the_worker_sees_no_more_of_a_closed_folder_than_it_needs(tmp_path: Path) -> None:
    """pytest's temporary folders are closed (0700): the worker's view shows only the checkout
    below them, read-only; a file beside the checkout is not there."""
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "beside.txt").write_text("the gate's")
    (root / "app.py").write_text(
        "from pathlib import Path\n\ndef answer(inputs):\n"
        f"    beside = Path({str(tmp_path / 'beside.txt')!r}).exists()\n"
        "    try:\n        Path(__file__).with_name('x').write_text('x')\n        wrote = True\n"
        "    except OSError:\n        wrote = False\n"
        "    return f'{beside} {wrote}'\n"
    )
    system = build_system(PythonSystem(kind="python", target="app:answer"), _env(root))
    try:
        assert _call(system).text == "False False"  # type: ignore[attr-defined]
    finally:
        system.close()


@needs_root
def test_a_checkout_the_workers_uid_cannot_read_is_named(tmp_path: Path) -> None:
    root = tmp_path / "closed"
    root.mkdir(mode=0o700)
    (root / "app.py").write_text(WORKER_APP)
    with pytest.raises(InputError, match=r"closed is not readable by uid \d+.*chmod o\+rx"):
        build_system(PythonSystem(kind="python", target="app:answer"), _env(root))


NO_NAMESPACES = """
import os, sys
from pathlib import Path
from gate.errors import InputError
from gate.inputs.config import PythonSystem
from gate.systems import SystemEnv, build_system

root = Path(sys.argv[1])
env = SystemEnv(root=root, config_dir=root, environ=dict(os.environ))
try:
    build_system(PythonSystem(kind="python", target="app:answer"), env).close()
except InputError as exc:
    print(exc.format())
"""


@needs_root
@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs setpriv")
def test_without_mount_namespaces_a_closed_folder_is_named_and_nothing_runs(
    tmp_path: Path, drop_box: Path
) -> None:
    """Root without CAP_SYS_ADMIN (a container's default) cannot make the view: the worker
    refuses to start, naming the folder others cannot enter, and imports nothing."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text(
        f"open({str(drop_box / 'ran')!r}, 'w')\n\ndef answer(i):\n    return 'x'\n"
    )
    closed = tmp_path.parent  # pytest's folders are 0700 (tmp_path itself is opened)
    done = subprocess.run(
        ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", "--",
         sys.executable, "-c", NO_NAMESPACES, str(root)],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    assert "cannot confine the system's process" in done.stdout, done.stdout + done.stderr
    assert "others cannot enter it" in done.stdout and "chmod o+x" in done.stdout
    assert str(closed.parent) in done.stdout or str(closed) in done.stdout
    assert not (drop_box / "ran").exists()


@needs_root
def test_gate_validate_imports_the_target_in_the_worker_too(tmp_path: Path, drop_box: Path) -> None:
    """`gate validate` (a CI step on a pull request, say) tries the target's import as a run
    does: in the worker, as its uid, never as root in a process of the gate."""
    (tmp_path / "c.jsonl").write_text('{"id": "a", "expect": {"must_include": ["x"]}}\n')
    (tmp_path / "gate.yml").write_text(
        "cases: c.jsonl\nsystem: {kind: python, target: 'app:answer'}\n"
    )
    (tmp_path / "app.py").write_text(
        f"import os\nopen({str(drop_box / 'uid')!r}, 'w').write(str(os.getuid()))\n\n"
        "def answer(inputs):\n    return 'x'\n"
    )
    done = run_gate("validate", cwd=tmp_path)
    assert done.code == 0, done.err
    assert int((drop_box / "uid").read_text()) >= 1_900_000_000
