#!/usr/bin/env python3
"""What a hardening round costs (issues 13 and 21): setup time and the direct channel's tool-call round
trip, before and after, measured in one run.

  bench/bench_hardening.py --before DIR [--before-image TAG] [--rounds 4] [--out FILE]

DIR is a checkout of the code before the change (e.g. `git worktree add DIR <commit>`), TAG the sandbox
image built from it. Rounds alternate before/after (ABAB…), each a fresh child process that imports one
tree's code (PYTHONPATH) and drives one tree's image, so both see the same machine load. Per round and
backend (local, compose): episode setups of the mini pack's csv-sales-summary (fresh sandbox each:
acquire + `task-api setup`) and filesystem reads through the direct channel. Prints medians of all
samples per side and the after/before ratios.
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
TASK = "csv-sales-summary"
LAUNCH = "2026-03-02 09:00:00"


async def _measure(backend_name: str, episodes: int, calls: int) -> dict:
    # Imported here: the child's PYTHONPATH decides whose code this is.
    from decathlon.backends import make_backend
    from decathlon.backends.base import SandboxSpec
    from decathlon.core.task_session import TaskSession
    mini = Path(os.environ["BENCH_TREE"]) / "fixtures" / "toolathlon-mini"
    backend = make_backend(backend_name)
    setup, direct = [], []
    for _ in range(episodes):
        t = time.monotonic()
        box = await backend.acquire(SandboxSpec("bench-" + uuid.uuid4().hex[:6], uuid.uuid4().hex, TASK, mini))
        try:
            s = TaskSession(box)
            st = await s.setup(TASK, LAUNCH)
            setup.append(time.monotonic() - t)
            args = json.dumps({"path": f"{st.workspace}/sales.csv"})
            await s.execute("filesystem-read_file", args)  # the first call warms the channel
            for _ in range(calls):
                t = time.monotonic()
                res = await s.execute("filesystem-read_file", args)
                direct.append(time.monotonic() - t)
                assert not res.is_error, res
        finally:
            await box.release()
    close = getattr(backend, "close", None)
    if close:
        close()
    return {"setup": setup, "direct": direct}


def child(ns: argparse.Namespace) -> int:
    print(json.dumps(asyncio.run(_measure(ns.backend, ns.episodes, ns.calls))))
    return 0


def _round(tree: Path, image: str | None, backend: str, episodes: int, calls: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "BENCH_TREE": str(tree),
           "DECATHLON_SERVERS_DIR": str(REPO / ".servers")}
    if image:
        env["DECATHLON_IMAGE"] = image
    proc = subprocess.run([sys.executable, __file__, "--child", "--backend", backend, "--episodes", str(episodes),
                           "--calls", str(calls)], cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise SystemExit(f"measuring {tree} on {backend} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--before", type=Path, help="a checkout of the code before the change")
    p.add_argument("--before-image", help="the sandbox image built from it (compose rows)")
    p.add_argument("--after-image", help="default: this tree's content-addressed tag")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--episodes", type=int, default=3)
    p.add_argument("--calls", type=int, default=20)
    p.add_argument("--backends", default="local,compose")
    p.add_argument("--out", type=Path)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--backend", help=argparse.SUPPRESS)
    ns = p.parse_args()
    if ns.child:
        return child(ns)
    if ns.before is None:
        p.error("--before DIR is required")
    sides = {"before": (ns.before.resolve(), ns.before_image), "after": (REPO, ns.after_image)}
    samples: dict = {}
    for backend in ns.backends.split(","):
        for r in range(ns.rounds):
            for side in (("before", "after") if r % 2 == 0 else ("after", "before")):
                tree, image = sides[side]
                got = _round(tree, image, backend, ns.episodes, ns.calls)
                for metric, values in got.items():
                    samples.setdefault(f"{backend} {metric}", {}).setdefault(side, []).extend(values)
                print(f"[bench] {backend} round {r + 1} {side}: setup median "
                      f"{statistics.median(got['setup']) * 1000:.0f} ms, direct median "
                      f"{statistics.median(got['direct']) * 1000:.2f} ms", file=sys.stderr, flush=True)
    report = {}
    print(f"{'row':<16} {'before (median)':>16} {'after (median)':>16} {'after/before':>13}")
    for row, sides_ in sorted(samples.items()):
        b, a = statistics.median(sides_["before"]) * 1000, statistics.median(sides_["after"]) * 1000
        report[row] = {"before_ms": round(b, 2), "after_ms": round(a, 2), "ratio": round(a / b, 3),
                       "n": len(sides_["after"])}
        print(f"{row:<16} {b:>13.2f} ms {a:>13.2f} ms {a / b:>13.3f}")
    if ns.out:
        ns.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
