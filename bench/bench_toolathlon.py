#!/usr/bin/env python3
"""The 108 recorded Toolathlon runs, replayed (issue: all 108 tasks offline).

Measures in one run: the import (trajectories → cassettes); per-phase times of a replayed episode
(setup, execute every recorded call, evaluate, release; medians and totals over the 108); the
regression suite's wall time under `pytest -n auto`; and whole-episode throughput of
`decathlon run --all --policy replay` on the local backend (episodes/s, median of 3 runs).
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
from decathlon.backends.base import SandboxSpec  # noqa: E402
from decathlon.backends.local import LocalBackend  # noqa: E402
from decathlon.recordings.importer import import_dir  # noqa: E402
from decathlon.core.task_session import TaskSession  # noqa: E402

RUNS = Path(os.environ.get("DECATHLON_TRAJECTORIES")
            or REPO.parent / "shared" / "data" / "toolathlon" / "trajectories" / "claude-4.5-sonnet")


async def phases(source: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {"setup": [], "execute": [], "evaluate": [], "release": []}
    for tape in sorted((source / "cassettes").glob("*.cassette.json")):
        task = tape.name.split(".")[0]
        trajectory = json.loads((source / "cassettes" / f"{task}.trajectory.json").read_text())["messages"]
        results = {m.get("tool_call_id") for m in trajectory if m.get("role") == "tool"}
        calls = [c for m in trajectory if m.get("role") == "assistant" for c in m.get("tool_calls") or []
                 if c["id"] in results]
        box = await LocalBackend().acquire(SandboxSpec("bench", uuid.uuid4().hex, task, source))
        session = TaskSession(box)
        t = time.perf_counter()
        await session.setup(task, mode="replay", cassette=tape.read_bytes())
        out["setup"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for c in calls:
            await session.execute(c["function"]["name"], c["function"].get("arguments") or "")
        out["execute"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await session.evaluate(trajectory, "success")
        out["evaluate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await box.release()
        out["release"].append(time.perf_counter() - t)
    return out


def main(repeats: int, concurrency: int) -> dict:
    res: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "imported"
        t = time.perf_counter()
        report = import_dir(RUNS, source)
        res["import_s"] = round(time.perf_counter() - t, 3)
        res["tasks"] = len(report["tasks"])
        per = asyncio.run(phases(source))
        res["phases"] = {k: {"median_ms": round(statistics.median(v) * 1000, 1), "total_s": round(sum(v), 2)}
                         for k, v in per.items()}
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "pytest", "tests/test_toolathlon_suite.py", "-q", "-n", "auto"],
                              cwd=REPO, capture_output=True, text=True)
        res["suite_wall_s"] = round(time.perf_counter() - t, 1)
        res["suite_result"] = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else proc.stderr[-300:]
        rates = []
        for _ in range(repeats):
            t = time.perf_counter()
            run = subprocess.run([sys.executable, "-m", "decathlon", "run", "--all", "--source", str(source), "--policy",
                                  "replay", "--json", "--concurrency", str(concurrency)],
                                 cwd=REPO, capture_output=True, text=True)
            wall = time.perf_counter() - t
            lines = [json.loads(x) for x in run.stdout.splitlines()]
            rates.append(len(lines) / wall)
            res.setdefault("run_outcomes", []).append({"episodes": len(lines),
                                                       "reward_1": sum(r["reward"] == 1.0 for r in lines),
                                                       "infra_errors": sum(bool(r["infra_error"]) for r in lines),
                                                       "wall_s": round(wall, 1)})
        res["throughput_episodes_per_s"] = {"median": round(statistics.median(rates), 2),
                                            "runs": [round(r, 2) for r in rates], "concurrency": concurrency}
    return res


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--concurrency", type=int, default=4)
    p.add_argument("--out", type=Path)
    a = p.parse_args()
    if not RUNS.is_dir():
        sys.exit(f"no recorded runs at {RUNS}: set DECATHLON_TRAJECTORIES")
    r = main(a.repeats, a.concurrency)
    print(json.dumps(r, indent=2))
    if a.out:
        a.out.write_text(json.dumps(r, indent=2))
