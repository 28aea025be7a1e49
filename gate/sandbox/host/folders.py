"""The sandbox's folders on disk: a private copy of `sandbox.pythonpath` (and of the modules of
the team's own checks), and owner files that let a later run remove the folders of a run that
was killed before it could clean up."""

from __future__ import annotations

import compileall
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from gate.errors import InputError

DIR_PREFIX = "gate-sandbox-"
OWNER_FILE = "owner.json"
STALE_UNOWNED_S = 600.0  # a folder without an owner file (being created, or very old)
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".git", "node_modules", ".venv")


def copy_pythonpath(folders: list[str], root: Path, into: Path) -> tuple[list[str], dict[str, str]]:
    """Copy each folder (relative to the checkout) into `into`; readable, owned by us."""
    paths: list[str] = []
    labels: dict[str, str] = {}
    base = root.resolve()
    for index, folder in enumerate(folders):
        source = (base / folder).resolve()
        if not source.is_relative_to(base) or not source.is_dir():
            raise InputError(
                f"{folder!r} is not a folder inside the checkout {base}", key="sandbox.pythonpath"
            )
        target = into / str(index)
        shutil.copytree(source, target, symlinks=True, ignore=COPY_IGNORE)
        _make_readable(target)
        compileall.compile_dir(str(target), quiet=2, workers=1)
        paths.append(str(target))
        labels[str(target)] = folder.rstrip("/")
    return paths, labels


def copy_check_sources(
    modules: list[str], root: Path, into: Path, sources: Mapping[str, str] | None = None
) -> tuple[str, str]:
    """The checkout's sources of `expect.python` checks, copied into `into`: each module's
    top-level package folder (or its `.py` file) and the checkout's top-level `.py` files, so
    a check can import its siblings; `sources` are modules of their own (a promptfoo
    assertion's inline code: name -> source). Returns the copy's import path and its label."""
    base = root.resolve()
    into.mkdir(mode=0o755)
    for name, text in (sources or {}).items():
        (into / f"{name}.py").write_text(text, encoding="utf-8")
    modules = [m for m in modules if m not in (sources or {})]
    for top in sorted({module.split(".")[0] for module in modules}):
        folder = base / top
        if folder.is_dir() and folder.resolve().is_relative_to(base):
            shutil.copytree(folder, into / top, symlinks=True, ignore=COPY_IGNORE)
    for source in base.glob("*.py"):
        if source.is_file() and source.resolve().is_relative_to(base):
            shutil.copy2(source, into / source.name)
    _make_readable(into)
    compileall.compile_dir(str(into), quiet=2, workers=1)
    return str(into), "."


def _make_readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        if path.is_symlink():
            continue
        path.chmod(0o755 if path.is_dir() else 0o644)


def private_base() -> str | None:
    """Root keeps the sandbox's folders in /run, so that /tmp stays free to become the job's
    own writable folder inside the view (see `gate.sandbox.zygote.fsview`)."""
    if os.geteuid() == 0 and os.path.isdir("/run") and os.access("/run", os.W_OK):
        return "/run"
    return None


def _process_identity(pid: int) -> tuple[int, int] | None:
    """(start time in clock ticks since boot, PID namespace inode) of a live process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        namespace = os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces and brackets
    return int(fields[19]), namespace


def write_owner(folder: Path) -> None:
    """Record which process owns a sandbox folder, so that a later run can remove it if that
    process was killed before it could clean up (SIGKILL, an OOM kill)."""
    identity = _process_identity(os.getpid())
    if identity is not None:
        started, namespace = identity
        owner = {"pid": os.getpid(), "started": started, "pid_namespace": namespace}
        (folder / OWNER_FILE).write_text(json.dumps(owner))


def sweep_stale(base: Path) -> list[Path]:
    """Remove the sandbox folders of runs that died without cleaning up; returns them.

    Only folders whose owner ran in our PID namespace and is gone (or whose pid now belongs
    to another process) are removed, and folders without an owner file once they are old."""
    own = _process_identity(os.getpid())
    removed: list[Path] = []
    for folder in base.glob(DIR_PREFIX + "*"):
        if folder.is_symlink() or not folder.is_dir() or not _is_stale(folder, own):
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists():
            removed.append(folder)
    return removed


def _is_stale(folder: Path, own: tuple[int, int] | None) -> bool:
    try:
        owner = json.loads((folder / OWNER_FILE).read_text())
        pid, started, namespace = int(owner["pid"]), int(owner["started"]), owner["pid_namespace"]
    except FileNotFoundError:
        try:
            return time.time() - folder.stat().st_mtime > STALE_UNOWNED_S
        except OSError:
            return False
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if own is None or namespace != own[1]:
        return False  # another PID namespace (a container sharing the folder): not ours to judge
    return _process_identity(pid) != (started, namespace)
