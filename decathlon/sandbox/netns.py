"""A private network namespace for an episode on the local backend, where its services must listen at
the fixed ports the tasks hard-code (IMAP 1143, Canvas 10001…) without two episodes, or the host,
meeting there. In a container (compose, prime) the sandbox's own namespace already is that.

Python 3.11 has no os.unshare/os.setns, hence libc through ctypes.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import struct

from decathlon.sandbox.syscalls import CLONE_NEWNET, libc

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


class NetnsError(OSError):
    pass


def current() -> int:
    """The inode naming this thread's network namespace."""
    return os.stat("/proc/thread-self/ns/net").st_ino


def _loopback_up() -> None:
    """A new namespace's `lo` is down: bring it up (what `ip link set lo up` does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def unshare() -> None:
    """Move the calling thread (and every process it starts from now on) into a new network namespace,
    with only its loopback up. Needs CAP_SYS_ADMIN (root on the host)."""
    if libc().unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsError(err, f"unshare(CLONE_NEWNET): {os.strerror(err)}"
                              + (" (it needs root, CAP_SYS_ADMIN)" if err == errno.EPERM else ""))
    _loopback_up()


def enter(pid: int) -> None:
    """Join the network namespace of process `pid` (the episode's service supervisor)."""
    try:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError as exc:
        raise NetnsError(exc.errno or errno.ESRCH, f"process {pid} holds no network namespace to join: {exc}") from None
    try:
        if os.fstat(fd).st_ino == current():
            return
        if libc().setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise NetnsError(err, f"setns into {pid}'s network namespace: {os.strerror(err)}")
    finally:
        os.close(fd)
