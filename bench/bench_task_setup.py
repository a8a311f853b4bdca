#!/usr/bin/env python3
"""A task's setup on the local backend, as `decathlon run` times it: the whole setup (the episode's services and
emulators, its real preprocess, the agent's servers) and each part, medians over --runs episodes of the null policy
(which ends at once, so what is left is setup and grading). Needs root (the local backend's network namespaces) and,
for a checkout's task, DECATHLON_TASK_PYTHON.

  bench/bench_task_setup.py set-conf-cr-ddl --source CHECKOUT [--runs 5] [--json]

Every run is bounded (--timeout seconds)."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PARTS = ("setup", "services", "preprocess", "servers", "preflight", "evaluate")


def one(task: str, source: str, timeout: float) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-m", "decathlon", "run", task, "--source", source, "--backend", "local",
                           "--policy", "null", "--json"], cwd=REPO, capture_output=True, text=True, timeout=timeout)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if len(rows) != 1 or rows[0].get("infra_error"):
        raise SystemExit(f"the run failed: {rows or proc.stderr[-2000:]}")
    return {k: float(rows[0]["timings"].get(k, 0.0)) for k in PARTS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("task")
    ap.add_argument("--source", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--json", action="store_true")
    ns = ap.parse_args()
    runs = []
    for i in range(ns.runs):
        runs.append(one(ns.task, ns.source, ns.timeout))
        print(f"run {i + 1}/{ns.runs}: setup {runs[-1]['setup']:.2f} s", file=sys.stderr, flush=True)
    result = {f"{k}_s_median": round(statistics.median(r[k] for r in runs), 2) for k in PARTS}
    result.update(setup_s_min=round(min(r["setup"] for r in runs), 2), setup_s_max=round(max(r["setup"] for r in runs), 2),
                  runs=ns.runs, task=ns.task)
    if ns.json:
        print(json.dumps(result, sort_keys=True))
    else:
        for k, v in result.items():
            print(f"{k:<24} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
