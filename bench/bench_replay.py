#!/usr/bin/env python3
"""Replay server vs the real server (issue: mock MCP layer).

For the git server of the git-release-notes cassette: session start (connect + initialize + list)
and one call (git_status), in-process replay versus the real mcp-server-git over stdio, medians,
p90s and ratios from one run.
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
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.memory import create_client_server_memory_streams

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.tape.canonical import detokenize  # noqa: E402
from decathlon.sandbox.replay.server import build_server  # noqa: E402
from decathlon.sandbox.servers_config import default_servers_dir  # noqa: E402

TAPE = REPO / "fixtures" / "cassettes" / "git-release-notes.cassette.json"
MINI = REPO / "fixtures" / "toolathlon-mini"


def stats(xs: list[float]) -> dict:
    s = sorted(xs)
    return {"n": len(s), "median_ms": round(statistics.median(s) * 1000, 3),
            "p90_ms": round(s[int(0.9 * (len(s) - 1))] * 1000, 3)}


async def replay(recording: dict, ws: Path, starts: int, calls: int, args: dict) -> tuple[list[float], list[float]]:
    start_t, call_t = [], []
    for i in range(starts):
        t = time.perf_counter()
        server = build_server("git", recording, ws)
        async with create_client_server_memory_streams() as (c, s):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: server.run(s[0], s[1], server.create_initialization_options()))
                async with ClientSession(c[0], c[1]) as session:
                    await session.initialize()
                    await session.list_tools()
                    start_t.append(time.perf_counter() - t)
                    if i == 0:
                        for _ in range(calls):
                            t = time.perf_counter()
                            await session.call_tool("git_status", args)
                            call_t.append(time.perf_counter() - t)
                tg.cancel_scope.cancel()
    return start_t, call_t


async def real(ws: Path, starts: int, calls: int, args: dict) -> tuple[list[float], list[float]]:
    start_t, call_t = [], []
    params = StdioServerParameters(command=str(default_servers_dir() / "git" / "bin" / "mcp-server-git"), args=[])
    for i in range(starts):
        t = time.perf_counter()
        with open(os.devnull, "w") as devnull:
            async with stdio_client(params, errlog=devnull) as (r, w):
                async with ClientSession(r, w) as session:
                    await session.initialize()
                    await session.list_tools()
                    start_t.append(time.perf_counter() - t)
                    if i == 0:
                        for _ in range(calls):
                            t = time.perf_counter()
                            await session.call_tool("git_status", args)
                            call_t.append(time.perf_counter() - t)
    return start_t, call_t


def main(starts: int, calls: int) -> dict:
    cassette = json.loads(TAPE.read_text())
    recording = cassette["servers"]["git"]
    status = next(i for i in recording["interactions"] if i["tool"] == "git_status")
    recording = {**recording, "interactions": [status] * calls}
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        subprocess.run([sys.executable, "-m", "tasks.finalpool.git-release-notes.preprocess.main", "--agent_workspace",
                        str(ws), "--launch_time", cassette["meta"]["launch_time"]], cwd=MINI, check=True)
        args = detokenize(status["arguments"], str(ws))
        r_start, r_call = asyncio.run(replay(recording, ws, starts, calls, args))
        l_start, l_call = asyncio.run(real(ws, max(3, starts // 10), calls, args))
    out = {"replay_session_start": stats(r_start), "replay_call": stats(r_call),
           "real_session_start": stats(l_start), "real_call": stats(l_call)}
    out["ratio_session_start"] = round(out["real_session_start"]["median_ms"] / out["replay_session_start"]["median_ms"], 1)
    out["ratio_call"] = round(out["real_call"]["median_ms"] / out["replay_call"]["median_ms"], 1)
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--starts", type=int, default=100)
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    res = main(a.starts, a.calls)
    for k in ("replay_session_start", "real_session_start", "replay_call", "real_call"):
        print(f"{k:24} median {res[k]['median_ms']:9.3f} ms   p90 {res[k]['p90_ms']:9.3f} ms   n={res[k]['n']}")
    print(f"ratio real/replay: session start {res['ratio_session_start']}x (target replay <= 5 ms), "
          f"call {res['ratio_call']}x (target replay <= 1 ms)")
    if a.out:
        a.out.write_text(json.dumps(res, indent=2))
