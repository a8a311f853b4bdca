"""Conflict groups: tasks that share live external state (the checkout's `tasks/finalpool/task_conflict.json`,
e.g. two tasks driving one shared store) never run at the same time within a process, in live mode.

Replay and rerun answer those servers from cassettes, so they need no lock. The locks are per event loop
and per group, shared by every caller in the process: the CLI's episodes and verifiers' rollouts alike.
"""
from __future__ import annotations

import asyncio
import functools
import json
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from decathlon.errors import InfraError, Kind
from decathlon.sandbox import taskdef

CONFLICT_FILE = "task_conflict.json"


def load_groups(source: Path) -> dict[str, str]:
    """Task → its group's name (the group's tasks, sorted, comma-joined); {} when the source has none."""
    path = Path(source) / "tasks" / taskdef.SPLIT / CONFLICT_FILE
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_bytes())
        groups = doc["conflict_groups"]
        if not isinstance(groups, list) or not all(isinstance(g, list) and all(isinstance(t, str) for t in g)
                                                   for g in groups):
            raise TypeError("conflict_groups is not a list of lists of task names")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfraError(Kind.BAD_SOURCE, f"{path} is not a conflict file ({type(exc).__name__}: {exc}); expected "
                         '{"conflict_groups": [["task-a", "task-b"], ...]}') from None
    # a task in two groups joins them: one lock for the union keeps "never at once" true for both
    parent: dict[str, str] = {}

    def root(t: str) -> str:
        while parent.setdefault(t, t) != t:
            t = parent[t]
        return t

    for group in groups:
        for task in group[1:]:
            parent[root(task)] = root(group[0])
        if group:
            root(group[0])
    members: dict[str, list[str]] = {}
    for task in parent:
        members.setdefault(root(task), []).append(task)
    return {task: ",".join(sorted(members[root(task)])) for task in sorted(parent)}


@dataclass
class Held:
    group: str | None
    waited: float = 0.0  # seconds spent waiting for another task of the group
    lock: asyncio.Lock | None = None

    def release(self) -> None:
        """Let the group's next task go; idempotent."""
        lock, self.lock = self.lock, None
        if lock is not None and lock.locked():
            lock.release()


_locks: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]]" = weakref.WeakKeyDictionary()


async def take(groups: dict[str, str], task: str, live: bool) -> Held:
    """The task's group, held until `release()`: for callers whose episode spans several calls (verifiers)."""
    group = groups.get(task)
    if group is None or not live:
        return Held(group if live else None)
    lock = _locks.setdefault(asyncio.get_running_loop(), {}).setdefault(group, asyncio.Lock())
    contended, start = lock.locked(), time.monotonic()
    await lock.acquire()
    return Held(group, round(time.monotonic() - start, 3) if contended else 0.0, lock)


@asynccontextmanager
async def hold(groups: dict[str, str], task: str, live: bool) -> AsyncIterator[Held]:
    held = await take(groups, task, live)
    try:
        yield held
    finally:
        held.release()


@functools.lru_cache(maxsize=64)
def groups_of(source: str) -> dict[str, str]:
    """load_groups, once per source per process (every rollout of a taskset asks)."""
    return load_groups(Path(source))
