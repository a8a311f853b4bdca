#!/usr/bin/env python3
"""The Snowflake emulator's costs, through the real connector (snowflake-connector-python 3.16, key-pair auth).

  bench/bench_snowflake_emulator.py [--starts 7] [--connects 15] [--queries 200]

1. start → ready line, and start → first query answered (fakesnow loads after the ready line);
2. connect (login) time;
3. `SELECT 1` p50/p90 through the connector on one connection;
4. RSS of the emulator after a load the size of the four Snowflake tasks' preprocesses (4 databases, 10 tables,
   ~2.1k rows in 100-row INSERTs, PK/FK/UNIQUE/AUTOINCREMENT DDL), and after the same again ×10.
Prints medians. Runs the emulator and the client under the SaaS venv (DECATHLON_SERVERS_DIR or .servers/saas).
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
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAAS = Path(os.environ.get("DECATHLON_SERVERS_DIR") or REPO / ".servers") / "saas" / "bin" / "python"

CLIENT = textwrap.dedent('''
    import json, os, statistics, sys, time
    t0 = time.monotonic()
    import snowflake.connector
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    der = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    port, connects, queries, scale = (int(a) for a in sys.argv[1:5])
    def connect():
        return snowflake.connector.connect(account="decathlon", user="AGENT", private_key=der, role="ACCOUNTADMIN",
                                           warehouse="COMPUTE_WH", database="SNOWFLAKE", schema="PUBLIC",
                                           host="127.0.0.1", port=port, protocol="http")
    out = {"connect": [], "select1": []}
    for _ in range(connects):
        t = time.monotonic(); c = connect(); out["connect"].append(time.monotonic() - t); c.close()
    c = connect()
    cur = c.cursor()
    for _ in range(queries):
        t = time.monotonic(); cur.execute("SELECT 1"); cur.fetchall(); out["select1"].append(time.monotonic() - t)
    t = time.monotonic()
    for n in range(scale):
        for db, tables in (("LOAD_A", 7), ("LOAD_B", 2), ("LOAD_C", 2), ("LOAD_D", 2)):
            name = f"{db}_{n}"
            cur.execute(f"CREATE OR REPLACE DATABASE {name}")
            for i in range(tables):
                cur.execute(f"""CREATE TABLE {name}.PUBLIC.T{i} (ID INTEGER AUTOINCREMENT PRIMARY KEY,
                    CODE VARCHAR(100) UNIQUE, NAME VARCHAR(500) NOT NULL, AMOUNT DECIMAL(15,2), DAY DATE,
                    CREATED_AT TIMESTAMP DEFAULT CURRENT_TIMESTAMP(), PARENT INTEGER REFERENCES {name}.PUBLIC.T0(ID))""")
            rows = 1000 if db == "LOAD_B" else 40
            for i in range(tables):
                for start in range(0, rows, 100):
                    values = ", ".join(f"('c{i}-{k}', 'name {k} with some text', {k * 3.5:.2f}, '2024-01-{k % 28 + 1:02d}', 1)"
                                       for k in range(start, min(start + 100, rows)))
                    cur.execute(f"INSERT INTO {name}.PUBLIC.T{i} (CODE, NAME, AMOUNT, DAY, PARENT) VALUES {values}")
            cur.execute(f"SELECT COUNT(*), SUM(AMOUNT) FROM {name}.PUBLIC.T0")
    out["load_seconds"] = time.monotonic() - t
    print(json.dumps(out))
''')


def start(tmp: Path) -> tuple[subprocess.Popen, int, float]:
    t = time.monotonic()
    proc = subprocess.Popen([str(SAAS), "-m", "decathlon.emulators.snowflake", "--root", str(tmp)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    ready = time.monotonic() - t
    if not line.startswith("ready snowflake "):
        raise SystemExit(f"no ready line: {line!r}")
    return proc, json.loads(line.split(" ", 2)[2])["http"], ready


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.wait(15)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def first_answer(port: int, t0: float) -> float:
    """Seconds from `t0` until a raw login request is answered (the first request waits for fakesnow's load)."""
    import http.client

    body = json.dumps({"data": {"SESSION_PARAMETERS": {}}})
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("POST", "/session/v1/login-request", body, {"Content-Type": "application/json"})
    conn.getresponse().read()
    return time.monotonic() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--starts", type=int, default=7)
    ap.add_argument("--connects", type=int, default=15)
    ap.add_argument("--queries", type=int, default=200)
    args = ap.parse_args()
    if not SAAS.exists():
        print(f"{SAAS} is missing: python ci/install_servers.py builds it", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        readies, answers = [], []
        for _ in range(args.starts):
            t0 = time.monotonic()
            proc, port, ready = start(tmp)
            answers.append(first_answer(port, t0))
            readies.append(ready)
            stop(proc)
        print(f"start → ready line          median {statistics.median(readies) * 1000:7.1f} ms  "
              f"(min {min(readies) * 1000:.1f}, max {max(readies) * 1000:.1f}; n={len(readies)})")
        print(f"start → first answer        median {statistics.median(answers) * 1000:7.1f} ms")

        script = tmp / "client.py"
        script.write_text(CLIENT)
        for scale in (1, 10):
            proc, port, _ = start(tmp)
            idle = rss_mb(proc.pid)
            done = subprocess.run([str(SAAS), str(script), str(port), str(args.connects), str(args.queries), str(scale)],
                                  capture_output=True, text=True, timeout=900)
            if done.returncode:
                print(done.stderr[-3000:], file=sys.stderr)
                stop(proc)
                return 1
            out = json.loads(done.stdout.strip().splitlines()[-1])
            loaded = rss_mb(proc.pid)
            stop(proc)
            if scale == 1:
                sel = sorted(out["select1"])
                print(f"connect (login)             median {statistics.median(out['connect']) * 1000:7.1f} ms  "
                      f"(n={len(out['connect'])})")
                print(f"SELECT 1 via the connector  p50 {sel[len(sel) // 2] * 1000:7.2f} ms  "
                      f"p90 {sel[int(len(sel) * 0.9)] * 1000:.2f} ms  (n={len(sel)})")
            print(f"RSS idle {idle:6.1f} MB → after preprocess-sized load ×{scale}: {loaded:6.1f} MB  "
                  f"(load took {out['load_seconds']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
