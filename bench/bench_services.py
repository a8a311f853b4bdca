#!/usr/bin/env python3
"""The tasks' local services (issue 11): what they cost per episode.

1. service start: `python -m decathlon.emulators` for mail, canvas and woocommerce together (what setup
   waits for), from spawn to its `ready` line; and each service alone.
2. emulator requests: p50/p95 of keep-alive GETs and POSTs against Canvas and WooCommerce on loopback, and of
   IMAP SELECT and APPEND (imaplib, as emails-mcp imports a task's messages) and SMTP sends against mail.
3. episode setup of real Canvas and WooCommerce tasks, their real preprocess included (`task-api setup`
   with a private network namespace, as the local backend runs it), with TOOLATHLON_ROOT set; benchflow
   publishes 84 s (canvas-list-test) and 143 s (woocommerce-update-cover) with sidecar containers.

Needs root (a network namespace per trial, so the fixed ports never meet the host's).
  bench/bench_services.py [--runs 15] [--requests 2000] [--tasks canvas-list-test,woocommerce-update-cover]
"""
from __future__ import annotations

import argparse
import imaplib
import json
import os
import smtplib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.sandbox import netns  # noqa: E402

PACK = REPO / "fixtures" / "toolathlon-services"


def start_services(names: str, logs: Path) -> tuple[subprocess.Popen, float]:
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators", "--root", str(PACK), "--logs", str(logs),
                             "--services", names], stdout=subprocess.PIPE, cwd=REPO)
    line = proc.stdout.readline().decode()
    elapsed = time.perf_counter() - t
    if not line.startswith("ready "):
        raise SystemExit(f"services did not start: {line!r}")
    return proc, elapsed


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=10)


def bench_start(runs: int) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for names in ("mail,canvas,woocommerce", "mail", "canvas", "woocommerce"):
            times = []
            for _ in range(runs):
                proc, elapsed = start_services(names, Path(tmp))
                stop(proc)
                times.append(elapsed)
            out[names] = {"median_s": round(statistics.median(times), 4), "min_s": round(min(times), 4)}
    return out


def _percentiles(times: list[float]) -> dict:
    times = sorted(times)
    return {"p50_ms": round(times[len(times) // 2], 3), "p95_ms": round(times[int(len(times) * 0.95)], 3),
            "n": len(times)}


def _timed_call(n: int, call) -> dict:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        call()
        times.append((time.perf_counter() - t) * 1000)
    return _percentiles(times)


def _timed(client: httpx.Client, n: int, method: str, url: str, **kw) -> dict:
    def call() -> None:
        r = client.request(method, url, **kw)
        if r.status_code >= 400:
            raise SystemExit(f"{method} {url}: {r.status_code} {r.text[:200]}")
    return _timed_call(n, call)


def bench_mail(user: dict, n: int) -> dict:
    """IMAP and SMTP on the fixed ports, as the tasks' clients speak them (a 4 KB message)."""
    message = (f"From: {user['email']}\r\nTo: {user['email']}\r\nSubject: bench\r\n\r\n" + "line\r\n" * 700).encode()
    out = {}
    imap = imaplib.IMAP4("127.0.0.1", 1143, timeout=10)
    try:
        imap.login(user["email"], user["password"])
        out["mail IMAP SELECT INBOX"] = _timed_call(n, lambda: imap.select("INBOX"))
        out["mail IMAP APPEND 4 KB"] = _timed_call(n, lambda: imap.append("INBOX", "\\Seen", None, message))
    finally:
        imap.logout()
    with smtplib.SMTP("127.0.0.1", 1587, timeout=10) as smtp:
        smtp.login(user["email"], user["password"])
        out["mail SMTP send 4 KB"] = _timed_call(n, lambda: smtp.sendmail(user["email"], [user["email"]], message))
    return out


def bench_requests(n: int) -> dict:
    users = json.loads((PACK / "configs" / "users_data.json").read_text())["users"]
    u = users[0]
    with tempfile.TemporaryDirectory() as tmp:
        proc, _ = start_services("mail,canvas,woocommerce", Path(tmp))
        try:
            out = bench_mail(u, n // 10)
            with httpx.Client(timeout=10) as c:
                canvas = "http://127.0.0.1:10001/api/v1"
                admin = {"Authorization": "Bearer mcpcanvasadmintoken1"}
                course = c.post(f"{canvas}/accounts/1/courses", headers=admin,
                                json={"course": {"name": "Bench", "course_code": "B1"}}).json()
                out["canvas GET /courses/:id"] = _timed(c, n, "GET", f"{canvas}/courses/{course['id']}", headers=admin)
                out["canvas GET /accounts/1/users?per_page=10"] = _timed(
                    c, n, "GET", f"{canvas}/accounts/1/users", headers=admin, params={"per_page": 10})
                out["canvas POST /courses/:id/assignments"] = _timed(
                    c, n // 4, "POST", f"{canvas}/courses/{course['id']}/assignments", headers=admin,
                    json={"assignment": {"name": "A", "points_possible": 10}})
                woo = f"http://127.0.0.1:10003/store{u['id']}/wp-json/wc/v3"
                auth = (u["woocommerce_consumer_key"], u["woocommerce_consumer_secret"])
                for i in range(20):
                    c.post(f"{woo}/products", auth=auth, json={"name": f"P{i}", "regular_price": "1.00"})
                out["woocommerce GET /products?per_page=10"] = _timed(c, n, "GET", f"{woo}/products", auth=auth,
                                                                      params={"per_page": 10})
                out["woocommerce POST /products"] = _timed(c, n // 4, "POST", f"{woo}/products", auth=auth,
                                                           json={"name": "Q", "regular_price": "2.00"})
            return out
        finally:
            stop(proc)


def bench_setup(tasks: list[str], runs: int) -> dict:
    root = os.environ.get("TOOLATHLON_ROOT")
    if not root:
        return {"skipped": "TOOLATHLON_ROOT is not set"}
    out = {}
    for task in tasks:
        rows = []
        for _ in range(runs):
            with tempfile.TemporaryDirectory() as home:
                env = {**os.environ, "TASK_API_HOME": home, "TASK_API_PRIVATE_NETNS": "1"}
                t = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "decathlon.sandbox", "setup", task, "--source", root,
                                       "--omit-unavailable-servers"], env=env, capture_output=True, text=True,
                                      cwd=REPO, timeout=600)
                wall = time.perf_counter() - t
                subprocess.run([sys.executable, "-m", "decathlon.sandbox", "teardown"], env=env, capture_output=True,
                               cwd=REPO, timeout=120)
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            if "error" in res:
                raise SystemExit(f"{task}: {res['error']}")
            rows.append({"wall": wall, **res["timings"]})
        out[task] = {k: round(statistics.median(r.get(k, 0.0) for r in rows), 3)
                     for k in ("wall", "services_start", "preprocess", "servers", "total")}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--setup-runs", type=int, default=5)
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--tasks", default="canvas-list-test,woocommerce-update-cover")
    args = ap.parse_args()
    netns.unshare()  # this process and everything it starts: the fixed ports are ours alone
    report = {"service_start": bench_start(args.runs), "requests": bench_requests(args.requests),
              "episode_setup": bench_setup(args.tasks.split(","), args.setup_runs)}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
