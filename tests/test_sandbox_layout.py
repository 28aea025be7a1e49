"""The sandbox's layout holds: the zygote side imports only the standard library, the inputs
never import the sandbox, and the package docstring maps every file. Each check runs in a fresh
interpreter, so what other tests imported cannot hide or fake an import."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

from helpers.cli import REPO

import gate.sandbox

SANDBOX = REPO / "gate" / "sandbox"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
# The zygote side: every module of `zygote/` and `protocol/` but the pydantic shapes.
GATE_ONLY = {"gate.sandbox.protocol.messages"}
ZYGOTE_SIDE = ("gate.sandbox.zygote", "gate.sandbox.protocol")


def modules_under(folder: Path) -> list[str]:
    package = ".".join(folder.relative_to(REPO).parts)
    return [package] + [f"{package}.{path.stem}" for path in sorted(folder.glob("[!_]*.py"))]


def loaded_after(imports: list[str]) -> dict[str, str | None]:
    """Every module in a fresh, isolated interpreter after importing `imports`, with its file."""
    script = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(REPO)!r})\n"
        f"for name in {imports!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps({n: getattr(m, '__file__', None) for n, m in sys.modules.items()}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True
    )
    loaded: dict[str, str | None] = json.loads(done.stdout)
    return loaded


def outside_stdlib(loaded: dict[str, str | None]) -> list[str]:
    """Third-party and project modules, apart from what the interpreter's start loaded (the
    venv's `.pth` hooks, `__main__`): those load in every process, the zygote's too."""
    startup = loaded_after([])
    return sorted(
        name
        for name, file in loaded.items()
        if name.split(".")[0] not in sys.stdlib_module_names
        and not (file and Path(file).is_relative_to(STDLIB))  # such as `_sysconfigdata_*`
        and name not in startup
    )


def test_the_zygote_side_imports_only_the_standard_library() -> None:
    zygote_side = [
        name
        for folder in ("zygote", "protocol")
        for name in modules_under(SANDBOX / folder)
        if name not in GATE_ONLY
    ]
    assert "gate.sandbox.zygote.main" in zygote_side  # the entry point of the zygote process
    loaded = loaded_after(zygote_side)
    assert set(zygote_side) <= set(loaded)
    foreign = [
        name
        for name in outside_stdlib(loaded)
        if name not in ("gate", "gate.sandbox")
        and not (name.startswith(ZYGOTE_SIDE) and name not in GATE_ONLY)
    ]
    assert foreign == []


def test_the_gate_side_does_import_pydantic() -> None:
    """The check above can see a third-party import: the gate's side makes one."""
    loaded = loaded_after(["gate.sandbox.protocol.messages"])
    assert "pydantic" in outside_stdlib(loaded)


def test_the_inputs_never_import_the_sandbox() -> None:
    inputs = modules_under(REPO / "gate" / "inputs")
    loaded = loaded_after(inputs)
    assert set(inputs) <= set(loaded)
    assert [name for name in loaded if name.startswith("gate.sandbox")] == []


def test_the_package_docstring_maps_every_file() -> None:
    doc = gate.sandbox.__doc__ or ""
    files = sorted(
        path.relative_to(SANDBOX).as_posix()
        for path in SANDBOX.rglob("[!_]*.py")
        if "__pycache__" not in path.parts
    )
    unmapped = [name for name in files if f" {Path(name).name} " not in doc]
    assert files and unmapped == []
    folders = {Path(name).parent.as_posix() for name in files}
    assert [folder for folder in sorted(folders) if f" {folder}/ " not in doc] == []
