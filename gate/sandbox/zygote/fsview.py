"""The filesystem a candidate sees: a minimal, read-only view in its own mount namespace.

The zygote builds the view once and makes it its root (`pivot_root`), so the host's other
mounts are gone from its namespace. Visible: /usr, /etc and the top-level library links, the
Python installation, the sandbox's copy of `sandbox.pythonpath`, a few /dev nodes. Each job
then adds, in a mount namespace of its own: a fresh /proc (its own processes only) and a
size-limited tmpfs at /sandbox, owned by the job's uid, its only writable place; it vanishes
with the job. The checkout, home directories, the host's /tmp and other jobs are not there.
"""

from __future__ import annotations

import glob
import os
import sys
import sysconfig
from dataclasses import dataclass, field

from gate.sandbox.zygote import linux
from gate.sandbox.zygote.linux import (
    MS_BIND,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_RDONLY,
    MS_REC,
    MS_REMOUNT,
    mount,
)

WORK = "/sandbox"
TOP_LEVEL = ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEV_NODES = ("null", "zero", "full", "random", "urandom")
# Extension modules that hand out raw memory or interpreter internals: masked by /dev/null.
MASKED_EXTENSIONS = (
    "_testcapi*",
    "_testinternalcapi*",
    "_testbuffer*",
    "_testmultiphase*",
    "_testimportmultiple*",
    "_testsinglephase*",
    "_testclinic*",
    "_xxsubinterpreters*",
    "_xxinterpchannels*",
    "_xxtestfuzz*",
    "_ctypes_test*",
)
RO = MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV


def python_paths() -> list[str]:
    """Folders the interpreter needs: its prefixes and site-packages, never source checkouts."""
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    wanted.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return sorted(p for p in wanted if p and os.path.isdir(p))


@dataclass(frozen=True)
class ViewPlan:
    links: list[tuple[str, str]] = field(default_factory=list)  # (path, target)
    binds: list[str] = field(default_factory=list)  # host folders shown read-only, same path
    masked: list[str] = field(default_factory=list)  # files hidden behind /dev/null
    dev_nodes: list[str] = field(default_factory=list)


def _covered(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def plan_view(extra: list[str]) -> ViewPlan:
    links: list[tuple[str, str]] = []
    binds: list[str] = []
    for name in TOP_LEVEL:
        host = "/" + name
        if os.path.islink(host):
            links.append((host, os.readlink(host)))
        elif os.path.isdir(host):
            binds.append(host)
    for path in [*python_paths(), *extra]:
        real = os.path.realpath(path)
        if os.path.isdir(real) and not _covered(real, binds):
            binds.append(real)
        if real != path and not _covered(path, binds):
            links.append((path, real))
    if not any(_covered(p, ["/tmp"]) for p in binds + [link for link, _ in links]):
        links.append(("/tmp", WORK))  # programs that insist on /tmp write to their own tmpfs
    dynload = {os.path.join(sysconfig.get_path("platstdlib"), "lib-dynload")}
    dynload.update(p for p in sys.path if p.endswith("lib-dynload"))
    masked = sorted(
        {
            os.path.realpath(found)
            for folder in dynload
            for pattern in MASKED_EXTENSIONS
            for found in glob.glob(os.path.join(folder, pattern + ".so"))
        }
    )
    nodes = [n for n in DEV_NODES if os.path.exists("/dev/" + n)]
    return ViewPlan(links=links, binds=binds, masked=masked, dev_nodes=nodes)


def _bind_ro(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, RO)


def _mkdirs(path: str) -> None:
    os.makedirs(path, mode=0o755, exist_ok=True)


def enter_view(plan: ViewPlan, new_root: str) -> None:
    """In the zygote: build the view under `new_root` and make it the namespace's root."""
    linux.unshare(linux.CLONE_NEWNS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", new_root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=755")
    for name in ("proc", WORK.lstrip("/"), ".old"):
        _mkdirs(os.path.join(new_root, name))
    for host in plan.binds:
        _mkdirs(new_root + host)
        _bind_ro(host, new_root + host)
    for path, target in plan.links:
        _mkdirs(os.path.dirname(new_root + path))
        os.symlink(target, new_root + path)
    _mkdirs(new_root + "/dev")
    mount("tmpfs", new_root + "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for node in plan.dev_nodes:
        with open(new_root + "/dev/" + node, "w"):
            pass
        mount("/dev/" + node, new_root + "/dev/" + node, None, MS_BIND)
    for path in plan.masked:
        mount("/dev/null", new_root + path, None, MS_BIND)
    mount(None, new_root, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    try:
        linux.pivot_root(new_root, new_root + "/.old")
        os.chdir("/")
        linux.umount("/.old", linux.MNT_DETACH)
    except OSError:  # unknown architecture: a chroot hides the rest just as well from the job
        os.chroot(new_root)
        os.chdir("/")


def enter_job(tmp_mb: int, uid: int, gid: int, proc: bool) -> None:
    """In the job's child, inside the view: its own writable tmpfs, and a fresh /proc.

    Inside a user namespace the kernel allows mounting proc only where a complete proc is
    already visible, which the view does not have: such jobs get no /proc at all."""
    linux.unshare(linux.CLONE_NEWNS)
    if proc:
        mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    options = f"size={tmp_mb}m,nr_inodes=4096,mode=700,uid={uid},gid={gid}"
    mount("tmpfs", WORK, "tmpfs", MS_NOSUID | MS_NODEV, options)
    os.chdir(WORK)
