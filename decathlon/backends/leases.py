"""Run leases: which runs are still alive, so `decathlon gc` leaves their sandboxes alone.

A process that acquires a sandbox for run R holds an exclusive `flock` on `<lease dir>/R.lease` for the
rest of its life. The kernel drops the lock when the process dies, however it dies (SIGKILL
included), so a lock that can be taken means nobody owns the run any more. Every sandbox also carries
`decathlon.owner` (host and uid): gc without `--force` touches only its own user's, on its own host.
"""
from __future__ import annotations

import fcntl
import os
import re
import socket
import time
import warnings
from pathlib import Path

OWNER_LABEL = "decathlon.owner"
RUN_LABEL = "decathlon.run"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_held: dict[str, int] = {}  # run id → the descriptor whose lock is the lease (kept open for good)


def lease_dir() -> Path:
    explicit = os.environ.get("DECATHLON_LEASE_DIR")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "decathlon" / "leases"


def owner() -> str:
    return f"{socket.gethostname()}:{os.getuid()}"


def _path(run_id: str) -> Path:
    return lease_dir() / f"{_SAFE.sub('_', run_id)}.lease"


def hold(run_id: str) -> None:
    """Take this run's lease for the life of the process (idempotent; shared by the run's episodes).
    A lease folder that cannot be written costs only gc's protection: said once, never fatal."""
    if run_id in _held:
        return
    try:
        _take(run_id)
    except OSError as exc:
        _held[run_id] = -1
        warnings.warn(f"decathlon: no lease for run {run_id} ({exc}); `decathlon gc` cannot tell it is "
                      "in progress (set DECATHLON_LEASE_DIR to a writable folder)", RuntimeWarning, stacklevel=2)


def _take(run_id: str) -> None:
    path = _path(run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(50):
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            # gc probing a dead lease for a moment, or another process of the same run (a run id shared
            # on purpose): the second holds on, the first lets go.
            os.close(fd)
            time.sleep(0.01)
            continue
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if not same:  # gc removed the file between our open and our lock: lock the new one
            os.close(fd)
            continue
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        _held[run_id] = fd
        return
    _held[run_id] = -1  # held elsewhere all along: the run is live either way


def is_live(run_id: str) -> bool:
    """True while some process holds the run's lease."""
    if _held.get(run_id, -1) >= 0:
        return True
    try:
        fd = os.open(_path(run_id), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def forget_dead() -> None:
    """Remove the lease files of runs nobody holds (gc's housekeeping)."""
    folder = lease_dir()
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.lease")):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            path.unlink(missing_ok=True)  # still locked by us: a racing hold() re-creates and locks anew
        except BlockingIOError:
            pass
        finally:
            os.close(fd)


def collectable(labels: dict[str, str], force: bool, wanted: dict[str, str] | None = None) -> str | None:
    """Why gc must leave a sandbox with these labels alone (None: it may go). Another owner's sandboxes are
    left alone unless gc was asked for their run by id (`gc --run ID`: the id a run prints at its start,
    say from a runner container, whose owner is the container's host name); a live run's never, but with
    `force`."""
    if force:
        return None
    asked = (wanted or {}).get(RUN_LABEL)
    named = asked is not None and asked == labels.get(RUN_LABEL)
    if labels.get(OWNER_LABEL) != owner() and not named:
        return "foreign"
    run = labels.get(RUN_LABEL)
    if run and is_live(run):
        return "live"
    return None
