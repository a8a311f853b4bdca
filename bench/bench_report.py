#!/usr/bin/env python3
"""`decathlon report` over 1,000 episodes (issue 12: target under 2 s).

Writes a run folder of 100 tasks × 10 repeats (result.json files shaped as `decathlon run --repeats 10
--out` writes them, with a pseudo-random but seeded mix of passes, turn caps and infra errors), then
times, N times each: the numbers in-process (`build_report`), and the whole command as a user runs it
(`decathlon report DIR --json`, a new process). Prints medians and p90s.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.reports.report import build_report  # noqa: E402


def write_run(folder: Path, tasks: int, repeats: int) -> int:
    rng = random.Random("bench-report")
    info = {"run_id": "bench", "source": "/bench/pack", "source_name": "pack", "policy": "openai:bench",
            "backend": "local", "mode": "live"}
    (folder / "run.json").write_text(json.dumps({**info, "repeats": repeats}), encoding="utf-8")
    n = 0
    for t in range(tasks):
        skill = rng.random()
        for r in range(1, repeats + 1):
            infra = rng.random() < 0.03
            passed = None if infra or rng.random() < 0.05 else rng.random() < skill
            row = {"task": f"task-{t:03d}", "repeat": r, "reward": 1.0 if passed else 0.0, "pass": passed,
                   "metrics": {"found": round(rng.random(), 3)},
                   "infra_error": {"kind": "preprocess_failed", "message": "x", "phase": "setup"} if infra else None,
                   "failure": None, "turns": rng.randint(3, 60), "tool_calls": rng.randint(2, 90),
                   "status": "success", "run": info, "started": 1.0, "finished": 2.0,
                   "timings": {p: round(rng.uniform(0.01, 30), 4) for p in ("acquire", "setup", "agent", "evaluate",
                                                                           "release")}}
            sub = folder / row["task"] / f"repeat-{r}"
            sub.mkdir(parents=True)
            (sub / "result.json").write_text(json.dumps(row, indent=2), encoding="utf-8")
            n += 1
    return n


def stats(xs: list[float]) -> dict:
    s = sorted(xs)
    return {"n": len(s), "median_s": round(statistics.median(s), 4), "p90_s": round(s[int(0.9 * (len(s) - 1))], 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("-n", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "run"
        folder.mkdir()
        episodes = write_run(folder, args.tasks, args.repeats)
        inproc, cli = [], []
        for _ in range(args.n):
            t0 = time.perf_counter()
            rep = build_report([folder])
            inproc.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "decathlon", "report", str(folder), "--json"], check=True,
                           stdout=subprocess.DEVNULL, cwd=REPO)
            cli.append(time.perf_counter() - t0)
        run = rep["runs"][0]
        out = {"episodes": episodes, "pass@1": run["pass@1"]["mean"], "k": run["k"],
               "build_report": stats(inproc), "cli_report_json": stats(cli), "target_s": 2.0}
    print(f"{episodes} episodes: build_report median {out['build_report']['median_s']:.3f} s, "
          f"`decathlon report --json` median {out['cli_report_json']['median_s']:.3f} s (target < 2 s)")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
