#!/usr/bin/env python3
"""How fast each emulator of the registry (decathlon.emulators.registry) starts: spawn `python -m
decathlon.emulators.<name> --root ROOT` → its `ready <name> …` line, median/min/max over --runs, each run a new
process (the interpreter's own start included, as the supervisor and the front pay it).

  bench/bench_emulators.py [--runs 7] [--timeout 30] [--json]

Front vendors run on the saas venv (DECATHLON_SAAS_PYTHON, else .servers/saas), the episode services on this
interpreter, as an episode runs them. Every wait is bounded; a process that does not say ready is killed and the
bench exits 1 naming it."""
from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.emulators import registry  # noqa: E402
from decathlon.sandbox.services import saas_python  # noqa: E402

USERS = {"domain": "mcp.com", "users": [{"id": 1, "first_name": "A", "last_name": "B", "email": "ab@mcp.com",
                                          "password": "pw", "canvas_token": "t1", "woocommerce_consumer_key": "ck_1",
                                          "woocommerce_consumer_secret": "cs_1"}]}


def start_once(name: str, python: str, root: Path, timeout: float) -> float:
    args = [python, "-m", f"decathlon.emulators.{name}", "--root", str(root)]
    if name in ("mail", "canvas", "woocommerce"):  # their fixed ports would collide with a running episode's
        args += {"mail": ["--port", "imap=0", "--port", "smtp=0", "--port", "smtp-mx=0"],
                 "canvas": ["--port", "http=0", "--port", "https=0"], "woocommerce": ["--port", "http=0"]}[name]
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=root,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], timeout)
        line = proc.stdout.readline().decode() if ready else ""
        elapsed = time.perf_counter() - t0
        if not line.startswith(f"ready {name} "):
            raise RuntimeError(f"{name} said {line.strip()!r} instead of its ready line within {timeout:.0f} s")
        return elapsed
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "configs").mkdir()
        (root / "configs" / "users_data.json").write_text(json.dumps(USERS))
        for vendor in registry.vendors():
            python = saas_python() if vendor.reach == "front" else sys.executable
            try:
                start_once(vendor.name, python, root, a.timeout)  # warm the file cache once
                times = [start_once(vendor.name, python, root, a.timeout) for _ in range(a.runs)]
            except (RuntimeError, OSError) as exc:
                print(f"bench_emulators: {exc}", file=sys.stderr)
                return 1
            results[vendor.name] = {"median_s": round(statistics.median(times), 3), "min_s": round(min(times), 3),
                                    "max_s": round(max(times), 3), "runs": a.runs}
    if a.json:
        print(json.dumps(results, indent=2))
    else:
        for name, r in results.items():
            print(f"{name:12} start → ready: median {r['median_s']:.3f} s (min {r['min_s']:.3f}, max {r['max_s']:.3f}, "
                  f"{r['runs']} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
