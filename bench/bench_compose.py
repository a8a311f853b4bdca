#!/usr/bin/env python3
"""The compose backend's latencies (issue 5), on this machine:

  1. episode setup on a fresh container: acquire (container start + source copy) + `task-api setup`;
  2. the same from the warm pool (a container started ahead, the pool refilled between episodes);
  3. host → result round trip of a tool call (a filesystem read) through docker exec (`task-api
     execute`) and through the direct channel (the daemon's socket in a bind-mounted folder), in the
     same containers, interleaved;
  4. 8 episodes in parallel (oracle policy, every one must score 1.0 without an infra error), without
     and with a warm pool;
  5. the sandbox image's size.
Prints medians and p90s and writes them as JSON (--out). Needs the engine and the image
(`decathlon image build`).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from decathlon.backends.base import SandboxSpec  # noqa: E402
from decathlon.backends.compose import ComposeBackend  # noqa: E402
from decathlon.core.episode import EpisodeConfig, run_episode  # noqa: E402
from decathlon.core.policies import OraclePolicy  # noqa: E402
from decathlon.core.task_session import TaskSession  # noqa: E402

MINI = REPO / "fixtures" / "toolathlon-mini"
LAUNCH = "2026-03-02 09:00:00"
TASK = "csv-sales-summary"  # no preprocess: setup is the backend's and task-api's own cost


def stats(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"n": len(s), "median_ms": round(statistics.median(s) * 1000, 1),
            "p90_ms": round(s[min(len(s) - 1, int(0.9 * len(s)))] * 1000, 1)}


async def _ready(backend: ComposeBackend, want: int, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if backend.pool_ready() >= want:
            return
        await asyncio.sleep(0.1)
    raise SystemExit("the warm pool did not fill in time")


async def setups_and_calls(backend: ComposeBackend, episodes: int, calls: int, pooled: bool) -> dict:
    acquire, setup, total, exec_rt, direct_rt = [], [], [], [], []
    run = "bench-" + uuid.uuid4().hex[:6]
    if pooled:  # the pool starts with its run's first acquire; this one is not counted
        await (await backend.acquire(SandboxSpec(run, uuid.uuid4().hex, TASK, MINI))).release()
    for _ in range(episodes):
        if pooled:
            await _ready(backend, 1)
        t0 = time.perf_counter()
        box = await backend.acquire(SandboxSpec(run, uuid.uuid4().hex, TASK, MINI))
        t1 = time.perf_counter()
        try:
            s = TaskSession(box)
            ws = (await s.setup(TASK, LAUNCH)).workspace
            t2 = time.perf_counter()
            acquire.append(t1 - t0)
            setup.append(t2 - t1)
            total.append(t2 - t0)
            args = json.dumps({"path": f"{ws}/sales.csv"})
            for i in range(2 * calls):
                box.use_direct = i % 2 == 1
                c0 = time.perf_counter()
                res = await s.execute("filesystem-read_file", args)
                (direct_rt if box.use_direct else exec_rt).append(time.perf_counter() - c0)
                assert not res.is_error, res.content
        finally:
            await box.release()
    await backend.close()
    out = {"acquire": stats(acquire), "setup": stats(setup),
           "episode_setup_" + ("warm_pool" if pooled else "fresh_container"): stats(total)}
    if not pooled:
        out["tool_call_exec_round_trip"] = stats(exec_rt)
        out["tool_call_direct_round_trip"] = stats(direct_rt)
        if not box.channel:
            out["note"] = "no direct channel here: both rows are the exec path"
    return out


async def parallel(backend: ComposeBackend, n: int) -> dict:
    tasks = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))
    picks = [tasks[i % len(tasks)] for i in range(n)]
    run = "bench-par-" + uuid.uuid4().hex[:6]
    t0 = time.perf_counter()
    results = await asyncio.gather(*(run_episode(EpisodeConfig(task=t, source=MINI, run_id=run,
                                                               episode_id=uuid.uuid4().hex, launch_time=LAUNCH),
                                                 backend, OraclePolicy(MINI)) for t in picks))
    wall = time.perf_counter() - t0
    await backend.close()
    bad = [(r.task, r.reward, r.infra_error) for r in results if r.reward != 1.0 or r.infra_error]
    return {"episodes": n, "wall_s": round(wall, 2), "failures": bad}


def image_size(tag: str) -> int:
    out = subprocess.run(["docker", "image", "inspect", "--format", "{{.Size}}", tag], capture_output=True, text=True)
    return int(out.stdout.strip() or 0)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--episodes", type=int, default=8)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--parallel", type=int, default=8)
    p.add_argument("--pool", type=int, default=2, help="warm pool size for the pooled rows")
    p.add_argument("--out", type=Path)
    ns = p.parse_args()
    backend = ComposeBackend.from_env()
    pooled = ComposeBackend.from_env()
    pooled.pool_size = ns.pool
    report = asyncio.run(setups_and_calls(backend, ns.episodes, ns.calls, pooled=False))
    report.update({f"pool_{k}": v for k, v in asyncio.run(setups_and_calls(pooled, ns.episodes, 0, pooled=True)).items()})
    report["parallel"] = asyncio.run(parallel(backend, ns.parallel))
    report["parallel_with_pool"] = asyncio.run(parallel(pooled, ns.parallel))
    report["image"] = {"tag": backend.image, "size_mb": round(image_size(backend.image) / 1e6, 1)}
    for key, val in report.items():
        print(f"{key:32} {val}")
    if ns.out:
        ns.out.write_text(json.dumps(report, indent=2))
    return 1 if report["parallel"]["failures"] or report["parallel_with_pool"]["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
