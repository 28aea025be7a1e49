"""Linux system calls that Python 3.11's `os` module does not expose (via ctypes).

Used only by the sandbox's own processes (the zygote, and a job's child before it drops privileges);
candidate code cannot call ctypes because the audit hook blocks every `ctypes.*` event.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

MNT_DETACH = 2
# pivot_root has no libc wrapper; its number differs per architecture.
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}

# Every job's child calls into libc a few times right after its fork, where each page it
# writes is copied first. So: no `use_errno` (its per-call bookkeeping alone wrote dozens of
# pages) and no `argtypes` (converter objects per argument). Arguments are bytes, None or
# small non-negative ints, which ctypes passes as `char *`, NULL and a C int that libffi
# widens to the register (so it reads the same as the `unsigned long` the kernel expects).
# errno is read from libc right after a call fails: it is only used for the message.
_libc = ctypes.CDLL(None)
_errno_location = _libc.__errno_location
_errno_location.restype = ctypes.POINTER(ctypes.c_int)
_unshare = _libc.unshare
_setns = _libc.setns
_mount = _libc.mount
_prctl = _libc.prctl


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = _errno_location()[0]
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _bytes(value: str | None) -> bytes | None:
    return os.fsencode(value) if value is not None else None


def unshare(flags: int) -> None:
    _check(_unshare(flags), "unshare")


def mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    _check(
        _mount(_bytes(source), _bytes(target), _bytes(fstype), flags, _bytes(data)),
        f"mount {target}",
    )


def setns(fd: int, nstype: int) -> None:
    _check(_setns(fd, nstype), "setns")


def umount(target: str, flags: int = 0) -> None:
    _check(_libc.umount2(_bytes(target), flags), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    number = SYS_PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise OSError(
            errno.ENOSYS, f"pivot_root: unknown system call number on {platform.machine()}"
        )
    _check(_libc.syscall(number, _bytes(new_root), _bytes(put_old)), "pivot_root")


def prctl(option: int, value: int) -> None:
    _check(_prctl(option, value, 0, 0, 0), "prctl")
