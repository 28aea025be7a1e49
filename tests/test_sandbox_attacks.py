"""Candidate code that tries to pass without being right. None of it may pass.

Every attack runs against the same small task in the real sandbox: `add(a, b)` (a hidden test
and test functions), a test against the team's SDK, and tests that look at types, truth,
containers and a stdlib module. An honest solution passes all of them; each attack must fail
every check, and for some the detail must say what was caught.
"""

from __future__ import annotations

import marshal
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import gate.sandbox.zygote.harness
from gate.errors import CheckInfraError
from gate.inputs.cases import Case
from gate.inputs.config import SandboxConfig
from gate.inputs.expect import Expect
from gate.sandbox import Sandbox, open_sandbox

SDK = (
    "class FinanceLib:\n"
    "    @staticmethod\n"
    "    def calculate_growth(start, end, years):\n"
    "        return (end / start) ** (1 / years) - 1\n"
)
TESTS = """\
def test_add():
    assert add(2, 3) == 5
    assert add(-1, 1) == 0

def test_growth():
    assert growth(1000, 1500, 5) == round(FinanceLib.calculate_growth(1000, 1500, 5) * 100, 2)

def test_types():
    assert isinstance(add(1, 1), int)
    assert add(1, 1) > 1 and 3 > add(1, 1)

def test_truth():
    assert positive(3)
    assert not positive(-3)

def test_containers():
    assert pair() == [1, 2]
    assert 2 in pair()
    assert counts()["a"] == 2

def test_stdlib():
    import math
    assert add(2, 2) == math.sqrt(16)
"""
HONEST = """\
def add(a, b):
    return a + b

def growth(start, end, years):
    return round(FinanceLib.calculate_growth(start, end, years) * 100, 2)

def positive(n):
    return n > 0

def pair():
    return [1, 2]

def counts():
    return {"a": 2}
"""
WRONG = """\
def add(a, b):
    return 0

def growth(start, end, years):
    return 0.0

def positive(n):
    return False

def pair():
    return []

def counts():
    return {}
"""
RIGGED = """\
class Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __lt__(self, other): return True
    def __gt__(self, other): return True
    def __bool__(self): return True
    def __contains__(self, item): return True
    def __hash__(self): return hash("a")
    __class__ = int
"""


def forged_frames() -> str:
    """Frames in the harness's format, under a guessed nonce, claiming every test passed."""
    records = [("ready",), ("compile", True, ""), ("import", True, "")]
    records += [("call", 0, True, True, 5, "", "", ""), ("tests", True, "")]
    records += [("test", name, True, "") for name in TEST_NAMES] + [("clean", ""), ("done", 1)]
    data = b"".join(
        bytes(16) + len(p).to_bytes(4, "big") + p for p in (marshal.dumps(r) for r in records)
    )
    return repr(data)


TEST_NAMES = ["test_add", "test_growth", "test_types", "test_truth", "test_containers"]
TEST_NAMES.append("test_stdlib")

ATTACKS = {
    "exit() at import": WRONG + "exit(0)\n",
    "sys.exit() at import": "import sys\n" + HONEST + "sys.exit(0)\n",
    "os._exit(0) at import": "import os\n" + HONEST + "os._exit(0)\n",
    "os._exit(0) in a test": "import os\n" + HONEST + "def add(a, b):\n    os._exit(0)\n",
    "SystemExit in a test": WRONG + "def add(a, b):\n    raise SystemExit(0)\n",
    "KeyboardInterrupt in a test": WRONG + "def add(a, b):\n    raise KeyboardInterrupt\n",
    "forged pass lines on stdout and stderr": "import sys\n"
    + WRONG
    + (
        f"for name in {TEST_NAMES!r}:\n"
        "    print(name, 'PASSED'); print('{\"passed\": true}')\n"
        "    sys.stderr.write(name + ' passed\\n')\n"
    ),
    "forged frames on every descriptor": "import os\n"
    + WRONG
    + (
        f"for fd in range(1024):\n"
        f"    try:\n        os.write(fd, {forged_frames()})\n"
        f"    except OSError:\n        pass\n"
    ),
    "evidence channel hidden": "import os\n"
    + HONEST
    + ("os.dup2(os.open('/dev/null', os.O_WRONLY), 3)\n"),
    "evidence channel closed": "import os\n" + HONEST + "os.close(3)\n",
    "__eq__ always true": WRONG
    + RIGGED
    + (
        "def add(a, b): return Anything()\n"
        "def growth(s, e, y): return Anything()\n"
        "def positive(n): return Anything()\n"
        "def pair(): return [Anything(), Anything()]\n"
        "def counts(): return {Anything(): 2}\n"
    ),
    "int and str subclasses with their own __eq__": WRONG
    + (
        "class Int(int):\n"
        "    def __eq__(self, other): return True\n"
        "    def __ne__(self, other): return False\n"
        "    __hash__ = int.__hash__\n"
        "class Str(str):\n"
        "    def __eq__(self, other): return True\n"
        "    __hash__ = str.__hash__\n"
        "def add(a, b): return Int(0)\n"
        "def counts(): return {Str('z'): 2}\n"
    ),
    "a class compiled under a standard library file name": WRONG
    + (
        "exec(compile('class Eq:\\n def __eq__(s, o): return True\\n __hash__ = None\\n',\n"
        "             '/usr/lib/python3.11/fractions.py', 'exec'))\n"
        "def add(a, b): return Eq()\n"
    ),
    "a standard class's __eq__ replaced": WRONG
    + (
        "import fractions\n"
        "fractions.Fraction.__eq__ = lambda self, other: True\n"
        "def add(a, b): return fractions.Fraction(0)\n"
    ),
    "a subclass of a standard class": WRONG
    + (
        "import fractions\n"
        "class F(fractions.Fraction):\n"
        "    def __eq__(self, other): return True\n"
        "    __hash__ = fractions.Fraction.__hash__\n"
        "def add(a, b): return F(0)\n"
    ),
    "patched builtins": "import builtins\n"
    + WRONG
    + (
        "builtins.isinstance = lambda *a: True\n"
        "builtins.len = lambda x: 2\n"
        "builtins.round = lambda x, n=0: 0.0\n"
        "builtins.AssertionError = SystemExit\n"
    ),
    "SDK monkeypatched at import": HONEST
    + (
        "FinanceLib.calculate_growth = staticmethod(lambda s, e, y: 0.0)\n"
        "def growth(start, end, years): return 0.0\n"
    ),
    "SDK monkeypatched during the call": HONEST
    + (
        "def growth(start, end, years):\n"
        "    FinanceLib.calculate_growth = staticmethod(lambda s, e, y: 0.0)\n"
        "    return 0.0\n"
    ),
    "fake module in sys.modules": "import sys, types\n"
    + HONEST
    + (
        "fake = types.ModuleType('math')\n"
        "fake.sqrt = lambda x: 0\n"
        "sys.modules['math'] = fake\n"
        "def add(a, b): return 0\n"
    ),
    "harness modules patched": WRONG
    + RIGGED
    + (
        "import gate.sandbox.zygote.harness as harness\n"
        "import gate.sandbox.zygote.safe_compare as strict\n"
        "strict.compare = lambda *a: True\n"
        "strict._untrusted = lambda *a: None\n"
        "strict.truth = lambda value: True\n"
        "harness._tampered = lambda: ''\n"
        "def add(a, b): return Anything()\n"
    ),
    "trace function": "import sys\n"
    + WRONG
    + ("try:\n    sys.settrace(lambda *a: None)\nexcept Exception:\n    pass\n"),
    "thread writing frames after the tests": "import os, threading, time\n"
    + WRONG
    + (
        "def forge():\n"
        "    while True:\n"
        f"        os.write(3, {forged_frames()})\n"
        "        time.sleep(0.01)\n"
        "threading.Thread(target=forge, daemon=True).start()\n"
    ),
    "__del__ writing to the evidence channel": "import os\n"
    + HONEST
    + (
        "class Junk:\n"
        "    def __del__(self):\n"
        "        os.write(3, b'junk')\n"
        "keep = [Junk()]\n"
        "def add(a, b):\n"
        "    keep.clear()\n"
        "    return a + b\n"
    ),
    # A copy of the harness would still run the real tests (the nonce is out of reach).
    "fork: the harness exits, a copy goes on": "import os\n"
    + WRONG
    + ("if os.fork() != 0:\n    os._exit(0)\n"),
    "kill the parent, the group and everyone": "import os, signal\n"
    + WRONG
    + (
        "for target in (os.getppid(), 0, -1, 1):\n"
        "    try:\n        os.kill(target, signal.SIGKILL)\n"
        "    except OSError:\n        pass\n"
    ),
    "delete the harness files": "import os\n"
    + WRONG
    + (
        f"for path in ({gate.sandbox.zygote.harness.__file__!r}, "
        f"{str(Path(gate.sandbox.zygote.harness.__file__).parent)!r}):\n"
        "    for remove in (os.remove, os.rmdir):\n"
        "        try:\n            remove(path)\n"
        "        except OSError:\n            pass\n"
    ),
    "memory bomb": "chunks = []\nwhile True:\n    chunks.append(bytearray(10**7))\n",
    "huge output": "import sys\n"
    + WRONG
    + ("for _ in range(50):\n    sys.stdout.write('test_add PASSED\\n' * 60000)\n"),
}
SLOW_ATTACKS = {
    "infinite loop": HONEST + "while True:\n    pass\n",
    "fork bomb": "import os\n"
    + HONEST
    + ("while True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"),
}


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    root = tmp_path_factory.mktemp("checkout")
    (root / "lib").mkdir()
    (root / "lib" / "finlib.py").write_text(SDK)
    config = SandboxConfig(
        timeout_s=2,
        memory_mb=128,
        max_processes=12,
        pythonpath=["lib"],
        prelude="from finlib import FinanceLib",
    )
    with open_sandbox(config, root) as opened:
        yield opened


def verdicts(sandbox: Sandbox, code: str) -> dict[str, tuple[bool | None, str]]:
    expect = Expect(
        must_compile=True, hidden_tests=[{"call": "add(2, 3)", "eq": 5}], test_code=TESTS
    )
    results = sandbox.run_code_checks(code, Case(id="c", task="t", expect=expect))
    return {r.name: (r.passed, r.detail) for r in results}


def passed(found: dict[str, tuple[bool | None, str]]) -> list[str]:
    return [name for name, (ok, _) in found.items() if ok and name != "compile"]


def test_an_honest_solution_passes_everything(sandbox: Sandbox) -> None:
    found = verdicts(sandbox, HONEST)
    assert {name: detail for name, (ok, detail) in found.items() if not ok} == {}
    assert len(found) == 2 + len(TEST_NAMES)


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_the_attack_does_not_pass(sandbox: Sandbox, attack: str) -> None:
    found = verdicts(sandbox, ATTACKS[attack])
    assert passed(found) == [], f"{attack}: {found}"
    assert verdicts(sandbox, HONEST)["test:test_add"] == (True, "")  # the sandbox is still fine


def test_slow_attacks_do_not_pass(sandbox: Sandbox) -> None:
    with ThreadPoolExecutor(len(SLOW_ATTACKS)) as pool:
        runs = pool.map(lambda code: verdicts(sandbox, code), SLOW_ATTACKS.values())
        results = dict(zip(SLOW_ATTACKS, runs, strict=True))
    for attack, found in results.items():
        assert passed(found) == [], f"{attack}: {found}"
    assert results["infinite loop"]["test:test_add"][1].startswith("no evidence: timed out")


def detail(sandbox: Sandbox, attack: str, check: str) -> str:
    return verdicts(sandbox, ATTACKS[attack])[check][1]


def test_what_was_caught_is_named(sandbox: Sandbox) -> None:
    assert detail(sandbox, "forged frames on every descriptor", "test:test_add").startswith(
        "no evidence: the evidence channel carried data the harness did not write; stderr: "
    )
    assert detail(sandbox, "SDK monkeypatched at import", "test:test_add") == (
        "passed, but the code modified finlib.FinanceLib.calculate_growth, which the tests rely on"
    )
    assert detail(sandbox, "fake module in sys.modules", "test:test_growth") == (
        "passed, but the code modified sys.modules['math'], which the tests rely on"
    )
    assert detail(sandbox, "__eq__ always true", "test:test_add") == (
        "TypeError: sandbox refused == on a Anything: Anything.__eq__ is defined by the "
        "candidate's code (test line 2)"
    )
    assert "Fraction.__eq__ was replaced by the candidate's code" in detail(
        sandbox, "a standard class's __eq__ replaced", "test:test_add"
    )
    assert detail(sandbox, "os._exit(0) at import", "test:test_add") == (
        "no evidence: the process exited before the harness finished (exit(), os._exit() or a kill)"
    )
    line = len(WRONG.splitlines()) + 1
    assert detail(sandbox, "exit() at import", "hidden:add(2, 3)") == (
        f"the code failed at import: SystemExit: the code called exit(0) (candidate line {line})"
    )


def test_the_harness_files_survive_and_the_gate_process_lives(sandbox: Sandbox) -> None:
    verdicts(sandbox, ATTACKS["delete the harness files"])
    verdicts(sandbox, ATTACKS["kill the parent, the group and everyone"])
    assert Path(gate.sandbox.zygote.harness.__file__).is_file()
    os.kill(sandbox.hello.pid, 0)  # the zygote is alive (raises if not)


PROBES = """\
import sys, gc, inspect, signal, _imp, importlib.machinery, importlib.util

def attempt(action):
    try:
        action()
    except Exception:
        return "blocked"
    return "allowed"

def raise_and_read_frame():
    try:
        1 / 0
    except ZeroDivisionError as error:
        return error.__traceback__.tb_frame

def swap_code():
    function = lambda: 1
    function.__code__ = (lambda: 2).__code__

def hook_events():
    seen = []
    sys.addaudithook(lambda event, args: seen.append(event))  # refused silently by Python
    open("/dev/null").close()
    if not seen:
        raise PermissionError("the hook was not added")

spec = importlib.machinery.ModuleSpec("_signal", importlib.machinery.BuiltinImporter)

def import_written(name, compiled):
    import marshal, os
    source = "def leak(): return 42\\n"
    if compiled:  # a hand-written .pyc: bytecode CPython would not verify
        header = importlib.util.MAGIC_NUMBER + bytes(12)
        data = header + marshal.dumps(compile(source, name, "exec"))
        with open(f"/sandbox/{name}.pyc", "wb") as handle:
            handle.write(data)
    else:
        with open(f"/sandbox/{name}.py", "w") as handle:
            handle.write(source)
    sys.path.insert(0, "/sandbox")
    return __import__(name).leak()
"""
BLOCKED = [
    "sys._getframe(1)",
    "inspect.currentframe()",
    "raise_and_read_frame()",
    "(x for x in [1]).gi_frame",
    "sys._current_frames()",
    "gc.get_objects()",
    "gc.get_referrers(attempt)",
    "gc.set_debug(gc.DEBUG_SAVEALL)",
    "__import__('ctypes').string_at(id(1), 8)",
    "sys.settrace(lambda *a: None)",
    "sys.setprofile(lambda *a: None)",
    "hook_events()",
    "signal.signal(signal.SIGALRM, lambda *a: None)",
    "_imp.create_builtin(spec)",
    "swap_code()",
    "__import__('_testcapi')",
    "open('/proc/self/mem', 'rb').read(1)",
    "open('/proc/self/environ', 'rb').read()",
    "(lambda: 0).__code__.replace(co_consts=(1,))",
    "__import__('marshal').loads(__import__('marshal').dumps((lambda: 0).__code__))",
    "import_written('handmade', compiled=True)",
    "__import__('cffi')",
]


def test_introspection_and_hooks_are_blocked(sandbox: Sandbox) -> None:
    calls = [{"call": f"attempt(lambda: {probe})", "eq": "blocked"} for probe in BLOCKED]
    calls.append({"call": "attempt(lambda: 1 + 1)", "eq": "allowed"})
    calls.append({"call": "import_written('plain', compiled=False)", "eq": 42})
    expect = Expect(hidden_tests=calls)
    results = sandbox.run_code_checks(PROBES, Case(id="c", task="t", expect=expect))
    assert {r.name: r.detail for r in results if not r.passed} == {}


def test_libraries_that_peek_at_frames_still_work(sandbox: Sandbox) -> None:
    code = (
        "import collections, dataclasses, enum, logging, typing\n"
        "T = typing.TypeVar('T')\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
        "Color = enum.Enum('Color', 'RED GREEN')\n"
        "class Pair(typing.NamedTuple):\n    a: int\n    b: int\n"
        "@dataclasses.dataclass\nclass Box:\n    size: int\n"
        "logging.getLogger('candidate').warning('hello from the candidate')\n"
        "def add(a, b):\n    return Point(a, b).x + Pair(0, b).b + Box(0).size\n"
    )
    found = verdicts(sandbox, code)
    assert found["hidden:add(2, 3)"] == (True, "") and found["test:test_add"] == (True, "")


# --- the side's own code: its SDK and prelude are the checkout's (the pull request's) -------

SDK_TESTS = """\
def test_area():
    assert area(2, 2) == 5

def test_close():
    assert abs(area(2, 2) - 5) < 0.01
"""
WRONG_AREA = "def area(w, h):\n    return w * h\n"  # 4, never 5
FORGE_IN_ZYGOTE = """\
import gate.sandbox.zygote.job as job
real = job.parse_frames

def forged(data, nonce):
    records, problem = real(data, nonce)
    passed = {"test": lambda r: ("test", r[1], True, ""), "tests": lambda r: ("tests", True, "")}
    return [passed.get(r[0], lambda r: r)(r) for r in records], problem

job.parse_frames = forged
"""
PATCH_BUILTINS = """\
import builtins

class Small(float):
    def __lt__(self, other):
        return True

builtins.abs = lambda value: Small(0)
"""
# Reads the frames of whoever imports it: the harness's, if it ran before the audit hook.
SPY = """\
import sys
try:
    sys._getframe(1)
    FRAMES = True
except ValueError:
    FRAMES = False
"""


def sdk_verdicts(
    tmp_path: Path, modules: dict[str, str], answer: str, tests: str, prelude: str = ""
) -> dict[str, tuple[bool | None, str]]:
    root = tmp_path / "checkout"
    (root / "sdk").mkdir(parents=True)
    for name, source in modules.items():
        (root / "sdk" / name).write_text(source)
    config = SandboxConfig(timeout_s=3, pythonpath=["sdk"], prelude=prelude)
    with open_sandbox(config, root) as opened:
        results = opened.run_code_checks(
            answer, Case(id="c", task="t", expect=Expect(test_code=tests))
        )
    return {r.name: (r.passed, r.detail) for r in results}


def test_an_sdk_imported_by_the_prelude_cannot_rewrite_how_the_evidence_is_read(
    tmp_path: Path,
) -> None:
    found = sdk_verdicts(
        tmp_path, {"finlib.py": FORGE_IN_ZYGOTE}, WRONG_AREA, SDK_TESTS, "import finlib"
    )
    assert passed(found) == [], found
    assert found["test:test_area"][1].startswith("AssertionError: assert area(2, 2) == 5")


def test_builtins_the_prelude_patches_fail_the_passes_they_would_rig(tmp_path: Path) -> None:
    modules = {"finlib.py": PATCH_BUILTINS}
    wrong = sdk_verdicts(tmp_path / "wrong", modules, WRONG_AREA, SDK_TESTS, "import finlib")
    assert passed(wrong) == [], wrong
    right = sdk_verdicts(
        tmp_path / "right", modules, "def area(w, h):\n    return 5\n", SDK_TESTS, "import finlib"
    )
    assert right["test:test_close"] == (
        False,
        "passed, but the code modified builtins.abs, which the tests rely on",
    )


def test_a_folder_of_the_sdk_cannot_replace_a_standard_module(tmp_path: Path) -> None:
    planted = tmp_path / "planted"
    shadow = f"open({str(planted)!r}, 'w').write('ran')\ndef mean(values):\n    return 5\n"
    tests = "import statistics\n\ndef test_mean():\n    assert statistics.mean([1, 2, 3]) == 2\n"
    found = sdk_verdicts(
        tmp_path, {"statistics.py": shadow, "finlib.py": "X = 1\n"}, "", tests, "import finlib"
    )
    assert found["test:test_mean"] == (True, "")
    assert not planted.exists()  # the zygote imported the standard library's own


def test_the_sdk_runs_under_the_audit_hook_whoever_imports_it(tmp_path: Path) -> None:
    tests = "import spy\n\ndef test_no_frames():\n    assert spy.FRAMES is False\n"
    by_tests = sdk_verdicts(tmp_path / "tests", {"spy.py": SPY}, "", tests)
    by_prelude = sdk_verdicts(tmp_path / "prelude", {"spy.py": SPY}, "", tests, "import spy")
    assert by_tests["test:test_no_frames"] == (True, "")
    assert by_prelude["test:test_no_frames"] == (True, "")


def test_a_failing_prelude_of_the_sdk_is_an_error_naming_its_line(tmp_path: Path) -> None:
    with pytest.raises(CheckInfraError, match=r"sandbox\.prelude failed: ZeroDivisionError"):
        sdk_verdicts(tmp_path, {"finlib.py": "X = 1 / 0\n"}, "", SDK_TESTS, "import finlib")


# Without a prelude the candidate's module used to get the harness's private builtins as
# `__builtins__`: replacing `id` there made every comparison's check think it saw an `int`.
PRIVATE_BUILTINS = (
    "class Anything:\n"
    "    def __eq__(self, other):\n        return True\n"
    "    __hash__ = None\n"
    "int_id = id(int)\n"
    "try:\n    __builtins__['id'] = lambda value: int_id\n"
    "except TypeError:\n    pass\n"
    "def area(w, h):\n    return Anything()\n"
)


def test_candidate_code_never_gets_the_harness_builtins(tmp_path: Path) -> None:
    with open_sandbox(SandboxConfig(timeout_s=3), tmp_path) as opened:
        results = opened.run_code_checks(
            PRIVATE_BUILTINS, Case(id="c", task="t", expect=Expect(test_code=SDK_TESTS))
        )
        found = {r.name: (r.passed, r.detail) for r in results}
        honest = opened.run_code_checks(
            "import builtins\nassert __builtins__ is builtins\ndef area(w, h):\n    return 5\n",
            Case(id="c", task="t", expect=Expect(test_code=SDK_TESTS)),
        )
    assert passed(found) == [], found
    assert [r.passed for r in honest] == [True, True], honest
