"""The sandbox's isolation, checked from inside (candidate code probing) and from outside
(host processes, the zygote's environment, a real HTTP server). Nothing here is mocked."""

from __future__ import annotations

import http.server
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import REPO

from gate.errors import CheckInfraError, InputError
from gate.inputs.cases import Case
from gate.inputs.config import SandboxConfig
from gate.inputs.expect import Expect
from gate.sandbox import Sandbox, open_sandbox
from gate.sandbox.host import protections
from gate.sandbox.host.folders import DIR_PREFIX, OWNER_FILE, sweep_stale
from gate.sandbox.host.sandbox import MAX_RESTARTS
from gate.sandbox.host.zygote_process import BOOTSTRAP
from gate.sandbox.protocol import framing, plain
from gate.sandbox.protocol.boot import ZygoteSetup
from gate.sandbox.protocol.environment import JOB_ENVIRONMENT
from gate.sandbox.protocol.messages import Hello, Job, Outcome

MARKER = f"1000.{uuid.uuid4().int % 10**9}"  # `sleep` argument that tags this run's processes


def kernel_allows_namespaces() -> bool:
    """Independent of the sandbox: can this machine unshare net, pid and mount namespaces?"""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    done = subprocess.run(
        ["unshare", "--net", "--pid", "--mount", "--fork", "true"], capture_output=True
    )
    return done.returncode == 0


FULL_ISOLATION = kernel_allows_namespaces()
needs_namespaces = pytest.mark.skipif(not FULL_ISOLATION, reason="no namespaces on this machine")


def processes_tagged(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def make_checkout(root: Path) -> Path:
    (root / "lib").mkdir()
    (root / "lib" / "shapes.py").write_text("def area(w, h):\n    return w * h\n")
    return root


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    root = make_checkout(tmp_path_factory.mktemp("checkout"))
    config = SandboxConfig(
        timeout_s=3, memory_mb=256, pythonpath=["lib"], prelude="import shapes", workers=2
    )
    with open_sandbox(config, root) as opened:
        yield opened


@pytest.fixture(scope="module")
def tight(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    """Small limits, to hit each of them quickly."""
    config = SandboxConfig(
        timeout_s=2,
        cpu_s=1,
        memory_mb=64,
        max_file_mb=4,
        max_open_files=32,
        max_processes=8,
        max_output_kb=4,
    )
    with open_sandbox(config, tmp_path_factory.mktemp("empty")) as opened:
        yield opened


def our_zygotes() -> list[int]:
    """Sandbox processes started by this test process that are still running."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = next(line.split()[1] for line in status.splitlines() if line.startswith("PPid"))
        if parent == str(os.getpid()) and b"gate.sandbox.zygote" in cmdline:
            found.append(int(entry))
    return found


@pytest.fixture(scope="module", autouse=True)
def nothing_left_behind() -> Iterator[None]:
    yield  # set up first, so torn down last: after this module's sandboxes were closed
    assert processes_tagged(MARKER) == [], "a process started by candidate code survived"
    assert our_zygotes() == [], "a sandbox was not stopped"


def hidden(
    sandbox: Sandbox, code: str, calls: dict[str, Any]
) -> dict[str, tuple[bool | None, str]]:
    """Run `code`, then each call; a check passes when the call's value equals its `eq`."""
    expect = Expect(hidden_tests=[{"call": c, "eq": eq} for c, eq in calls.items()])
    results = sandbox.run_code_checks(code, Case(id="c", task="t", expect=expect))
    return {r.name.removeprefix("hidden:"): (r.passed, r.detail) for r in results}


def all_pass(found: dict[str, tuple[bool | None, str]]) -> None:
    failed = {name: detail for name, (passed, detail) in found.items() if not passed}
    assert failed == {}


def test_protections_report_what_is_active(sandbox: Sandbox) -> None:
    report = sandbox.protections()
    assert report["environment"] == "scrubbed: only PATH, HOME, TMPDIR, USER, LOGNAME, LANG"
    assert report["timeout_s"] == 3 and report["rlimits"]["cpu_s"] == 4
    assert report["rlimits"]["address_space_mb"] == "256 on top of the interpreter"
    if FULL_ISOLATION:
        assert report["degraded"] == []
        assert report["network"] == "isolated (empty network namespace)"
        assert report["pid_namespace"] and report["mount_namespace"]
        first = sandbox.hello.mode.first_uid
        assert first == 2_000_000_000 + 64 * (sandbox.hello.pid % 1_000_000)
        assert report["user"].startswith(f"uid/gid {first}+slot")
        assert report["rlimits"]["processes"] == 16
    else:
        assert report["degraded"], "a machine without namespaces must say what is missing"


def test_no_secret_reaches_the_candidate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-gate-test-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_gate_test_secret")
    code = (
        "import os\n"
        "SECRETS = (b'sk-gate-test', b'ghp_gate_test')\n"
        "def leaks():\n"
        "    found = [k for k, v in os.environ.items() if any(s.decode() in v for s in SECRETS)]\n"
        "    pids = [p for p in os.listdir('/proc') if p.isdigit()] + ['self', '1']\n"
        "    for pid in pids:\n"
        "        for name in ('environ', 'cmdline'):\n"
        "            try:\n"
        "                data = open(f'/proc/{pid}/{name}', 'rb').read()\n"
        "            except OSError:\n"
        "                continue\n"
        "            found += [f'{pid}/{name}' for s in SECRETS if s in data]\n"
        "    return found\n"
    )
    with open_sandbox(SandboxConfig(), tmp_path) as opened:
        found = hidden(
            opened,
            code,
            {
                "leaks()": [],
                "sorted(os.environ)": sorted(JOB_ENVIRONMENT),
            },
        )
        zygote_environment = Path(f"/proc/{opened.hello.pid}/environ").read_bytes()
    all_pass(found)
    assert b"gate_test" not in zygote_environment and b"gate-test" not in zygote_environment


@needs_namespaces
def test_no_network(sandbox: Sandbox) -> None:
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    code = (
        "import socket, urllib.request\n"
        "def fetch():\n"
        "    try:\n"
        f"        urllib.request.urlopen('http://127.0.0.1:{port}/leak', timeout=2)\n"
        "    except OSError as exc:\n"
        "        return 'no network'\n"
        "    return 'connected'\n"
        "def resolve():\n"
        "    try:\n"
        "        socket.getaddrinfo('example.com', 80)\n"
        "    except OSError:\n"
        "        return 'no network'\n"
        "    return 'resolved'\n"
    )
    try:
        found = hidden(sandbox, code, {"fetch()": "no network", "resolve()": "no network"})
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/control", timeout=5) as response:
            assert response.status == 200  # the server works: only the sandbox cannot reach it
    finally:
        server.shutdown()
    all_pass(found)
    assert hits == ["/control"]


@needs_namespaces
def test_runs_as_an_unprivileged_user_without_capabilities(sandbox: Sandbox) -> None:
    code = (
        "import os\n"
        "def status(field):\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith(field + ':'):\n"
        "            return line.split()[1]\n"
    )
    found = hidden(
        sandbox,
        code,
        {
            "os.getuid() >= 2000000000 and os.getgid() >= 2000000000": True,
            "os.getgroups()": [],
            "status('CapEff')": "0000000000000000",
            "status('NoNewPrivs')": "1",
            "os.getpid()": 1,
        },
    )
    all_pass(found)


@needs_namespaces
def test_the_filesystem_is_a_minimal_read_only_view(sandbox: Sandbox) -> None:
    code = (
        "import os, shapes\n"
        "def write(path):\n"
        "    try:\n"
        "        with open(path, 'w') as handle:\n"
        "            handle.write('x')\n"
        "    except OSError:\n"
        "        return 'refused'\n"
        "    return 'written'\n"
    )
    found = hidden(
        sandbox,
        code,
        {
            "os.getcwd()": "/sandbox",
            "os.listdir('.')": [],
            # the checkout's files stay out (its folder may exist when the venv lives in it)
            f"os.path.exists({str(REPO / 'gate.yml')!r})": False,
            f"os.path.exists({str(REPO / 'gate')!r})": False,
            "os.path.exists('/home') or os.path.exists('/var')": False,
            "os.path.exists('/root/.bashrc')": False,
            "write('/usr/evil')": "refused",
            "write('/etc/evil')": "refused",
            "write(shapes.__file__)": "refused",
            "write('/sandbox/mine')": "written",
            # /tmp is the job's own folder, unless the Python installation itself lives in /tmp
            "os.path.islink('/tmp') == (write('/tmp/mine') == 'written')": True,
        },
    )
    all_pass(found)
    # the next job starts with an empty folder again
    all_pass(hidden(sandbox, "import os", {"os.listdir('/sandbox')": []}))


def test_each_limit_fails_the_check_and_says_which(tight: Sandbox) -> None:
    code = (
        "import os, time\n"
        "def memory():\n"
        "    return len(bytearray(200 * 1024 * 1024))\n"
        "def big_file():\n"
        "    with open('big', 'wb') as handle:\n"
        "        handle.write(b'x' * 6 * 1024 * 1024)\n"
        "def many_files():\n"
        "    return [open('f%d' % i, 'w') for i in range(100)]\n"
        "def forks():\n"
        "    started = 0\n"
        "    for _ in range(30):\n"
        "        try:\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(5)\n"
        "                os._exit(0)\n"
        "        except OSError:\n"
        "            break\n"
        "        started += 1\n"
        "    return started\n"
    )
    found = hidden(
        tight,
        code,
        {"memory()": 0, "big_file()": None, "many_files()": [], "forks() < 8": True},
    )
    assert found["memory()"] == (
        False,
        "MemoryError: out of memory (limit 64 MB) (candidate line 3)",
    )
    assert found["big_file()"][1].startswith("OSError: [Errno 27] File too large")
    assert found["many_files()"][1].startswith("OSError: [Errno 24] Too many open files")
    if tight.hello.mode.uid_drop:
        assert found["forks() < 8"] == (True, "")
    else:  # a user without namespaces keeps its uid, so no RLIMIT_NPROC, and the report says so
        assert tight.protections()["rlimits"]["processes"] == "not enforced"


def test_wall_clock_limit(tight: Sandbox) -> None:
    found = hidden(tight, "import time\ntime.sleep(60)\n", {"1": 1})
    assert found["1"] == (False, "no evidence: timed out after 2 s")


def test_cpu_limit(tmp_path: Path) -> None:
    # a generous wall clock, so that a busy machine cannot turn this into a timeout
    with open_sandbox(SandboxConfig(timeout_s=30, cpu_s=1), tmp_path) as opened:
        found = hidden(opened, "def spin():\n    while True: pass\n", {"spin()": 0})
    assert found["spin()"] == (False, "no evidence: CPU time limit of 1 s exceeded")


def test_a_crash_is_reported_as_such(sandbox: Sandbox) -> None:
    code = "import faulthandler\ndef crash():\n    faulthandler._read_null()\n"  # a real fault
    found = hidden(sandbox, code, {"crash()": ""})
    assert found["crash()"][1].startswith("no evidence: crashed with SIGSEGV")


@pytest.mark.parametrize("then", ["return 'spawned'", "time.sleep(60)"])
def test_no_process_outlives_its_check(sandbox: Sandbox, tight: Sandbox, then: str) -> None:
    code = (
        "import os, subprocess, time\n"
        "def spawn():\n"
        "    if os.fork() == 0:\n"  # double fork: the sleeper is orphaned, in its own session
        f"        subprocess.Popen(['sleep', '{MARKER}'], start_new_session=True)\n"
        "        os._exit(0)\n"
        "    os.wait()\n"
        "    time.sleep(0.2)\n"
        "    if os.path.exists('/proc/self'):\n"  # a non-root user's job has no /proc
        f"        running = [p for p in os.listdir('/proc') if p.isdigit() and b'{MARKER}' in\n"
        "                   open(f'/proc/{p}/cmdline', 'rb').read()]\n"
        "        assert running, 'the sleeper did not start'\n"
        f"    {then}\n"
    )
    found = hidden(tight if "sleep" in then else sandbox, code, {"spawn()": "spawned"})
    if "sleep" in then:
        assert found["spawn()"] == (False, "no evidence: timed out after 2 s")
    else:
        assert found["spawn()"] == (True, "")
    assert processes_tagged(MARKER) == []


def test_output_is_captured_up_to_the_cap(tight: Sandbox) -> None:
    job = Job(id=10**6, code="import sys\nprint('x' * 1_000_000)\nsys.stderr.write('e' * 9000)")
    outcome = tight._submit(job)
    assert outcome.stdout == "x" * 4096 and outcome.stdout_bytes == 1_000_001  # with the "\n"
    assert outcome.stderr == "e" * 4096 and outcome.stderr_bytes == 9000


def test_many_threads_share_one_sandbox(sandbox: Sandbox) -> None:
    def one(n: int) -> dict[str, tuple[bool | None, str]]:
        return hidden(sandbox, f"def f():\n    return {n} if {n} % 5 else -1\n", {"f()": n})

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(one, range(24)))
    for n, found in enumerate(results):
        assert found["f()"] == ((True, "") if n % 5 else (False, f"expected {n}, got -1"))


def test_closing_stops_the_zygote_and_removes_its_files(tmp_path: Path) -> None:
    with open_sandbox(SandboxConfig(), tmp_path) as opened:
        pid, folder = opened.hello.pid, opened.dir
        assert Path(f"/proc/{pid}").exists() and folder.is_dir()
    assert not Path(f"/proc/{pid}").exists() and not folder.exists()


def processes_of_uids(uids: range) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        status = _status(int(entry)) if entry.isdigit() else ""
        uid = next((line.split()[1] for line in status.splitlines() if line.startswith("Uid")), "")
        if uid.isdigit() and int(uid) in uids:
            found.append(int(entry))
    return found


def wait_for_death(pid: int) -> None:
    for _ in range(200):
        if not Path(f"/proc/{pid}").exists() or "State:\tZ" in _status(pid):
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} is still alive")


def _status(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return ""


def test_a_dead_zygote_fails_its_running_jobs_and_the_next_job_starts_a_new_one(
    tmp_path: Path,
) -> None:
    slow = Expect(test_code="def test_slow():\n    import time\n    time.sleep(30)\n")
    with open_sandbox(SandboxConfig(timeout_s=20, workers=2), tmp_path) as opened:
        first = opened.hello.pid
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(
                opened.run_code_checks, "x = 1", Case(id="s", task="t", expect=slow)
            )
            time.sleep(0.5)  # the job is running in the zygote's child
            os.kill(first, signal.SIGKILL)
            with pytest.raises(CheckInfraError, match="the sandbox process ended"):
                running.result(timeout=10)
        wait_for_death(first)
        if opened.hello.mode.uid_drop:  # its jobs died with it (they run as the block's uids)
            block = range(opened.hello.mode.first_uid, opened.hello.mode.first_uid + 2)
            for _ in range(200):
                if not processes_of_uids(block):
                    break
                time.sleep(0.01)
            assert processes_of_uids(block) == []
        all_pass(hidden(opened, "def f():\n    return 7\n", {"f()": 7}))
        assert opened.hello.pid != first and opened.restarts == 1
        assert opened.protections()["restarts"] == 1  # the report says so
        for _ in range(MAX_RESTARTS - 1):
            dying = opened.hello.pid
            os.kill(dying, signal.SIGKILL)
            wait_for_death(dying)
            all_pass(hidden(opened, "x = 2", {"x": 2}))
        os.kill(opened.hello.pid, signal.SIGKILL)
        wait_for_death(opened.hello.pid)
        with pytest.raises(CheckInfraError, match=f"not restarted: {MAX_RESTARTS} restarts"):
            hidden(opened, "x = 3", {"x": 3})


def test_folders_of_killed_runs_are_removed_by_the_next_run(tmp_path: Path) -> None:
    script = (
        "import os, sys, pathlib\n"
        "from gate.inputs.config import SandboxConfig\n"
        "from gate.sandbox import open_sandbox\n"
        "with open_sandbox(SandboxConfig(), pathlib.Path(sys.argv[1])) as s:\n"
        "    print(s.dir, flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=REPO
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = Path(killed.stdout.strip())
    assert left.is_dir() and (left / OWNER_FILE).is_file()  # SIGKILL: no clean-up ran
    unowned = Path(tempfile.mkdtemp(prefix=DIR_PREFIX, dir=left.parent))  # another run starting
    with open_sandbox(SandboxConfig(), tmp_path) as opened:
        assert opened.dir.is_dir() and (opened.dir / OWNER_FILE).is_file()
        assert not left.exists()
        assert unowned.is_dir()  # no owner yet and new: perhaps a run that is just starting
        assert sweep_stale(left.parent) == []  # a live run's folder stays
        assert opened.dir.is_dir()
    unowned.rmdir()


def test_a_failing_prelude_is_an_infrastructure_error(tmp_path: Path) -> None:
    config = SandboxConfig(prelude="import not_installed")
    with (
        open_sandbox(config, tmp_path) as opened,
        pytest.raises(CheckInfraError, match=r"sandbox\.prelude failed: ModuleNotFoundError"),
    ):
        hidden(opened, "x = 1", {"x": 1})


def talk_to_zygote(
    command: list[str], settings: ZygoteSetup, jobs: list[Job], **popen: Any
) -> tuple[Hello, list[Outcome]]:
    """Start a zygote with `command`, run `jobs` one after the other, stop it."""
    zygote = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    try:
        zygote.stdin.write(framing.encode(settings.to_dict()))
        zygote.stdin.flush()
        hello = Hello.model_validate(framing.read_stream(zygote.stdout))
        outcomes = []
        for job in jobs:
            zygote.stdin.write(framing.encode(job.model_dump()))
            zygote.stdin.flush()
            outcomes.append(Outcome.model_validate(framing.read_stream(zygote.stdout)))
    finally:
        zygote.kill()
        zygote.wait()
    return hello, outcomes


def readable_by_others(path: Path) -> bool:
    return all(os.stat(p).st_mode & 0o005 == 0o005 for p in [path, *path.parents])


SYSTEM_PYTHON = Path("/usr/bin/python3.11")


@pytest.mark.skipif(
    os.geteuid() != 0 or not SYSTEM_PYTHON.exists() or not readable_by_others(REPO),
    reason="needs root to switch users, /usr/bin/python3.11, and a world-readable checkout",
)
def test_a_user_without_privileges_gets_what_the_kernel_allows_and_says_so() -> None:
    """The zygote as uid 65534 (talking its wire protocol directly): without root it uses a
    user namespace if the kernel allows one, and reports what it could not do."""
    userns = subprocess.run(
        ["unshare", "--user", "--map-root-user", "--net", "--pid", "--fork", "true"],
        user=65534,
        capture_output=True,
    )
    folder = Path(tempfile.mkdtemp(prefix="gate-unprivileged-"))
    os.chown(folder, 65534, 65534)
    settings = ZygoteSetup(timeout_s=5, work_dir=str(folder), workers=1)
    job = Job(id=1, code="import os\nx = 1", calls=["os.getpid()", "os.getcwd()"])
    command = [str(SYSTEM_PYTHON), "-I", "-c", BOOTSTRAP.format(path=str(REPO))]
    try:
        hello, (outcome,) = talk_to_zygote(
            command,
            settings,
            [job],
            user=65534,
            group=65534,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            cwd=folder,
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    mode = hello.mode
    assert not mode.root and not mode.uid_drop
    report = protections.describe(mode, settings)
    assert any("uid not dropped (not root)" in line for line in report["degraded"])
    found = {r[1]: plain.decode(r[4]) for r in outcome.records if r[0] == "call"}
    assert outcome.status == "ok" and outcome.records[-1][0] == "done"
    if userns.returncode == 0:
        assert (
            mode.user_ns and mode.pid_ns and mode.mount_ns and mode.network.startswith("isolated")
        )
        assert found == {0: 1, 1: "/sandbox"}  # the init of its own PID namespace, in its view
    else:
        assert not mode.pid_ns and report["network"].startswith("not isolated")


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv"
)
def test_root_without_namespaces_still_drops_uids_and_sweeps_processes() -> None:
    """Like a container that refuses namespaces (no CAP_SYS_ADMIN): no network or filesystem
    isolation, said so; but per-slot uids, and a `setsid` grandchild is still killed."""
    folder = Path(tempfile.mkdtemp(prefix="gate-nocaps-"))
    folder.chmod(0o755)
    settings = ZygoteSetup(timeout_s=5, work_dir=str(folder), workers=1)
    spawn_sleeper = (
        "import os\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        f"        os.execv('/bin/sleep', ['sleep', '{MARKER}'])\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "import time\n"
        "def running():\n"  # the host's /proc here: wait until the orphan has exec'd
        "    for _ in range(100):\n"
        "        for pid in filter(str.isdigit, os.listdir('/proc')):\n"
        "            try:\n"
        f"                if b'{MARKER}' in open(f'/proc/{{pid}}/cmdline', 'rb').read():\n"
        "                    return True\n"
        "            except OSError:\n"
        "                pass\n"
        "        time.sleep(0.02)\n"
        "    return False\n"
    )
    calls = ["os.getuid() >= 2000000000", "os.getcwd()", "running()"]
    jobs = [Job(id=1, code=spawn_sleeper, calls=calls)]
    command = ["setpriv", "--bounding-set", "-sys_admin", sys.executable, "-I", "-c"]
    try:
        hello, (outcome,) = talk_to_zygote(
            [*command, BOOTSTRAP.format(path=str(REPO))], settings, jobs, cwd=folder
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    mode = hello.mode
    assert mode.root and mode.uid_drop and not mode.pid_ns and not mode.mount_ns
    degraded = " | ".join(protections.describe(mode, settings)["degraded"])
    assert "network not isolated" in degraded and "killed by uid" in degraded
    values = [plain.decode(r[4]) for r in outcome.records if r[0] == "call"]
    assert values == [True, f"{folder}/jobs/0", True]
    assert processes_tagged(MARKER) == []


def test_pythonpath_must_be_a_folder_of_the_checkout(tmp_path: Path) -> None:
    make_checkout(tmp_path)
    for folder in ("missing", "..", "lib/shapes.py"):
        with pytest.raises(InputError, match=r"key `sandbox\.pythonpath`"):
            Sandbox(SandboxConfig(pythonpath=[folder]), tmp_path)
