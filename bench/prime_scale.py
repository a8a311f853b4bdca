"""N concurrent episodes through the prime backend against the fake control plane (fakes/prime).

    .venv/bin/python bench/prime_scale.py --episodes 1024 --faults none --json
    .venv/bin/python bench/prime_scale.py --episodes 256 --faults mixed --json

Each episode replays the committed project-deadlines cassette with its recorded trajectory (no model,
no network). At the end the run's leftovers are collected by label, as `decathlon gc --backend prime`
would, and the fake says what is still alive. The last line printed is one JSON object: episodes,
scored, infra (by kind), leaked, duplicates, wall_s, per_episode_ms, peak_rss_mb, max_open_fds.
"""
from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conformance.prime import backend as prime_backend  # noqa: E402
from decathlon.backends.local import LocalBackend  # noqa: E402
from decathlon.core.episode import EpisodeConfig, run_episode  # noqa: E402
from decathlon.core.policies import ReplayPolicy  # noqa: E402
from fakes.prime.control import fast_sdk_rate_limits  # noqa: E402

MINI = REPO / "fixtures" / "toolathlon-mini"
CASSETTES = REPO / "fixtures" / "cassettes"
TASK = "project-deadlines"
PLATFORM_FAULTS = {"sandbox_start_timeout", "sandbox_unreachable", "sandbox_died", "create_failed", "exec_timeout",
                   "file_upload_failed", "file_download_failed", "sandbox_released", "unauthorized",
                   "payment_required", "quota_exceeded"}


async def _sample_fds(peak: list[int], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], len(os.listdir("/proc/self/fd")))
        try:
            await asyncio.wait_for(stop.wait(), 0.1)
        except asyncio.TimeoutError:
            pass


async def _run(backend, episodes: int, concurrency: int) -> tuple[list, int, int]:
    run_id = f"scale-{uuid.uuid4().hex[:8]}"
    policy = ReplayPolicy(CASSETTES)
    gate = asyncio.Semaphore(concurrency)  # queue outside acquire, so waiting is not counted against it
    fds, stop = [0], asyncio.Event()
    sampler = asyncio.create_task(_sample_fds(fds, stop))

    async def one(i: int):
        async with gate:
            cfg = EpisodeConfig(task=TASK, source=MINI, run_id=run_id, episode_id=f"{i:05d}-{uuid.uuid4().hex}",
                                mode="replay", cassette=CASSETTES / f"{TASK}.cassette.json")
            return await run_episode(cfg, backend, policy)

    results = await asyncio.gather(*(one(i) for i in range(episodes)))
    removed = (await backend.collect({"decathlon.run": run_id}, force=True)).removed  # our own run: forced
    stop.set()
    await sampler
    await backend.close()
    return results, removed, fds[0]


def main() -> dict:
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=64)
    p.add_argument("--faults", default="none", help="none, mixed, or a fault spec (fakes/prime/faults.py)")
    p.add_argument("--concurrency", type=int, default=24, help="live sandboxes at once (the backend's cap)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--backend", choices=["prime", "local"], default="prime", help="local: the baseline")
    a = p.parse_args()
    if a.backend == "local":  # the baseline: same episodes, no control plane, no gateway
        start = time.monotonic()
        results, _, max_fds = asyncio.run(_run(LocalBackend(direct=False), a.episodes, a.concurrency))
        wall = time.monotonic() - start
        print(json.dumps({"backend": "local", "episodes": a.episodes, "scored": sum(1 for r in results
                          if not r.infra_error), "wall_s": round(wall, 2), "per_episode_ms":
                          round(1000 * wall / a.episodes, 1), "concurrency": a.concurrency}))
        return {}
    with tempfile.TemporaryDirectory(prefix="prime-scale-") as tmp, fast_sdk_rate_limits(), \
            prime_backend(Path(tmp), a.faults, max_live=a.concurrency, start_timeout=6.0, probe_timeout=1.5) as b:
        start = time.monotonic()
        results, removed, max_fds = asyncio.run(_run(b, a.episodes, a.concurrency))
        wall = time.monotonic() - start
        stats = b.fake.stats()
    infra = collections.Counter(r.infra_error["kind"] for r in results if r.infra_error)
    # Every infra error must be one of the platform's faults, by kind, and name the sandbox it hit
    # (a create that never produced one names the error the platform gave instead).
    unnamed = [r.infra_error for r in results if r.infra_error and (r.infra_error["kind"] not in PLATFORM_FAULTS or (
        "fake" not in r.infra_error["message"] and r.infra_error["kind"] != "create_failed"))]
    out = {"episodes": a.episodes, "faults": a.faults, "scored": sum(1 for r in results if not r.infra_error),
           "passed": sum(1 for r in results if r.passed), "infra": sum(infra.values()), "infra_kinds": dict(infra),
           "infra_unexplained": len(unnamed), "gc_removed": removed, "leaked": len(stats["alive"]),
           "leaked_processes": stats["alive_processes"],
           "duplicates": len(set(stats["duplicate_episodes"]) | set(stats["duplicate_keys"])),
           "sandboxes_created": stats["created"], "control_plane_requests": stats["requests"],
           "concurrency": a.concurrency, "wall_s": round(wall, 2),
           "per_episode_ms": round(1000 * wall / a.episodes, 1),
           "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
           "max_open_fds": max_fds}
    if unnamed:
        print("infra errors that name no platform fault or sandbox:", unnamed[:5], file=sys.stderr)
    print(json.dumps(out) if a.json else json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
