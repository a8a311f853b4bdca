#!/usr/bin/env python3
"""Tool-call overhead and local-backend latencies (issue: foundation).

Measures, in one run on this machine:
  1. `task-api execute` against the daemon's held session (the exec path every backend has);
  2. a cold call that starts the same MCP server for that one call (initialize, list, call, close),
     which is what a CLI without a daemon pays per tool call; and their ratio;
  3. the local backend's host → result round trip of a filesystem read (the direct socket channel);
  4. setup time per mini task, excluding its preprocess (median over repeats).
Prints a table of medians and p90s and writes them as JSON (--out).
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from decathlon.backends.local import LocalBackend  # noqa: E402
from decathlon.backends.base import SandboxSpec  # noqa: E402
from decathlon.core.task_session import TaskSession  # noqa: E402

MINI = REPO / "fixtures" / "toolathlon-mini"
LAUNCH = "2026-03-02 09:00:00"


def stats(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"n": len(s), "median_ms": round(statistics.median(s) * 1000, 2),
            "p90_ms": round(s[min(len(s) - 1, int(0.9 * len(s)))] * 1000, 2)}


async def cold_call(path: str) -> float:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    start = time.perf_counter()
    params = StdioServerParameters(command=sys.executable, args=["-m", "decathlon.standins.filesystem", str(Path(path).parent)],
                                   cwd=str(REPO))
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                await s.list_tools()
                await s.call_tool("read_file", {"path": path})
    return time.perf_counter() - start


async def main(repeats: int, cold_repeats: int, setup_repeats: int) -> dict:
    backend = LocalBackend()
    out: dict = {}
    box = await backend.acquire(SandboxSpec("bench", uuid.uuid4().hex, "csv-sales-summary", MINI))
    try:
        session = TaskSession(box)
        setup = await session.setup("csv-sales-summary", LAUNCH)
        path = f"{setup.workspace}/sales.csv"
        args = json.dumps({"path": path})
        env = {**os.environ, "TASK_API_HOME": str(box.root)}
        warm = []
        for _ in range(repeats):
            t = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox", "execute", "filesystem-read_file", args], env=env,
                                  capture_output=True, text=True, check=True)
            warm.append(time.perf_counter() - t)
            assert '"is_error": false' in proc.stdout
        out["execute_via_task_api_cli"] = stats(warm)
        direct = []
        for _ in range(repeats):
            t = time.perf_counter()
            res = await session.execute("filesystem-read_file", args)
            direct.append(time.perf_counter() - t)
            assert not res.is_error
        out["local_roundtrip_direct_socket"] = stats(direct)
        cold = [await cold_call(path) for _ in range(cold_repeats)]
        out["cold_call_start_server_per_call"] = stats(cold)
        out["ratio_cold_over_execute"] = round(out["cold_call_start_server_per_call"]["median_ms"]
                                               / out["execute_via_task_api_cli"]["median_ms"], 1)
    finally:
        await box.release()

    tasks = sorted(p.parent.name for p in (MINI / "tasks" / "finalpool").glob("*/task_config.json"))
    per_task = {}
    for task in tasks:
        samples = []
        for _ in range(setup_repeats):
            box = await backend.acquire(SandboxSpec("bench", uuid.uuid4().hex, task, MINI))
            try:
                t = time.perf_counter()
                res = await TaskSession(box).setup(task, LAUNCH)
                wall = time.perf_counter() - t
                samples.append(wall - res.timings.get("preprocess", 0.0))
            finally:
                await box.release()
        per_task[task] = stats(samples)
    out["setup_excluding_preprocess"] = per_task
    all_setup = [v["median_ms"] for v in per_task.values()]
    out["setup_excluding_preprocess_median_of_task_medians_ms"] = round(statistics.median(all_setup), 1)
    return out


def render(res: dict) -> str:
    lines = [f"{'measure':52} {'median':>10} {'p90':>10} {'n':>4}"]
    for key in ("execute_via_task_api_cli", "local_roundtrip_direct_socket", "cold_call_start_server_per_call"):
        v = res[key]
        lines.append(f"{key:52} {v['median_ms']:>8.1f}ms {v['p90_ms']:>8.1f}ms {v['n']:>4}")
    lines.append(f"{'ratio cold / execute (target >= 20x)':52} {res['ratio_cold_over_execute']:>9}x")
    for task, v in res["setup_excluding_preprocess"].items():
        lines.append(f"{'setup excl. preprocess: ' + task:52} {v['median_ms']:>8.1f}ms {v['p90_ms']:>8.1f}ms {v['n']:>4}")
    p50 = res["setup_excluding_preprocess_median_of_task_medians_ms"]
    lines.append(f"{'setup p50 over tasks (target <= 1500 ms)':52} {p50:>8.1f}ms")
    return "\n".join(lines)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--cold-repeats", type=int, default=10)
    p.add_argument("--setup-repeats", type=int, default=5)
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    result = asyncio.run(main(a.repeats, a.cold_repeats, a.setup_repeats))
    print(render(result))
    if a.out:
        a.out.write_text(json.dumps(result, indent=2))
