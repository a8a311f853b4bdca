"""The fake control plane's state: sandboxes (one directory each), their processes, and the counters a
test or bench reads back (which sandboxes are alive, how many were created per idempotency key)."""
from __future__ import annotations

import os
import shutil
import signal
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from fakes.prime.faults import Faults

MARKER = "PRIME_FAKE_SANDBOX"  # in every process a sandbox runs: how deletion finds stragglers


@dataclass
class FakeSandbox:
    id: str
    index: int  # creation order, 1-based: fault selection
    request: dict
    root: Path
    created: float
    ready_after: float | None  # None: stuck in PENDING
    unreachable: bool = False
    dies_after: int | None = None
    delete_failures_left: int = 0
    delete_stuck: bool = False
    status: str = "PENDING"
    error_type: str | None = None
    execs: int = 0
    pgids: set[int] = field(default_factory=set)

    def current_status(self) -> str:
        if self.status == "PENDING" and self.ready_after is not None and time.monotonic() >= self.ready_after:
            self.status = "RUNNING"
        return self.status

    @property
    def labels(self) -> list[str]:
        return list(self.request.get("labels") or [])

    def to_json(self) -> dict:
        now = datetime.now(timezone.utc).isoformat()
        r = self.request
        return {"id": self.id, "name": r.get("name", self.id), "dockerImage": r.get("docker_image", ""),
                "cpuCores": r.get("cpu_cores", 1.0), "memoryGB": r.get("memory_gb", 1.0),
                "diskSizeGB": r.get("disk_size_gb") or 5.0, "diskMountPath": "/", "gpuCount": 0, "vm": True,
                "status": self.current_status(), "timeoutMinutes": r.get("timeout_minutes", 60),
                "labels": self.labels, "createdAt": now, "updatedAt": now, "errorType": self.error_type}


class Registry:
    def __init__(self, root: Path, faults: Faults, home: str) -> None:
        self.root = root
        self.faults = faults
        self.home = home.rstrip("/")  # the in-sandbox path that maps onto a sandbox's directory
        self.sandboxes: dict[str, FakeSandbox] = {}
        self.by_key: dict[str, str] = {}
        self.created_per_key: dict[str, int] = {}
        self.live_per_episode: dict[str, int] = {}
        self.max_live_per_episode: dict[str, int] = {}
        self.requests = 0
        self.creates = 0

    def create(self, request: dict) -> tuple[FakeSandbox, bool]:
        key = request.get("idempotency_key") or uuid.uuid4().hex
        if key in self.by_key:  # a retried create: the same sandbox, never a second one
            return self.sandboxes[self.by_key[key]], False
        self.creates += 1
        f, n = self.faults, self.creates
        sid = f"fake{uuid.uuid4().hex[:16]}"
        root = self.root / sid
        root.mkdir(parents=True)
        now = time.monotonic()
        delay = f.slow_s if f.picks(f.slow_every, n) else f.pending_s
        box = FakeSandbox(sid, n, request, root, now, None if f.picks(f.stuck_every, n) else now + delay,
                          unreachable=f.picks(f.unreachable_every, n),
                          dies_after=f.die_after_execs if f.picks(f.die_every, n) else None,
                          delete_failures_left=f.delete_fail_times if f.picks(f.delete_fail_every, n) else 0,
                          delete_stuck=f.picks(f.delete_stuck_every, n))
        self.sandboxes[sid] = box
        self.by_key[key] = sid
        self.created_per_key[key] = self.created_per_key.get(key, 0) + 1
        episode = _episode(box.labels)
        if episode:
            self.live_per_episode[episode] = self.live_per_episode.get(episode, 0) + 1
            self.max_live_per_episode[episode] = max(self.max_live_per_episode.get(episode, 0),
                                                     self.live_per_episode[episode])
        return box, True

    def live(self, sid: str) -> FakeSandbox | None:
        box = self.sandboxes.get(sid)
        return box if box is not None and box.status not in ("TERMINATED", "DELETED") else None

    def map_path(self, box: FakeSandbox, path: str) -> Path:
        """An in-sandbox path on this host: the home maps onto the sandbox's directory, relative paths
        are relative to it; anything else is taken as is (the task source, /tmp, ...)."""
        if path == self.home or path.startswith(self.home + "/"):
            return box.root / path[len(self.home):].lstrip("/")
        return Path(path) if os.path.isabs(path) else box.root / path

    def terminate(self, box: FakeSandbox, status: str, error_type: str | None = None) -> None:
        """Kill everything the sandbox runs (each command's process group, the episode daemon's, and any
        process that carries its marker), then drop its directory."""
        if box.status in ("TERMINATED", "DELETED"):
            return
        box.status, box.error_type = status, error_type
        groups = set(box.pgids)
        try:
            groups.add(int((box.root / "run" / "daemon.pid").read_text()))
        except (OSError, ValueError):
            pass
        for pgid in groups:
            _killpg(pgid)
        for pid in marked_pids(box.id):
            _killpg(pid)
            _kill(pid)
        shutil.rmtree(box.root, ignore_errors=True)
        episode = _episode(box.labels)
        if episode:
            self.live_per_episode[episode] -= 1

    def alive(self) -> list[str]:
        return [sid for sid, box in self.sandboxes.items() if box.status not in ("TERMINATED", "DELETED")]

    def stats(self) -> dict:
        return {"alive": self.alive(), "created": self.creates, "requests": self.requests,
                "created_per_key": self.created_per_key,
                "duplicate_keys": sorted(k for k, v in self.created_per_key.items() if v > 1),
                "duplicate_episodes": sorted(e for e, v in self.max_live_per_episode.items() if v > 1),
                "alive_processes": sum(1 for _, sid in marked() if sid in self.sandboxes)}


def _episode(labels: list[str]) -> str | None:
    for label in labels:
        if label.startswith("decathlon.core.episode="):
            return label.split("=", 1)[1]
    return None


def marked() -> list[tuple[int, str]]:
    """(pid, sandbox id) of every process carrying a sandbox marker, found through /proc."""
    prefix = f"{MARKER}=".encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                env = fh.read().split(b"\0")
        except OSError:
            continue
        for v in env:
            if v.startswith(prefix):
                found.append((int(entry.name), v[len(prefix):].decode()))
                break
    return found


def marked_pids(sid: str) -> list[int]:
    return [pid for pid, owner in marked() if owner == sid]


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
