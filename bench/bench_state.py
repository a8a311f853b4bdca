#!/usr/bin/env python3
"""How long snapshot and restore take per emulator (decathlon.emulators.kit.state) on a typical task's state, through
the control socket as the grader calls it (decathlon.emulators.kit.control_client): median/min/max over --runs.
Target: at most 50 ms each.

  bench/bench_state.py [--runs 7] [--only gcp,mail] [--json]

A typical task's state, made through each emulator's own API: BigQuery 2 datasets, 3 tables of 1,000 rows and a
view, 20 Storage objects; Cloud Logging 300 entries, a bucket and a sink; Snowflake a database with 3 tables of
1,000 rows; Canvas 40 users, a course with them enrolled and 5 assignments; WooCommerce 20 products and 10 orders;
mail 50 messages in one mailbox. Every wait is bounded."""
from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import smtplib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.emulators.kit import control_client as cc  # noqa: E402
from decathlon.sandbox.services import saas_python  # noqa: E402

USERS: dict[str, Any] = {"domain": "mcp.com", "users": [
    {"id": i, "first_name": f"F{i}", "last_name": f"L{i}", "full_name": f"F{i} L{i}", "email": f"u{i}@mcp.com",
     "password": f"pw{i}", "canvas_token": f"tok{i}", "woocommerce_consumer_key": f"ck_{i}",
     "woocommerce_consumer_secret": f"cs_{i}"} for i in range(1, 41)]}
LOCAL_PORTS = {"mail": ["--port", "imap=0", "--port", "smtp=0", "--port", "smtp-mx=0"],
               "canvas": ["--port", "http=0", "--port", "https=0"], "woocommerce": ["--port", "http=0"]}
SAAS = ("gcp", "gcplogging", "snowflake")

GCP = r'''
import sys
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery, storage
bq = bigquery.Client(project="bench", credentials=AnonymousCredentials())
gcs = storage.Client(project="bench", credentials=AnonymousCredentials())
for ds in ("sales", "ops"):
    bq.create_dataset(ds)
schema = [bigquery.SchemaField("id", "INTEGER"), bigquery.SchemaField("name", "STRING"),
          bigquery.SchemaField("amount", "FLOAT"), bigquery.SchemaField("at", "TIMESTAMP")]
for t in ("sales.orders", "sales.refunds", "ops.events"):
    bq.create_table(bigquery.Table(f"bench.{t}", schema=schema))
    rows = [{"id": i, "name": f"n{i}", "amount": i * 1.5, "at": "2025-01-01T00:00:00Z"} for i in range(1000)]
    assert not bq.insert_rows_json(f"bench.{t}", rows)
bq.query("CREATE VIEW sales.big AS SELECT id FROM sales.orders WHERE amount > 100").result()
bucket = gcs.create_bucket("bench-bucket")
for i in range(20):
    bucket.blob(f"exports/part-{i:03d}.csv").upload_from_string("id,name\n" + "".join(f"{j},n{j}\n" for j in range(200)))
'''
LOGGING = r'''
import os
import grpc
from google.cloud.logging_v2.services.config_service_v2 import ConfigServiceV2Client
from google.cloud.logging_v2.services.config_service_v2.transports import ConfigServiceV2GrpcTransport
from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport
from google.cloud.logging_v2.types import LogBucket, LogEntry, LogSink
ADDR = os.environ["GL_ADDR"]
config = ConfigServiceV2Client(transport=ConfigServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
logs = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
P = "projects/bench"
config.create_bucket(request={"parent": f"{P}/locations/global", "bucket_id": "audit", "bucket": LogBucket(retention_days=10)})
config.create_sink(request={"parent": P, "sink": LogSink(name="s", destination=f"logging.googleapis.com/{P}/locations/"
                            "global/buckets/audit", filter="severity>=ERROR")})
entries = [LogEntry(log_name=f"{P}/logs/app", resource={"type": "global"}, severity="ERROR" if i % 10 == 0 else "INFO",
                    json_payload={"i": i, "msg": f"request {i} served"}, labels={"svc": "api"}) for i in range(300)]
logs.write_log_entries(entries=entries)
'''
SNOWFLAKE = r'''
import os
import snowflake.connector
c = snowflake.connector.connect(host="127.0.0.1", port=int(os.environ["SF_PORT"]), protocol="http", account="a",
                                user="u", password="p")
cur = c.cursor()
cur.execute("CREATE DATABASE BENCH")
for t in ("ORDERS", "CUSTOMERS", "ITEMS"):
    cur.execute(f"CREATE TABLE BENCH.PUBLIC.{t} (ID INT, NAME VARCHAR, AMT NUMBER(10,2), TS TIMESTAMP_NTZ)")
    values = ", ".join(f"({i}, 'n{i}', {i}.25, '2025-01-01 00:00:00')" for i in range(1000))
    cur.execute(f"INSERT INTO BENCH.PUBLIC.{t} VALUES {values}")
'''


def _ready(proc: subprocess.Popen, timeout: float) -> dict[str, int]:
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], timeout)
    line = proc.stdout.readline().decode() if readable else ""
    if not line.startswith("ready "):
        proc.kill()
        raise SystemExit(f"bench_state: no ready line within {timeout:.0f} s (got {line!r})")
    return json.loads(line.split(" ", 2)[2])


def _saas(code: str, env: dict[str, str]) -> None:
    done = subprocess.run([saas_python(), "-c", code], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **env})
    if done.returncode:
        raise SystemExit(f"bench_state: filling failed: {done.stderr[-1500:]}")


def fill(name: str, ports: dict[str, int]) -> None:
    if name == "gcp":
        url = f"http://127.0.0.1:{ports['http']}"
        _saas(GCP, {"BIGQUERY_EMULATOR_HOST": url, "STORAGE_EMULATOR_HOST": url})
    elif name == "gcplogging":
        _saas(LOGGING, {"GL_ADDR": f"127.0.0.1:{ports['grpc']}"})
    elif name == "snowflake":
        _saas(SNOWFLAKE, {"SF_PORT": str(ports["http"])})
    elif name == "canvas":
        base, h = f"http://127.0.0.1:{ports['http']}/api/v1", {"Authorization": "Bearer mcpcanvasadmintoken1"}
        course = requests.post(f"{base}/accounts/1/courses", headers=h, json={"course": {"name": "Bench"}}, timeout=30).json()
        for u in USERS["users"]:
            requests.post(f"{base}/courses/{course['id']}/enrollments", headers=h, timeout=30, json={"enrollment": {
                "user_id": u["id"] + 33, "type": "StudentEnrollment", "enrollment_state": "active"}}).raise_for_status()
        for i in range(5):
            requests.post(f"{base}/courses/{course['id']}/assignments", headers=h, timeout=30, json={"assignment": {
                "name": f"HW{i}", "points_possible": 10, "published": True}}).raise_for_status()
    elif name == "woocommerce":
        base, auth = f"http://127.0.0.1:{ports['http']}/store1/wp-json/wc/v3", ("ck_1", "cs_1")
        ids = [requests.post(f"{base}/products", auth=auth, timeout=30, json={"name": f"P{i}", "regular_price": f"{i}.50"}
                             ).json()["id"] for i in range(20)]
        for i in range(10):
            requests.post(f"{base}/orders", auth=auth, timeout=30, json={"status": "processing", "line_items": [
                {"product_id": ids[i], "quantity": 2}]}).raise_for_status()
    elif name == "mail":
        with smtplib.SMTP("127.0.0.1", ports["smtp"], timeout=30) as s:
            s.login("u1@mcp.com", "pw1")
            for i in range(50):
                s.sendmail("u1@mcp.com", ["u2@mcp.com"], f"From: u1@mcp.com\r\nTo: u2@mcp.com\r\nSubject: m{i}\r\n\r\n"
                           + "line of text\r\n" * 40)


def bench(name: str, runs: int, work: Path) -> dict[str, Any]:
    root = work / name
    (root / "configs").mkdir(parents=True)
    (root / "configs" / "users_data.json").write_text(json.dumps(USERS))
    sock = work / "control" / f"{name}.sock"
    python = saas_python() if name in SAAS else sys.executable
    proc = subprocess.Popen([python, "-m", f"decathlon.emulators.{name}", "--root", str(root), "--control", str(sock),
                             *LOCAL_PORTS.get(name, [])], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        ports = _ready(proc, 60)
        fill(name, ports)
        cc.snapshot(sock, f"{name}-warm")  # the first pays its imports (pyarrow): not what a task's steps pay
        cc.restore(sock, f"{name}-warm")
        snap, rest = [], []
        for i in range(runs):
            t0 = time.perf_counter()
            cc.snapshot(sock, f"{name}-{i}")
            snap.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            cc.restore(sock, f"{name}-{i}")
            rest.append((time.perf_counter() - t0) * 1000)
        size = sum(p.stat().st_size for p in (work / "control" / f"{name}-0").rglob("*") if p.is_file())
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
    return {"emulator": name, "snapshot_ms": _stats(snap), "restore_ms": _stats(rest), "snapshot_bytes": size}


def _stats(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default="gcp,gcplogging,snowflake,canvas,woocommerce,mail")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-state-"))
    try:
        results = [bench(n.strip(), args.runs, work) for n in args.only.split(",") if n.strip()]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(f"{'emulator':<12} {'snapshot ms (median min max)':<30} {'restore ms (median min max)':<30} bytes")
        for r in results:
            s, t = r["snapshot_ms"], r["restore_ms"]
            print(f"{r['emulator']:<12} {s['median']:>8} {s['min']:>8} {s['max']:>8}       "
                  f"{t['median']:>8} {t['min']:>8} {t['max']:>8}       {r['snapshot_bytes']}")
    over = [r["emulator"] for r in results if max(r["snapshot_ms"]["median"], r["restore_ms"]["median"]) > 50]
    if over:
        print(f"over the 50 ms target: {', '.join(over)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
