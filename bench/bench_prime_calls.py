"""Per-tool-call overhead: the prime backend against the fake control plane (latency 0) next to the local
backend, on one sandbox each, the same cheap tool call repeated.

    .venv/bin/python bench/bench_prime_calls.py [--calls 50]

The prime path is `execute_command` → gateway (Connect-RPC) → `task-api execute` → the episode daemon;
local's default path talks to the daemon's socket directly, its exec path runs `task-api execute`.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conformance.prime import backend as prime_backend  # noqa: E402
from decathlon.backends.base import SandboxSpec  # noqa: E402
from decathlon.backends.local import LocalBackend  # noqa: E402
from decathlon.core.task_session import TaskSession  # noqa: E402

MINI = REPO / "fixtures" / "toolathlon-mini"
TASK = "csv-sales-summary"


async def _calls(backend, n: int) -> list[float]:
    box = await backend.acquire(SandboxSpec("bench", uuid.uuid4().hex, TASK, MINI))
    try:
        session = TaskSession(box)
        setup = await session.setup(TASK, "2026-03-02 09:00:00")
        args = json.dumps({"path": setup.workspace})
        await session.execute("filesystem-list_directory", args)  # warm
        times = []
        for _ in range(n):
            start = time.perf_counter()
            res = await session.execute("filesystem-list_directory", args)
            times.append((time.perf_counter() - start) * 1000)
            assert not res.is_error, res.content
        await session.teardown()
        return times
    finally:
        await box.release()
        await backend.close()


def main() -> dict:
    p = argparse.ArgumentParser()
    p.add_argument("--calls", type=int, default=50)
    a = p.parse_args()
    out: dict = {"calls": a.calls}
    for name, b in (("local_direct", LocalBackend()), ("local_exec", LocalBackend(direct=False))):
        out[name + "_ms"] = round(statistics.median(asyncio.run(_calls(b, a.calls))), 2)
    with tempfile.TemporaryDirectory() as tmp, prime_backend(Path(tmp)) as b:
        out["prime_fake_ms"] = round(statistics.median(asyncio.run(_calls(b, a.calls))), 2)
    out["ratio_vs_local_direct"] = round(out["prime_fake_ms"] / out["local_direct_ms"], 1)
    out["ratio_vs_local_exec"] = round(out["prime_fake_ms"] / out["local_exec_ms"], 2)
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
