"""File creation time as Node's ``fs.stat().birthtime`` reports it.

Python's ``os.stat`` has no birth time on Linux, so ``statx(2)`` is called via
libc. Where that is unavailable, libuv reports the change time instead, and so
does this module.
"""

from __future__ import annotations

import os

_STATX_BTIME = 0x800
_AT_FDCWD = -100
_STATX_SIZE = 256
_BTIME_OFFSET = 80


def _statx_btime_ns(path: str) -> int | None:
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        statx = libc.statx
    except (OSError, AttributeError):
        return None
    buffer = ctypes.create_string_buffer(_STATX_SIZE)
    if statx(_AT_FDCWD, os.fsencode(path), 0, _STATX_BTIME, buffer) != 0:
        return None
    mask = int.from_bytes(buffer.raw[0:4], "little")
    if not mask & _STATX_BTIME:
        return None
    seconds = int.from_bytes(buffer.raw[_BTIME_OFFSET : _BTIME_OFFSET + 8], "little", signed=True)
    nanoseconds = int.from_bytes(buffer.raw[_BTIME_OFFSET + 8 : _BTIME_OFFSET + 12], "little")
    return seconds * 1_000_000_000 + nanoseconds


def birthtime_ns(path: str, info: os.stat_result) -> int:
    native = getattr(info, "st_birthtime_ns", None) or getattr(info, "st_birthtime", None)
    if native:
        return int(native) if isinstance(native, int) else int(native * 1_000_000_000)
    btime = _statx_btime_ns(path)
    return btime if btime is not None else info.st_ctime_ns
