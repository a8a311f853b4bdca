#!/usr/bin/env python3
"""Issue 10's numbers on a real checkout, measured in one run.

  bench/bench_checkout.py --source CHECKOUT [--image decathlon-checkout:TAG] [--episodes 7] [--spawns 7]

1. Setup of real-checkout tasks that have no preprocess (acquire + `task-api setup`, fresh sandbox
   each): local backend, and compose with the checkout image when --image is given.
2. Starting one server per episode, two ways, interleaved: ours (the catalogue's virtualenv entry
   point, spawned by the daemon's MCP client) against Toolathlon's `uvx`-style launch of the same
   package (uv's tool runner, cache warm, --offline), each to an answered tools/list.
   (`uv run` needs the checkout's own project environment, which requires Python ==3.12.11: not
   measured.)
Prints medians and the ratio; the task environment comes from DECATHLON_TASK_PYTHON.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# No preprocess, and every server live: excel, filesystem, terminal, pdf-tools, memory, fetch, pptx.
TASKS = ("excel-market-research", "detect-revised-terms", "course-schedule", "ppt-analysis")
LAUNCH = "2026-03-02 09:00:00"
PACKAGE, VERSION, ENTRY = "excel-mcp-server", "0.1.4", "excel-mcp-server"
# The checkout's pins for its dependencies too (0.1.4 does not start on a newer mcp): the same set ours has.
PINS = REPO / "ci" / "servers" / "excel.txt"


async def setups(backend_name: str, source: Path, episodes: int) -> list[float]:
    from decathlon.backends import make_backend
    from decathlon.backends.base import SandboxSpec
    from decathlon.core.task_session import TaskSession
    backend = make_backend(backend_name)
    out = []
    try:
        for i in range(episodes):
            task = TASKS[i % len(TASKS)]
            t = time.monotonic()
            box = await backend.acquire(SandboxSpec("bench-" + uuid.uuid4().hex[:6], uuid.uuid4().hex, task, source))
            try:
                await TaskSession(box).setup(task, LAUNCH)
                out.append(time.monotonic() - t)
            finally:
                await box.release()
    finally:
        close = getattr(backend, "close", None)
        if close:
            close()
    return out


async def spawn_once(command: str, args: list[str], cwd: str) -> float:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    t = time.monotonic()
    params = StdioServerParameters(command=command, args=args, cwd=cwd, env={**os.environ})
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
    return time.monotonic() - t


def uv_binary(work: Path) -> Path:
    """uv from PyPI (the `uv` wheel ships the binary), and a warm cache for the package."""
    env = work / "uv-venv"
    if not (env / "bin" / "uv").exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        subprocess.run([str(env / "bin" / "pip"), "install", "--quiet", "uv==0.9.9"], check=True)
    return env / "bin" / "uv"


async def spawns(n: int) -> dict[str, list[float]]:
    from decathlon.sandbox.servers_config import default_servers_dir
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        uv = uv_binary(Path(os.environ.get("BENCH_UV_DIR", tmp)))
        uvx_env = {**os.environ, "UV_CACHE_DIR": str(work / "uv-cache"), "UV_TOOL_DIR": str(work / "uv-tools")}
        pinned = ["--from", f"{PACKAGE}=={VERSION}", "--with-requirements", str(PINS)]
        warm = [str(uv), "tool", "run", *pinned, ENTRY, "--help"]
        subprocess.run(warm, env=uvx_env, capture_output=True, timeout=600)  # online once: fills the cache
        os.environ.update(uvx_env)
        ours = (str(default_servers_dir() / "excel" / "bin" / ENTRY), ["stdio"])
        theirs = (str(uv), ["tool", "run", "--offline", *pinned, ENTRY, "stdio"])
        out: dict[str, list[float]] = {"ours": [], "uvx": []}
        for _ in range(n):  # interleaved: both see the same machine load
            out["ours"].append(await spawn_once(*ours, cwd=tmp))
            out["uvx"].append(await spawn_once(*theirs, cwd=tmp))
        return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True, type=Path)
    p.add_argument("--image", help="the checkout image, for the compose row")
    p.add_argument("--episodes", type=int, default=7)
    p.add_argument("--spawns", type=int, default=7)
    ns = p.parse_args()
    report: dict = {}
    report["local_setup_s"] = asyncio.run(setups("local", ns.source.resolve(), ns.episodes))
    if ns.image:
        os.environ["DECATHLON_IMAGE"] = ns.image
        report["compose_setup_s"] = asyncio.run(setups("compose", ns.source.resolve(), ns.episodes))
    report["spawn_s"] = asyncio.run(spawns(ns.spawns))
    med = {k: round(statistics.median(v), 3) for k, v in report.items() if isinstance(v, list)}
    med.update({f"spawn_{k}": round(statistics.median(v), 3) for k, v in report["spawn_s"].items()})
    med["spawn_ratio_uvx_over_ours"] = round(med["spawn_uvx"] / med["spawn_ours"], 2)
    print(json.dumps({"medians": med, "samples": report}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
