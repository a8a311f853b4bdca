"""The few Linux calls the sandbox makes that Python 3.11 does not wrap (unshare, setns, mount, umount2, pivot_root,
prctl), through libc with ctypes, and their flags: shared by the agent's jail, the services' own root and the
episode's network namespace."""
from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 0x2
PR_SET_NO_NEW_PRIVS = 38


def libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def check(rc: int, what: str, error: type[OSError] = OSError) -> None:
    """A libc call's -1 as `error`, naming the call and errno's text."""
    if rc != 0:
        err = ctypes.get_errno()
        raise error(err, f"{what}: {os.strerror(err)}")


def _enc(s: str | None) -> bytes | None:
    return os.fsencode(s) if s is not None else None


def mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None,
          error: type[OSError] = OSError) -> None:
    check(libc().mount(_enc(src), _enc(dst), _enc(fstype), flags, _enc(data)), f"mount {src or fstype} on {dst}", error)
