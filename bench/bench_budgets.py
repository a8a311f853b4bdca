#!/usr/bin/env python3
"""The start-up budgets the test suite used to assert with a wall clock (and that failed on a loaded CI
machine for no fault of the code), measured here instead, each as the median of several tries:

1. the mail emulator, `python -m decathlon.emulators.mail`, from spawn to its ready line: target 0.3 s,
   budget 1.5 s (was tests/test_mail_service.py);
2. the Snowflake emulator, under the SaaS venv, from spawn to its ready line, which comes before fakesnow
   has loaded: budget 5 s (was tests/test_snowflake_emulator.py);
3. `decathlon image build` when the images are up to date: budget 30 s (was tests/test_compose_sandbox.py;
   skipped without a Docker engine or the images).

Prints one JSON object; exits 1 when a median is over its budget.
  bench/bench_budgets.py [--runs 5]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.sandbox.servers_config import default_servers_dir  # noqa: E402

READY_TIMEOUT = 60


def ready_seconds(argv: list[str], want: str, env: dict[str, str]) -> float:
    """Spawn to the first line (which must start with `want`), then SIGTERM; bounded by READY_TIMEOUT."""
    started = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO, env=env,
                          text=True) as proc:
        try:
            line = _line(proc)
            took = time.perf_counter() - started
            if not line.startswith(want):
                raise SystemExit(f"{argv[2]}: no ready line ({line!r})")
            return took
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def _line(proc: subprocess.Popen) -> str:
    import selectors
    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(READY_TIMEOUT):
            proc.kill()
            raise SystemExit(f"no ready line within {READY_TIMEOUT} s")
    return proc.stdout.readline()


def mail(runs: int, tmp: Path) -> list[float]:
    (tmp / "configs").mkdir()
    users = [{"id": 1, "first_name": "Wren", "last_name": "Ames", "full_name": "Wren Ames", "email": "wren@mcp.com",
              "password": "pw"}]
    (tmp / "configs" / "users_data.json").write_text(json.dumps({"domain": "mcp.com", "users": users}))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-m", "decathlon.emulators.mail", "--root", str(tmp), "--port", "imap=0", "--port", "smtp=0",
            "--port", "smtp-mx=0"]
    return [ready_seconds(argv, "ready mail ", env) for _ in range(runs)]


def snowflake(runs: int, tmp: Path) -> list[float] | str:
    python = default_servers_dir() / "saas" / "bin" / "python"
    if not python.exists():
        return f"{python} is missing (python ci/install_servers.py builds it)"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [str(python), "-m", "decathlon.emulators.snowflake", "--root", str(tmp)]
    return [ready_seconds(argv, "ready snowflake ", env) for _ in range(runs)]


def image_build(runs: int) -> list[float] | str:
    cli = [sys.executable, "-m", "decathlon", "image", "build"]
    first = subprocess.run(cli, capture_output=True, text=True, timeout=3600, cwd=REPO)
    if first.returncode != 0:
        return f"decathlon image build failed: {first.stderr.strip()[-300:]}"
    took = []
    for _ in range(runs):
        started = time.perf_counter()
        proc = subprocess.run(cli, capture_output=True, text=True, timeout=600, cwd=REPO)
        took.append(time.perf_counter() - started)
        if proc.returncode != 0 or "up to date" not in proc.stderr:
            return f"a second build was not a no-op: {proc.stderr.strip()[-300:]}"
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--no-docker", action="store_true", help="leave out the image build")
    ns = ap.parse_args()
    budgets = {"mail_ready_s": 1.5, "snowflake_ready_s": 5.0, "image_build_up_to_date_s": 30.0}
    out: dict[str, object] = {}
    over = []
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "mail").mkdir()
        (Path(tmp) / "snowflake").mkdir()
        results = {"mail_ready_s": mail(ns.runs, Path(tmp) / "mail"),
                   "snowflake_ready_s": snowflake(ns.runs, Path(tmp) / "snowflake"),
                   "image_build_up_to_date_s": "left out (--no-docker)" if ns.no_docker else image_build(ns.runs)}
    for name, value in results.items():
        if isinstance(value, str):
            out[name] = {"skipped": value}
            continue
        median = statistics.median(value)
        out[name] = {"median": round(median, 3), "min": round(min(value), 3), "max": round(max(value), 3),
                     "budget": budgets[name], "runs": len(value)}
        if median > budgets[name]:
            over.append(name)
    out["over_budget"] = over
    print(json.dumps(out, indent=1))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
