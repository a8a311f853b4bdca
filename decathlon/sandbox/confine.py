"""A root of their own for the episode's services (mail, Canvas, WooCommerce, the SaaS front and its emulators) on
the local backend as root.

The services run code the agent steers: SQL handed to DuckDB (whose file functions read any path their user may
read), requests parsed by every emulator. In the host's mount namespace they would see what every user of the
host sees: the task source with its ground truth, our fixtures' oracles, other episodes' folders, the host's /tmp.
So their supervisor starts here, as root, and before it becomes the service user:

- a mount namespace of its own, private, whose root is a small tmpfs holding only what the services must read,
  bound read-only at the same paths (the system's /usr, a few files of /etc, the interpreters and virtualenvs they
  run on, this package's own code), and their state folders bound writable;
- a fresh /proc that shows only the services' own processes (hidepid=invisible: the service user's), a /dev of
  the few device nodes programs open, private tmpfs at /tmp and /dev/shm;
- then the service user for good: no supplementary groups, no capabilities, no new privileges.

The old root is detached, not merely hidden: nothing the services run can name a host path outside the binds.
In a container (compose, prime) the container already is such a root and holds nothing of the host; there this
is not used (and could not be: no CAP_SYS_ADMIN).

`python -m decathlon.sandbox.confine --uid N --ro PATH… --rw PATH… -- ARGV…`; a failure prints
`failed {"service": "confine", "reason": …}` on stdout (what the supervisor's reader expects) and exits 1.
Python 3.11 has no os.unshare or mount, hence libc through ctypes (decathlon.sandbox.syscalls).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from pathlib import Path

from decathlon.sandbox import syscalls
from decathlon.sandbox.syscalls import (CLONE_NEWNS, MNT_DETACH, MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, MS_PRIVATE,
                                        MS_RDONLY, MS_REC, MS_REMOUNT, libc)
from decathlon.sandbox.users import Users

_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "arm64": 41}
BASE = Path(os.environ.get("DECATHLON_CONFINE_BASE", "/run/decathlon-confine"))
# The system a Python program needs, read-only: everything else of the host stays outside.
SYSTEM = ("/usr",)
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC = ("passwd", "group", "hosts", "resolv.conf", "nsswitch.conf", "host.conf", "gai.conf", "protocols", "services",
       "localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates",
       "ca-certificates.conf", "alternatives", "mime.types", "os-release")
DEVICES = ("null", "zero", "full", "random", "urandom")
TMP_SIZE = "size=64m"  # /tmp and /dev/shm: what a service writes goes to its state folder (TMPDIR), not here


class ConfineError(OSError):
    pass


@dataclass
class Plan:
    """What the services' root holds: read-only binds, writable binds, and who they run as."""
    uid: int
    readonly: list[str] = field(default_factory=list)
    writable: list[str] = field(default_factory=list)


def _check(rc: int, what: str) -> None:
    syscalls.check(rc, what, ConfineError)


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    syscalls.mount(src, dst, fstype, flags, data, ConfineError)


def python_roots(executable: str) -> list[str]:
    """The folders an interpreter needs: its virtualenv (where `executable` sits in one) and the installation
    the venv's python links to (its prefix: what holds bin/ and lib/)."""
    exe = Path(executable).absolute()
    roots = []
    venv = exe.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        roots.append(str(venv))
    real = Path(os.path.realpath(exe))
    roots.append(str(real.parent.parent))
    return roots


def standard_plan(uid: int, writable: list[str], interpreters: list[str], code: list[str]) -> Plan:
    """The services' root: the system, the interpreters they run on (with their virtualenvs) and `code` (this
    package's folder) read-only, `writable` (their state folders) writable."""
    ro = [p for p in SYSTEM if os.path.isdir(p)]
    ro += [f"/etc/{name}" for name in ETC if os.path.lexists(f"/etc/{name}")]
    for exe in interpreters:
        ro += python_roots(exe)
    ro += code
    return Plan(uid, sorted(set(ro)), sorted(set(writable)))


def _mount_point(root: Path, inside: str, like: str) -> Path:
    """The mount point for `inside` under `root`: a folder or a file, as `like` is. Folders above it are made
    0755 (the umask is set in enter): the service user must pass through them."""
    target = root / inside.lstrip("/")
    if os.path.lexists(target):  # already there: inside an earlier bind, or made for another path
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.isdir(like):
        target.mkdir()
    else:
        target.touch()
    return target


def _bind(root: Path, path: str, readonly: bool) -> None:
    if os.path.islink(path):
        # A link (/etc/localtime → ../usr/share/zoneinfo/…): the same link inside; its target, where the plan
        # holds it, is bound on its own.
        link = root / path.lstrip("/")
        if not os.path.lexists(link):
            link.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(path), link)
        return
    if not os.path.exists(path):
        return
    target = _mount_point(root, path, path)
    _mount(path, str(target), None, MS_BIND | MS_REC)
    _mount(None, str(target), None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | (MS_RDONLY if readonly else 0))


def resolved(paths: list[str]) -> list[str]:
    """`paths` with every link on the way kept as a link and its target added, until nothing new comes."""
    out: set[str] = set()
    todo = [os.path.abspath(p) for p in paths]
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out.add(p)
        # A link anywhere above (a venv's lib64 → lib is inside the venv: bound with it, harmless).
        parent = os.path.dirname(p)
        if os.path.realpath(parent) != parent:
            todo.append(os.path.join(os.path.realpath(parent), os.path.basename(p)))
            out.discard(p)
            continue
        if os.path.islink(p):
            todo.append(os.path.realpath(p))
    return sorted(out)


def _outermost(paths: list[str]) -> list[str]:
    """Without a path that lies inside another (the outer bind brings it), links kept (they are made, not bound)."""
    dirs = [p for p in paths if not os.path.islink(p)]
    return [p for p in paths if os.path.islink(p) or not any(p != o and p.startswith(o.rstrip("/") + "/") for o in dirs)]


def _devices(root: Path) -> None:
    dev = root / "dev"
    dev.mkdir(mode=0o755, exist_ok=True)
    _mount("tmpfs", str(dev), "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name in DEVICES:
        node = dev / name
        node.touch(mode=0o666)
        _mount(f"/dev/{name}", str(node), None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, dev / name)
    shm = dev / "shm"
    shm.mkdir(mode=0o1777)
    _mount("tmpfs", str(shm), "tmpfs", MS_NOSUID | MS_NODEV, f"{TMP_SIZE},mode=1777")


def _pivot(root: Path) -> None:
    number = _PIVOT_ROOT.get(platform.machine())
    if number is None:
        raise ConfineError(0, f"pivot_root: no syscall number known for {platform.machine()}")
    os.chdir(root)
    # pivot_root(".", "."): the old root stacks under the new one and is then detached, with no folder for it.
    _check(libc().syscall(number, b".", b"."), "pivot_root")
    _check(libc().umount2(b".", MNT_DETACH), "detaching the host's root")
    os.chdir("/")


def enter(plan: Plan) -> None:
    """Into the services' own root (needs root); the caller then becomes `plan.uid`."""
    os.umask(0o022)
    _check(libc().unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    BASE.mkdir(mode=0o700, parents=True, exist_ok=True)
    root = BASE
    _mount("tmpfs", str(root), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755")
    for link in TOP_LINKS:  # usrmerge: /bin → usr/bin and the like, links again inside
        if os.path.islink(link):
            os.symlink(os.readlink(link), root / link.lstrip("/"))
        elif os.path.isdir(link):
            plan.readonly.append(link)
    # /tmp first: the state folders bound below may lie under the host's /tmp (the local backend's episodes do).
    tmp = root / "tmp"
    tmp.mkdir(mode=0o1777)
    _mount("tmpfs", str(tmp), "tmpfs", MS_NOSUID | MS_NODEV, f"{TMP_SIZE},mode=1777")
    writable = resolved(plan.writable)
    for path in _outermost(resolved(plan.readonly)):
        if path not in writable:
            _bind(root, path, True)
    for path in _outermost(writable):
        _bind(root, path, False)
    _devices(root)
    proc = root / "proc"
    proc.mkdir(mode=0o555, exist_ok=True)
    # Only the service user's own processes (and none of the host's: their command lines name the host's paths).
    _mount("proc", str(proc), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
    _mount(None, str(root), None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    _pivot(root)


def become(uid: int) -> None:
    Users(service=uid, agent=uid).become("service")


def _fail(reason: str) -> int:
    print("failed " + json.dumps({"service": "confine", "reason": reason}), flush=True)
    return 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m decathlon.sandbox.confine", description=__doc__.split("\n\n")[0])
    ap.add_argument("--uid", type=int, required=True, help="the service user the command runs as")
    ap.add_argument("--ro", action="append", default=[],
                    help="a path bound read-only (repeatable), besides the system's /usr and a few files of /etc")
    ap.add_argument("--rw", action="append", default=[], help="a path bound writable (repeatable)")
    ap.add_argument("argv", nargs=argparse.REMAINDER, help="-- the command")
    args = ap.parse_args(argv)
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        ap.error("no command after --")
    if args.uid == 0:
        ap.error("--uid 0: the services never run as root")
    cwd = os.getcwd()
    try:
        enter(standard_plan(args.uid, list(args.rw), [], list(args.ro)))
        become(args.uid)
    except OSError as exc:
        return _fail(f"the services' own root could not be made: {exc}")
    try:
        os.chdir(cwd)
    except OSError:
        os.chdir("/")
    try:
        os.execvpe(command[0], command, dict(os.environ))
    except OSError as exc:
        return _fail(f"{command[0]}: {exc}")
    return 1  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main())
