#!/usr/bin/env python3
"""Re-grade recorded runs with a checkout's real evaluators, and report how the verdicts agree.

    bench/rerun_report.py --source CHECKOUT --cassettes IMPORTED/cassettes [--data ../shared/data/toolathlon]
        [--backend compose|local] [--concurrency 2] [--out report.json]

Runs `decathlon run --all --mode rerun --policy replay --json` once (wall time measured), then splits
the tasks as the issue does: the "offline" set (preprocess absent or local, evaluator local, from the
data folder's task_offline.csv, read at run time), less the tasks whose files the snapshot lacks,
reported apart; and every other task whose evaluator ran. For each set: agreement on the recorded
passes and on the recorded fails, and every disagreement or infra error listed with its output, to be
explained by hand in the closing note (nothing here decides a cause).
"""
from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The tasks whose files the snapshot lacks (toolathlon-checkout.md): reported apart.
MISSING_FILES = ("arrange-workspace", "imagenet", "latex-prompt-box", "merge-hf-datasets",
                 "university-course-selection", "verl-dataset")


def offline_tasks(data: Path) -> set[str]:
    rows = csv.DictReader((data / "task_offline.csv").open(encoding="utf-8"))
    return {r["task"] for r in rows if r["offline_eval_feasible"] == "local"
            and (r["preprocess_exists"] == "no" or r["preprocess_touches"] == "none")}


def agreement(rows: list[dict]) -> dict:
    graded = [r for r in rows if r["infra_error"] is None and r["recorded_pass"] is not None]
    out = {"tasks": len(rows), "graded": len(graded), "infra_errors": sum(r["infra_error"] is not None for r in rows)}
    for verdict in (True, False):
        same = [r for r in graded if r["recorded_pass"] is verdict]
        agree = sum(r["pass"] is verdict for r in same)
        out["recorded_" + ("passes" if verdict else "fails")] = {
            "n": len(same), "agree": agree, "rate": round(agree / len(same), 3) if same else None}
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--source", required=True)
    p.add_argument("--cassettes", required=True)
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "toolathlon")
    # A rerun executes the recorded code: compose by default, like `decathlon run --mode rerun`.
    p.add_argument("--backend", default="compose")
    p.add_argument("--concurrency", default="2")
    p.add_argument("--tasks", nargs="*", help="only these (default: --all)")
    p.add_argument("--out", type=Path)
    p.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more `decathlon run` arguments")
    ns = p.parse_args()
    argv = [sys.executable, "-m", "decathlon", "run", *(ns.tasks or ["--all"]), "--source", ns.source,
            "--cassettes", ns.cassettes, "--mode", "rerun", "--policy", "replay", "--json",
            "--backend", ns.backend, "--concurrency", ns.concurrency, *ns.extra]
    began = time.monotonic()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    wall = time.monotonic() - began
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if not rows:
        print(proc.stderr[-3000:], file=sys.stderr)
        return 2
    offline = offline_tasks(ns.data)
    sets = {
        "offline": [r for r in rows if r["task"] in offline and r["task"] not in MISSING_FILES],
        "missing_files": [r for r in rows if r["task"] in MISSING_FILES],
        "other": [r for r in rows if r["task"] not in offline and r["task"] not in MISSING_FILES],
    }
    report = {"backend": ns.backend, "wall_seconds": round(wall, 1), "tasks": len(rows),
              "sets": {name: agreement(group) for name, group in sets.items()},
              "disagreements": [{"task": r["task"], "set": name, "pass": r["pass"], "recorded_pass": r["recorded_pass"],
                                 "replayed_servers": [s["name"] for s in r.get("replayed_servers") or []]}
                                for name, group in sets.items() for r in group
                                if r["infra_error"] is None and r["recorded_pass"] is not None
                                and r["pass"] is not r["recorded_pass"]],
              "infra_errors": [{"task": r["task"], "set": name, "kind": r["infra_error"]["kind"],
                                "message": r["infra_error"]["message"][:400]}
                               for name, group in sets.items() for r in group if r["infra_error"] is not None],
              "rows": rows}
    text = json.dumps(report, indent=2)
    if ns.out:
        ns.out.write_text(text)
    print(json.dumps({k: report[k] for k in ("backend", "wall_seconds", "tasks", "sets")}, indent=2))
    for d in report["disagreements"]:
        print(f"disagree {d['set']:13} {d['task']}: real {d['pass']} recorded {d['recorded_pass']} "
              f"(replayed: {', '.join(d['replayed_servers']) or '-'})")
    for e in report["infra_errors"]:
        print(f"infra    {e['set']:13} {e['task']}: {e['kind']}: {e['message'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
