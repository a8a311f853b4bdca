"""Run leases: which runs are still alive, so `decathlon gc` leaves their sandboxes alone.

A process that acquires a sandbox for run R holds an exclusive `flock` on `<lease dir>/R.lease` for the
rest of its life. The kernel drops the lock when the process dies, however it dies (SIGKILL
included), so a lock that can be taken means nobody owns the run any more. Every sandbox also carries
`decathlon.owner` (host and uid): gc without `--force` touches only its own user's, on its own host.

A gc may look in another lease folder than the run's (DECATHLON_LEASE_DIR set for one and not the other),
so a run's sandboxes also say where its lease is (`decathlon.lease`) and which process holds it
(`decathlon.process`: host, pid, start time, boot): gc calls a run live if any of the labelled lease, its
own folder's lease or that process says so.
"""
from __future__ import annotations

import fcntl
import os
import re
import socket
import stat
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

OWNER_LABEL = "decathlon.owner"
RUN_LABEL = "decathlon.run"
LEASE_LABEL = "decathlon.lease"
PROCESS_LABEL = "decathlon.process"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")
_held: dict[str, int] = {}  # run id → the descriptor whose lock is the lease (kept open for good)
_where: dict[str, str] = {}  # run id → the absolute path its lease was taken at (the folder may change later)


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
    path = _path(run_id).absolute()
    _where[run_id] = str(path)
    try:
        _take(run_id, path)
    except OSError as exc:
        _held[run_id] = -1
        warnings.warn(f"decathlon: no lease for run {run_id} ({exc}); `decathlon gc` cannot tell it is "
                      "in progress (set DECATHLON_LEASE_DIR to a writable folder)", RuntimeWarning, stacklevel=2)


def _take(run_id: str, path: Path) -> None:
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
    """True while some process holds the run's lease (in this process's lease folder)."""
    return _held.get(run_id, -1) >= 0 or _probe(_path(run_id)) not in ("free", "absent")


def _probe(path: Path) -> str:
    """"held", "free", "absent" (no lease file there) or, when the probe itself failed, why. Only a regular
    file is probed, without blocking: the path may come from a label an agent could have written."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return "absent"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "absent"
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return "held"
    except OSError as exc:
        return f"not lockable ({exc.strerror})"
    finally:
        os.close(fd)
    return "free"


def sandbox_labels(run_id: str) -> dict[str, str]:
    """The labels that let any gc find this run's lease and process. Empty unless this process took (or
    tried to take) the run's lease: a sandbox acquired outside a run is judged by the lease folder alone,
    and the process that made it is not the run."""
    if run_id not in _held:
        return {}
    found = {LEASE_LABEL: _where[run_id]}
    me = process_identity(os.getpid())
    if me is not None:
        found[PROCESS_LABEL] = me
    return found


def process_identity(pid: int) -> str | None:
    """`host:pid:start:boot`: the start time (clock ticks after boot) tells a recycled pid from the
    process itself, the boot id a reboot (when ticks start over). None where there is no /proc."""
    start = _start_time(pid)
    if start is None:
        return None
    return f"{socket.gethostname()}:{pid}:{start}:{_boot_id()}"


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/<pid>/stat; None for no such process or a zombie (its lease is already gone)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (OSError, ValueError):
        return None
    # Field 2 (comm) is in parentheses and may hold spaces and parentheses itself: count from the last ')'.
    fields = text[text.rfind(")") + 1:].split()  # fields[0] is field 3 (state)
    if len(fields) < 20 or fields[0] in ("Z", "X", "x"):
        return None
    return fields[19]


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


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


@dataclass(frozen=True)
class Verdict:
    """What gc makes of one sandbox: `keep` is "live", "foreign" or None (it may go); `why` says so."""
    keep: str | None
    why: str


def collectable(labels: dict[str, str], force: bool, wanted: dict[str, str] | None = None) -> str | None:
    """Why gc must leave a sandbox with these labels alone (None: it may go); see judge()."""
    return judge(labels, force, wanted).keep


def judge(labels: dict[str, str], force: bool, wanted: dict[str, str] | None = None) -> Verdict:
    """Another owner's sandboxes are left alone unless gc was asked for their run by id (`gc --run ID`: the
    id a run prints at its start, say from a runner container, whose owner is the container's host name);
    a live run's never, but with `force`."""
    if force:
        return Verdict(None, "--force")
    run = labels.get(RUN_LABEL)
    asked = (wanted or {}).get(RUN_LABEL)
    named = asked is not None and asked == run
    mine = owner()
    if labels.get(OWNER_LABEL) != mine and not named:
        hint = f" (`gc --run {run}` takes it once its run is dead)" if run else ""
        return Verdict("foreign", f"owner {labels.get(OWNER_LABEL)!r} is not {mine!r}{hint}")
    if not run:
        return Verdict(None, "no run label")
    live, why = liveness(run, labels)
    return Verdict("live" if live else None, why)


def liveness(run_id: str, labels: dict[str, str]) -> tuple[bool, str]:
    """Whether the run is live, and what said so: the labelled lease, then this folder's, then the labelled
    process. One saying live is enough; an old sandbox without the labels is judged by this folder alone."""
    dead: list[str] = []
    for check in (_labelled_lease, _own_lease, _labelled_process):
        said = check(run_id, labels)
        if said is None:
            continue
        live, why = said
        if live:
            return True, why
        dead.append(why)
    return False, "; ".join(dead)


def _lease_says(path: Path) -> tuple[bool, str]:
    state = _probe(path)
    if state == "absent":
        return False, f"no lease at {path}"
    if state == "free":
        return False, f"lease {path} not held by any process"
    if state == "held":
        return True, f"lease {path} held by a running process"
    return True, f"lease {path} {state}: cannot tell the run is dead"  # removing a live run costs more


def _labelled_lease(run_id: str, labels: dict[str, str]) -> tuple[bool, str] | None:
    where = labels.get(LEASE_LABEL)
    if not where:
        return None
    path = Path(where)
    if not path.is_absolute() or path.suffix != ".lease":
        return False, f"lease label {where!r} is not a lease path"
    if path == _path(run_id).absolute():
        return None  # _own_lease probes it
    return _lease_says(path)


def _own_lease(run_id: str, labels: dict[str, str]) -> tuple[bool, str]:
    path = _path(run_id).absolute()
    if _held.get(run_id, -1) >= 0:
        return True, f"lease {_where.get(run_id, str(path))} held by this process"
    return _lease_says(path)


def _labelled_process(run_id: str, labels: dict[str, str]) -> tuple[bool, str] | None:
    identity = labels.get(PROCESS_LABEL)
    if not identity:
        return None
    parts = identity.rsplit(":", 3)
    if len(parts) != 4 or not parts[1].isdigit():
        return False, f"process label {identity!r} unreadable"
    host, pid, start, boot = parts
    if host != socket.gethostname() or boot != _boot_id():
        return None  # another machine (or this one before a reboot, when the run died anyway): not ours to tell
    now = _start_time(int(pid))
    if now is None:
        return False, f"process {pid} gone"
    if now != start:
        return False, f"process {pid} gone (the pid is now another process's)"
    return True, f"process {pid} still running"
