"""`decathlon record`: live episodes, one at a time, each leaving a cassette and its trajectory."""
from __future__ import annotations

import argparse
import fcntl
import json
import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from decathlon.backends.local import LocalBackend
from decathlon.recordings.cassettes import cassette_path, cassettes_dir, trajectory_path
from decathlon.cli.console import console
from decathlon.core.episode import EpisodeConfig, run_episode
from decathlon.errors import InfraError, Kind
from decathlon.core.policies import make_policy
from decathlon.checkout.tasks import resolve_source, select


@contextmanager
def recorder_lock(target: Path) -> Iterator[None]:
    """One recorder per cassette file, by `flock` on `<cassette>.lock`: the kernel drops the lock when its
    holder dies, so a crashed recorder's lock is simply free, and two recorders can never both hold it
    (a pid file taken over when "stale" could be, by two at once). The holder removes the file while
    still holding it; whoever locked the removed file sees it is no longer the one at the path and tries
    again."""
    lock = target.with_name(target.name + ".lock")
    target.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise InfraError(Kind.CASSETTE_LOCKED, f"another recorder (pid {holder}) is writing {target}; "
                             "wait for it to finish") from None
        try:
            current = os.stat(lock).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)  # releases the lock


async def record_command(ns: argparse.Namespace) -> int:
    if not ns.tasks and not ns.all:
        raise InfraError(Kind.USAGE, "name at least one TASK, or pass --all")
    if ns.policy == "null":
        raise InfraError(Kind.USAGE, "recording the null policy records nothing worth replaying; use oracle, replay or a model")
    source = resolve_source(ns.source)
    names = select(source, ns.tasks, ns.all)
    out = cassettes_dir(source, ns.out)
    policy = make_policy(ns.policy, source, ns.oracles, out)
    if not ns.force:
        existing = [str(cassette_path(out, n)) for n in names if cassette_path(out, n).exists()]
        if existing:
            raise InfraError(Kind.CASSETTE_EXISTS, f"{', '.join(existing)} already exist; pass --force to overwrite")
    run_id = uuid.uuid4().hex[:12]
    out_console = console(stderr=True)
    failed = 0
    # One at a time: recordings are the ground truth of replays, and parallel episodes could
    # interfere through whatever shared service they record.
    for task in names:
        target = cassette_path(out, task)
        with recorder_lock(target):
            cfg = EpisodeConfig(task=task, source=source, run_id=run_id, episode_id=uuid.uuid4().hex,
                                launch_time=ns.launch_time, max_turns=ns.max_turns, mode="record", record_to=out)
            result = await run_episode(cfg, LocalBackend(), policy)
        if result.infra_error:
            failed += 1
            out_console.print(f"[red]{task}: not recorded[/]: {result.infra_error['kind']}: {result.infra_error['message']}")
        else:
            out_console.print(f"{task}: recorded {target} (reward {result.reward:.2f}) and {trajectory_path(out, task).name}")
        print(json.dumps({"task": task, "cassette": None if result.infra_error else str(target),
                          "reward": result.reward, "pass": result.passed, "infra_error": result.infra_error}))
    return 1 if failed else 0
