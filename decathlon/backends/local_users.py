"""Unprivileged users of their own for every local episode, when decathlon runs as root.

Service tasks need root on the local backend (a network namespace per episode), and an agent running
as root could write into the user's checkout, enter another episode's namespaces, or signal anything.
So as root each episode gets a slot of three uids no account uses: its agent, its services and its
grader (decathlon.sandbox.users), as a compose sandbox has in its container. Two episodes never share a uid:
they cannot signal, trace or write each other, and a release kills every process of the slot's uids,
wherever the agent put them.

A slot is held with an flock on `<LOCK_DIR>/<slot>.lock` for as long as its episode lives (the kernel
drops it when the holder dies, however it dies); whoever takes a slot first kills what an earlier,
crashed holder left running under its uids. Not root: no slot, and the episode runs as the user (said
at the start of a run: see isolation_note).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import pwd
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path

from decathlon.errors import InfraError, Kind
from decathlon.sandbox.users import Users, any_process_of

UID_BASE = int(os.environ.get("DECATHLON_LOCAL_UID_BASE", "1600000"))
SLOTS = int(os.environ.get("DECATHLON_LOCAL_UID_SLOTS", "4096"))
LOCK_DIR = Path(os.environ.get("DECATHLON_LOCAL_UID_LOCKS", "/run/decathlon-local/slots"))
ROLES_PER_SLOT = 3


def isolating() -> bool:
    """The local backend gives each episode users of its own only when it can: as root."""
    return os.geteuid() == 0


@dataclass
class Identity:
    slot: int
    fd: int  # the slot's lock, held while the episode lives

    @property
    def users(self) -> Users:
        base = UID_BASE + ROLES_PER_SLOT * self.slot
        return Users(agent=base, service=base + 1, grader=base + 2)

    def env(self) -> str:
        """TASK_API_USERS for the episode's task-api."""
        u = self.users
        return f"agent={u.agent},service={u.service},grader={u.grader}"

    def kill_all(self) -> None:
        users = self.users
        if not any_process_of([users.agent, users.service, users.grader]):  # the usual case: one look at /proc
            return
        for role in ("agent", "service", "grader"):
            users.kill_all(role)

    def release(self) -> None:
        """Every process of the slot's uids killed, then the slot free for another episode."""
        if self.fd < 0:
            return
        try:
            self.kill_all()
        finally:
            os.close(self.fd)
            self.fd = -1


def _lock_dir() -> Path:
    """The slots' folder: root's and nobody else's (in a world-writable place it could be planted)."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = LOCK_DIR.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != 0 or st.st_mode & 0o022:
        raise InfraError(Kind.ACQUIRE_USERS, f"{LOCK_DIR} must be a folder of root's that no one else can write "
                         "(it holds the local episodes' user slots); remove it, or name another in "
                         "DECATHLON_LOCAL_UID_LOCKS")
    return LOCK_DIR


def _unused(slot: int) -> bool:
    for uid in range(UID_BASE + ROLES_PER_SLOT * slot, UID_BASE + ROLES_PER_SLOT * (slot + 1)):
        try:
            pwd.getpwuid(uid)
            return False  # an account of this host has it: never run an episode as someone real
        except KeyError:
            pass
    return True


def _try(folder: Path, slot: int) -> int | None:
    fd = os.open(folder / f"{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def claim(episode_id: str) -> Identity:
    """A free slot for the episode (searched from a point its id picks, so episodes spread out), with
    whatever an earlier holder left running killed."""
    folder = _lock_dir()
    start = int(hashlib.sha256(episode_id.encode()).hexdigest(), 16) % SLOTS
    for n in range(SLOTS):
        slot = (start + n) % SLOTS
        if not _unused(slot):
            continue
        fd = _try(folder, slot)
        if fd is None:
            continue
        ident = Identity(slot, fd)
        ident.kill_all()
        return ident
    raise InfraError(Kind.ACQUIRE_USERS, f"all {SLOTS} local user slots are in use (DECATHLON_LOCAL_UID_SLOTS)")


def reclaim(slot: int) -> bool:
    """For `gc`: kill what a dead episode left running under a slot's uids, if no live episode holds it."""
    fd = _try(_lock_dir(), slot)
    if fd is None:
        return False
    Identity(slot, fd).release()
    return True


_READABLE: set[str] = set()  # paths found readable by the episodes' users, once per process


def unreadable(paths: list[str], users: Users) -> list[str]:
    """Which of `paths` the episode's grader cannot read (each episode's users are alike: the first
    slot's stand for all). One check, run as that user, instead of reasoning about modes and ACLs."""
    wanted = [p for p in dict.fromkeys(paths) if p and p not in _READABLE]
    if not wanted:
        return []
    probe = subprocess.run([*users.prefix("grader"), "sh", "-c",
                            'for p; do [ -r "$p" ] && { [ ! -d "$p" ] || [ -x "$p" ]; } || echo "$p"; done', "sh",
                            *wanted], capture_output=True, text=True, timeout=30)
    missing = [line for line in probe.stdout.splitlines() if line]
    _READABLE.update(p for p in wanted if p not in missing)
    return missing
