"""Processes the agent starts die with its episode, wherever they put themselves.

The agent's code may start children in sessions of their own (setsid, double forks, daemons) that
escape a process-group kill. The episode daemon and the zygote mark themselves child subreapers
(prctl PR_SET_CHILD_SUBREAPER), so such an orphan is re-parented to them instead of to init, and they
kill every descendant when they end (the zygote also kills orphans of a daemon that died). Standard
library only; /proc is read for the process tree.
"""
from __future__ import annotations

import ctypes
import os
import signal
import time

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parents() -> dict[int, int]:
    """pid → parent pid of every live process (zombies left out: they are dead already)."""
    out: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields and fields[0] != b"Z":
            out[int(entry)] = int(fields[1])
    return out


def children(pid: int) -> list[int]:
    return sorted(p for p, parent in _parents().items() if parent == pid)


def descendants(pid: int) -> list[int]:
    parents = _parents()
    kids: dict[int, list[int]] = {}
    for p, parent in parents.items():
        kids.setdefault(parent, []).append(p)
    found, todo = [], list(kids.get(pid, []))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(kids.get(p, []))
    return sorted(found)


def kill(pids: list[int]) -> None:
    for p in pids:
        try:
            os.kill(p, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_descendants(pid: int | None = None, deadline: float = 3.0) -> int:
    """SIGKILL everything below `pid` (default: this process) until nothing is left or the deadline."""
    me = os.getpid() if pid is None else pid
    end = time.monotonic() + deadline
    killed = 0
    while True:
        found = descendants(me)
        if not found or time.monotonic() > end:
            return killed
        kill(found)
        killed += len(found)
        time.sleep(0.01)
