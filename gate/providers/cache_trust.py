"""Which response-cache entries the gate takes an answer from: only those it wrote itself.

An answer in the cache is taken for a system's, so whoever can write an entry can decide a
verdict. As root, the system under test runs as a uid of its own with no groups
(`gate.systems.worker`): it can write a folder only if it owns it or the folder is writable by
everyone. So the gate reads an entry only through folders it owns that are not writable by
everyone (the cache's folder and each one below it, opened one by one without following a
symlink), and only an entry that is a regular file it owns and nobody else may write. A cache
folder that fails is refused whole (nothing is read from or written to it); an entry or a
subfolder that fails is ignored (a miss, overwritten by the fresh answer). Each is reported
once. The entry's own `key` must match the name it was found under (`ResponseCache.lookup`),
so an entry moved or linked under another name is refused as well. Not as root, the system
runs as the gate's own user and could write the cache like the gate: nothing here tells them
apart (docs/security.md says so).
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Sequence
from pathlib import Path

FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK


class Untrusted(Exception):
    """What the gate did not write, or others could have: the reason, for the note."""


def problem(info: os.stat_result, what: str) -> str | None:
    """Why a file or folder with this status is not the gate's alone; None when it is."""
    if info.st_uid != os.geteuid():
        return f"{what} belongs to uid {info.st_uid}, not the gate's ({os.geteuid()})"
    if info.st_mode & stat.S_IWOTH:
        return f"{what} is writable by everyone (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def make_folders(folder: Path, depth: int) -> None:
    """`folder` and the `depth` folders above it that are missing, made the gate's alone (0700,
    whatever the umask): the folders above them as usual."""
    chain = [folder, *list(folder.parents)[: depth - 1]]
    missing = [path for path in chain if not path.is_dir()]
    if missing:
        missing[-1].parent.mkdir(parents=True, exist_ok=True)
    for path in reversed(missing):
        with contextlib.suppress(FileExistsError):
            os.mkdir(path, 0o700)


def folder_problem(folder: Path) -> str | None:
    """Why the cache's folder cannot hold the gate's answers; None when it can (or does not
    exist yet: the gate makes it)."""
    try:
        info = folder.stat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be read ({exc.strerror})"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    return problem(info, "the folder")


def read_owned(folder: Path, parts: Sequence[str]) -> bytes | None:
    """The bytes of `folder/parts...` when every folder on the way and the file are the
    gate's alone; None when there is no such entry; `Untrusted` when there is one the gate
    must not take."""
    fds: list[int] = []
    try:
        fds.append(os.open(folder, FOLDER_FLAGS & ~os.O_NOFOLLOW))
        _check(fds[-1], "the folder")
        for name in parts[:-1]:
            fds.append(os.open(name, FOLDER_FLAGS, dir_fd=fds[-1]))
            _check(fds[-1], f"the folder {name}")
        fd = os.open(parts[-1], FILE_FLAGS, dir_fd=fds[-1])
        fds.append(fd)
        info = _check(fd, "the entry")
        if not stat.S_ISREG(info.st_mode):
            raise Untrusted("the entry is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symlink where a folder or the entry should be
        raise Untrusted(f"it cannot be opened as the gate's ({exc.strerror})") from None
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _check(fd: int, what: str) -> os.stat_result:
    info = os.fstat(fd)
    reason = problem(info, what)
    if reason is not None:
        raise Untrusted(reason)
    return info
