#!/usr/bin/env python3
"""The SaaS front and its emulators as an episode meets them: the vendors' real clients (the saas virtualenv) at
the real host names, through the front's proxy, TLS with the episode's CA, a service-account key made as
decathlon/sandbox/saas_credentials.py makes it, and the variables decathlon/sandbox/saas.py gives a process.

  bench/bench_saas.py [--starts 5] [--queries 50] [--calls 100] [--rows 3000] [--timeout 60] [--json]

1. start: spawn `python -m decathlon.emulators.front --eager gcp,gcplogging` (and, apart, `--eager snowflake`) →
   its `ready front` line, and → the first real answer through it (BigQuery list_datasets and Logging
   list_buckets, each from its own thread and credentials; Snowflake connect + SELECT 1); median over --starts.
   The client is a saas-venv process started and imported beforehand, so its interpreter start is not counted;
   it gets the front's variables once the ready line is out (as a preprocess script would, after setup).
2. BigQuery: a dataset with a --rows CSV loaded (schema autodetected), then a filtered GROUP BY and a CTE with
   window functions: query().result() and query_and_wait(), p50/p90 over --queries.
3. Storage (blob exists, download of a 1 KiB object) and Logging (write one entry, list_entries with a filter):
   p50/p90 over --calls. 2 and 3 run through the front and, for reference, straight at the emulator's port
   (BIGQUERY_EMULATOR_HOST, STORAGE_EMULATOR_HOST, a grpc.insecure_channel), all in one client process after a
   warm-up, so the front's share shows.
4. RSS (VmRSS) of the front and every emulator it started, after 2 and 3 (and a small Snowflake load, so all
   three emulators are up).
Runs the front on this interpreter and the emulators and clients on the saas venv (DECATHLON_SERVERS_DIR or
.servers/saas), as an episode does. Loopback only: whatever else a client tries is refused by the front.
Every wait is bounded (--timeout); on an error, Ctrl-C or SIGTERM the front gets SIGTERM (it stops its emulators),
anything still running after it is named and killed, and the temporary folder goes. Exit 1 when something failed
or was left behind.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from decathlon.sandbox import saas, saas_credentials  # noqa: E402
from decathlon.emulators.snowflake import credentials as snowflake_credentials  # noqa: E402

SAAS_PYTHON = Path(os.environ.get("DECATHLON_SERVERS_DIR") or REPO / ".servers") / "saas" / "bin" / "python"
TARGETS_MS = {"start": 500.0, "bigquery": 20.0, "call": 2.0}
TARGET_RSS_MB = 300.0
WARMUP = 3
STOP_GRACE = 10.0

CLIENT = textwrap.dedent('''
    """The bench's client, on the saas venv: imports first (not timed), says `armed`, then reads one JSON line."""
    import json, os, sys, threading, time

    mode, configs = sys.argv[1], sys.argv[2]
    CLOUD = ["https://www.googleapis.com/auth/cloud-platform"]


    def say(obj):
        print(json.dumps(obj), flush=True)


    def go():
        say({"armed": True})
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        order = json.loads(line)
        os.environ.update(order["env"])
        return order


    def sa_credentials():
        from google.oauth2 import service_account
        return service_account.Credentials.from_service_account_file(
            os.path.join(configs, "gcp-service_account.keys.json"), scopes=CLOUD)


    def snowflake_connect(order):
        import snowflake.connector
        from cryptography.hazmat.primitives import serialization
        with open(os.path.join(configs, "snowflake_rsa_key.p8"), "rb") as f:
            key = serialization.load_pem_private_key(f.read(), password=None)
        der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        return snowflake.connector.connect(account=order["account"], user=order["user"], private_key=der,
                                           role="ACCOUNTADMIN", warehouse="COMPUTE_WH", login_timeout=30,
                                           network_timeout=60)


    def timed(n, fn, warm):
        for _ in range(warm):
            fn()
        out = []
        for _ in range(n):
            t = time.perf_counter()
            fn()
            out.append(round((time.perf_counter() - t) * 1000, 4))
        return out


    def start_gcp():
        from google.cloud import bigquery
        from google.cloud.logging_v2.services.config_service_v2 import ConfigServiceV2Client
        creds = [sa_credentials(), sa_credentials()]  # one per thread: each fetches its own token, as two scripts would
        order = go()
        done, errors = {}, {}

        def bq():
            client = bigquery.Client(project=creds[0].project_id, credentials=creds[0])
            list(client.list_datasets(timeout=30))
            done["bigquery"] = time.monotonic()

        def logging():
            client = ConfigServiceV2Client(credentials=creds[1])
            list(client.list_buckets(parent=f"projects/{creds[1].project_id}/locations/global", timeout=30))
            done["logging"] = time.monotonic()

        def guarded(name, fn):
            try:
                fn()
            except Exception as exc:  # reported to the bench, which fails the run with it
                errors[name] = f"{type(exc).__name__}: {exc}"[:2000]

        threads = [threading.Thread(target=guarded, args=(n, f), daemon=True) for n, f in (("bigquery", bq),
                                                                                           ("logging", logging))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(order["timeout"])
        say({"done": done, "errors": errors})


    def start_snowflake():
        import snowflake.connector  # noqa: F401 (imported before the clock starts)
        from cryptography.hazmat.primitives import serialization  # noqa: F401
        order = go()
        conn = snowflake_connect(order)
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchall() == [(1,)]
        done = time.monotonic()
        conn.close()
        say({"done": {"snowflake": done}, "errors": {}})


    def load():
        import grpc
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import bigquery, logging_v2, storage
        from google.cloud.logging_v2 import _gapic
        from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
        from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport
        import snowflake.connector  # noqa: F401
        order = go()
        n_q, n_c, warm = order["queries"], order["calls"], order["warmup"]
        creds = sa_credentials()
        project = creds.project_id
        out = {"timings": {}, "info": {}}

        def paired(name, n, calls):
            """Each call through the front and straight at the emulator, interleaved (the machine's load drifts
            alike for both), after `warm` untimed rounds."""
            for _ in range(warm):
                for fn in calls.values():
                    fn()
            times = {via: [] for via in calls}
            order_ = list(calls)
            for i in range(n):
                for via in (order_ if i % 2 == 0 else order_[::-1]):
                    t = time.perf_counter()
                    calls[via]()
                    times[via].append(round((time.perf_counter() - t) * 1000, 4))
            for via, values in times.items():
                out["timings"][f"{name}|{via}"] = values

        # Through the front: the clients as a task's scripts build them (the key file, nothing else).
        front = {"bq": bigquery.Client(project=project, credentials=creds),
                 "gcs": storage.Client(project=project, credentials=creds),
                 "log": logging_v2.Client(project=project, credentials=creds)}
        # Straight at the emulators' plain ports (both variables are read when a client is made).
        ports = order["ports"]
        os.environ["BIGQUERY_EMULATOR_HOST"] = os.environ["STORAGE_EMULATOR_HOST"] = f"http://127.0.0.1:{ports['gcp']}"
        anonymous = AnonymousCredentials()
        direct = {"bq": bigquery.Client(project=project, credentials=anonymous),
                  "gcs": storage.Client(project=project, credentials=anonymous),
                  "log": logging_v2.Client(project=project, credentials=anonymous)}
        del os.environ["BIGQUERY_EMULATOR_HOST"], os.environ["STORAGE_EMULATOR_HOST"]
        channel = grpc.insecure_channel(f"127.0.0.1:{ports['gcplogging']}")
        direct["log"]._logging_api = _gapic._LoggingAPI(
            LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=channel)), direct["log"])
        both = {"front": front, "direct": direct}

        # BigQuery: the dataset, a CSV loaded with its schema autodetected (as the tasks' preprocesses do).
        bq = front["bq"]
        table = f"{project}.bench_sales.orders"
        t = time.perf_counter()
        bq.create_dataset(bigquery.Dataset(f"{project}.bench_sales"), exists_ok=True, timeout=30)
        with open(order["csv"], "rb") as f:
            job = bq.load_table_from_file(f, table, job_config=bigquery.LoadJobConfig(
                source_format=bigquery.SourceFormat.CSV, autodetect=True, skip_leading_rows=1), timeout=60)
        job.result(timeout=60)
        loaded = bq.get_table(table, timeout=30)
        out["info"]["bigquery_load_ms"] = round((time.perf_counter() - t) * 1000, 1)
        out["info"]["bigquery_rows"] = loaded.num_rows
        out["info"]["bigquery_schema"] = {f.name: f.field_type for f in loaded.schema}
        out["info"]["bigquery_result_rows"] = {}
        for name, sql in order["sql"].items():
            sql = sql.format(table=table)
            answers = {via: [tuple(r.values()) for r in c["bq"].query(sql, timeout=30).result(timeout=30)]
                       for via, c in both.items()}
            if not answers["front"] or answers["front"] != answers["direct"]:
                raise SystemExit(f"{name}: {len(answers['front'])} rows through the front, {len(answers['direct'])} direct")
            out["info"]["bigquery_result_rows"][name] = len(answers["front"])
            paired(f"bq {name} query().result()", n_q,
                   {via: (lambda c=c: list(c["bq"].query(sql, timeout=30).result(timeout=30))) for via, c in both.items()})
            paired(f"bq {name} query_and_wait()", n_q,
                   {via: (lambda c=c: list(c["bq"].query_and_wait(sql, wait_timeout=30, api_timeout=30)))
                    for via, c in both.items()})

        # Storage: a bucket and a 1 KiB object.
        bucket_name, object_name = "bench-saas-reports", "reports/summary.json"
        front["gcs"].create_bucket(bucket_name, location="US", timeout=30).blob(object_name).upload_from_string(
            b"x" * 1024, content_type="application/json", timeout=30)
        blobs = {via: c["gcs"].bucket(bucket_name).blob(object_name) for via, c in both.items()}
        for via, blob in blobs.items():
            if not blob.exists(timeout=30) or len(blob.download_as_bytes(timeout=30)) != 1024:
                raise SystemExit(f"storage via {via}: the object is not there")
        paired("gcs blob.exists()", n_c, {via: (lambda b=b: b.exists(timeout=30)) for via, b in blobs.items()})
        paired("gcs blob.download_as_bytes() 1 KiB", n_c,
               {via: (lambda b=b: b.download_as_bytes(timeout=30)) for via, b in blobs.items()})

        # Logging: 20 entries in one log, half of them WARNING; then writes to another, and a filtered list.
        log_filter = f'logName="projects/{project}/logs/bench-list" AND severity>=WARNING'
        seeded = front["log"].logger("bench-list")
        for i in range(20):
            seeded.log_text(f"seeded entry {i}", severity="WARNING" if i % 2 else "INFO")
        for via, c in both.items():
            got = list(c["log"].list_entries(filter_=log_filter, page_size=50))
            if len(got) != 10:
                raise SystemExit(f"logging via {via}: list_entries gave {len(got)} entries, not 10")
        writers = {via: c["log"].logger("bench-write") for via, c in both.items()}
        paired("logging log_text() (write 1 entry)", n_c,
               {via: (lambda w=w: w.log_text("bench entry", severity="INFO")) for via, w in writers.items()})
        paired("logging list_entries(filter) 10 of 20", n_c,
               {via: (lambda c=c: list(c["log"].list_entries(filter_=log_filter, page_size=50))) for via, c in both.items()})
        channel.close()

        # A small Snowflake load through the front, so that its emulator is up (and counted) too.
        t = time.perf_counter()
        conn = snowflake_connect(order)
        out["info"]["snowflake_connect_ms"] = round((time.perf_counter() - t) * 1000, 1)
        cur = conn.cursor()
        cur.execute("CREATE OR REPLACE DATABASE BENCH_AP")
        cur.execute("CREATE TABLE BENCH_AP.PUBLIC.INVOICES (ID INTEGER PRIMARY KEY, VENDOR VARCHAR NOT NULL, "
                    "AMOUNT NUMBER(10, 2), DUE DATE)")
        for start in range(0, 1000, 100):
            values = ", ".join(f"({k}, 'vendor {k % 37}', {k * 1.25:.2f}, '2025-0{k % 9 + 1}-1{k % 9}')"
                               for k in range(start, start + 100))
            cur.execute(f"INSERT INTO BENCH_AP.PUBLIC.INVOICES VALUES {values}")

        def select1():
            cur.execute("SELECT 1")
            cur.fetchall()

        out["timings"]["snowflake SELECT 1 (info)|front"] = timed(n_c, select1, warm)
        conn.close()
        say(out)


    {"start-gcp": start_gcp, "start-snowflake": start_snowflake, "load": load}[mode]()
''')

SQL = {
    "GROUP BY": """
        SELECT region, SUM(amount) AS total, COUNT(*) AS orders, ROUND(AVG(quantity), 2) AS avg_qty
        FROM `{table}`
        WHERE ordered_at >= TIMESTAMP('2025-03-01 00:00:00 UTC') AND ordered_at < TIMESTAMP('2025-09-01')
        GROUP BY region
        ORDER BY total DESC""",
    "CTE+window": """
        WITH daily AS (
          SELECT region, DATE(ordered_at) AS day, SUM(amount) AS amount, COUNT(*) AS orders
          FROM `{table}`
          WHERE status != 'cancelled'
          GROUP BY region, day),
        ranked AS (
          SELECT region, day, amount, orders,
                 SUM(amount) OVER (PARTITION BY region ORDER BY day) AS running,
                 ROW_NUMBER() OVER (PARTITION BY region ORDER BY amount DESC, day) AS rnk
          FROM daily)
        SELECT region, day, ROUND(amount, 2) AS amount, ROUND(running, 2) AS running_total, orders
        FROM ranked
        WHERE rnk <= 3
        ORDER BY region, rnk""",
}

_live: list[subprocess.Popen] = []  # everything this bench started that may still run: stopped on any exit


class Failed(RuntimeError):
    pass


class Lines:
    """A child's stdout read line by line, every wait bounded."""

    def __init__(self, proc: subprocess.Popen, what: str) -> None:
        assert proc.stdout is not None
        self.proc, self.what, self.fd, self.buf = proc, what, proc.stdout.fileno(), b""

    def next(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failed(f"{self.what}: no line within {timeout:g} s")
            readable, _, _ = select.select([self.fd], [], [], left)
            if readable:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    try:
                        code: int | str = self.proc.wait(STOP_GRACE)
                    except subprocess.TimeoutExpired:
                        code = "its stdout closed"
                    raise Failed(f"{self.what} exited ({code}) before saying anything more")
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")


def _start_time(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def process_name(pid: int) -> str:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return "?"
    for i, arg in enumerate(argv):
        if arg == b"-m" and i + 1 < len(argv):
            module = argv[i + 1].decode().removeprefix("decathlon.emulators.")
            if module == "kit.forkserver":  # a forked emulator keeps its forkserver's command line, not its name
                comm = Path(f"/proc/{pid}/comm").read_text().strip() if Path(f"/proc/{pid}/comm").exists() else ""
                return "forkserver" if not comm or comm.startswith("python") else comm
            return module
    return Path(argv[0].decode() or "?").name


def stop(proc: subprocess.Popen, what: str, leftovers: list[str]) -> float:
    """SIGTERM (the front stops its emulators), bounded; then whatever it left behind is named and killed.
    Seconds from SIGTERM to its exit (0 when it had already exited)."""
    kids = [(pid, _start_time(pid)) for pid in descendants(proc.pid)] if proc.poll() is None else []
    took = 0.0
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        began = time.monotonic()
        try:
            proc.wait(STOP_GRACE)
            took = time.monotonic() - began
        except subprocess.TimeoutExpired:
            leftovers.append(f"{what} (pid {proc.pid}) ignored SIGTERM for {STOP_GRACE:.0f} s: killed")
            proc.kill()
            proc.wait(STOP_GRACE)
            took = STOP_GRACE
    deadline = time.monotonic() + STOP_GRACE
    for pid, started in kids:
        while started is not None and _start_time(pid) == started and time.monotonic() < deadline:
            time.sleep(0.02)
        if started is not None and _start_time(pid) == started:
            leftovers.append(f"{process_name(pid)} (pid {pid}), started by {what}, still ran after it stopped: killed")
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    if proc in _live:
        _live.remove(proc)
    return took


def spawn_front(base: Path, eager: str, timeout: float) -> tuple[subprocess.Popen, int, Path, float, float]:
    """(the front, its port, its folder, the monotonic instant it was spawned, seconds to its ready line)."""
    folder = Path(tempfile.mkdtemp(prefix="front-", dir=base))
    logs = folder / "logs"
    logs.mkdir()
    env = {**os.environ, "DECATHLON_SAAS_PYTHON": str(SAAS_PYTHON), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("DECATHLON_FRONT_EAGER", None)
    with open(logs / "front.log", "ab") as err:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.front", "--root", str(folder), "--home",
                                 str(folder), "--logs", str(logs), "--eager", eager], stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=err, env=env, cwd=folder, start_new_session=True)
    _live.append(proc)
    line = Lines(proc, "the front").next(timeout)
    ready = time.monotonic() - t0
    if not line.startswith("ready front "):
        raise Failed(f"the front said {line[:300]!r}; its log: {tail(logs / 'front.log')}")
    return proc, int(json.loads(line.split(" ", 2)[2])["http"]), folder, t0, ready


def tail(path: Path, limit: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return ""


def emulator_ports(folder: Path, names: list[str], timeout: float) -> dict[str, int]:
    """From the front's log (`the gcp emulator is ready on port N (pid P)`), waiting for each, bounded."""
    deadline = time.monotonic() + timeout
    while True:
        ports = {}
        for line in tail(folder / "logs" / "front.log", 10 ** 6).splitlines():
            for name in names:
                marker = f"the {name} emulator is ready on port "
                if marker in line:
                    ports[name] = int(line.split(marker)[1].split()[0])
        if len(ports) == len(names):
            return ports
        if time.monotonic() > deadline:
            raise Failed(f"the emulators {names} not all ready within {timeout:.0f} s: {tail(folder / 'logs' / 'front.log')}")
        time.sleep(0.02)


def spawn_client(script: Path, mode: str, configs: Path, timeout: float) -> tuple[subprocess.Popen, Lines]:
    # Its own HOME: the connector's OCSP and credential caches (~/.cache/snowflake) start empty, as in a fresh
    # episode, and go with the temporary folder.
    home = configs.parent / "client-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env.update({"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")})
    with open(configs.parent / f"client-{mode}.log", "ab") as err:
        proc = subprocess.Popen([str(SAAS_PYTHON), str(script), mode, str(configs)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err, cwd=configs.parent, start_new_session=True, env=env)
    _live.append(proc)
    lines = Lines(proc, f"the {mode} client")
    try:
        if json.loads(lines.next(timeout)) != {"armed": True}:
            raise Failed(f"the {mode} client did not arm")
    except Failed as exc:
        raise Failed(f"{exc}; its log: {tail(configs.parent / f'client-{mode}.log') or '(empty)'}") from None
    return proc, lines


def order(proc: subprocess.Popen, lines: Lines, payload: dict, timeout: float, log: Path) -> dict:
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(payload) + "\n").encode())
    proc.stdin.flush()
    deadline = time.monotonic() + timeout
    try:
        line = lines.next(timeout)
        while not line.startswith("{"):  # whatever a library prints is not the answer
            line = lines.next(max(0.0, deadline - time.monotonic()))
        answer = json.loads(line)
    except Failed as exc:
        raise Failed(f"{exc}; its log: {tail(log) or '(empty)'}") from None
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(STOP_GRACE)
    if proc in _live:
        _live.remove(proc)
    return answer


def front_env(port: int, folder: Path) -> dict[str, str]:
    record = {"services": {"front": {"ports": {"http": port}}}}
    return saas.env(record, folder / "saas" / "ca-bundle.pem")


FIRST = {"bigquery": "first BigQuery list_datasets", "logging": "first Logging list_buckets",
         "snowflake": "first Snowflake connect+SELECT 1"}
READY, STOPPED = "ready front line", "SIGTERM → front exited"


def bench_start(base: Path, script: Path, configs: Path, starts: int, timeout: float, leftovers: list[str]) -> dict:
    """Per --eager set: milliseconds from spawning the front to its ready line, to each first answer, and from
    SIGTERM to its exit."""
    out: dict[str, dict[str, list[float]]] = {}
    for eager, mode, services in (("gcp,gcplogging", "start-gcp", ("bigquery", "logging")),
                                  ("snowflake", "start-snowflake", ("snowflake",))):
        runs: dict[str, list[float]] = {READY: [], **{FIRST[s]: [] for s in services}, STOPPED: []}
        for _ in range(starts):
            client, lines = spawn_client(script, mode, configs, timeout * 4)
            front, port, folder, t0, ready = spawn_front(base, eager, timeout)
            try:
                answer = order(client, lines, {"env": front_env(port, folder), "timeout": timeout,
                                               "account": snowflake_credentials.ACCOUNT,
                                               "user": snowflake_credentials.USER},
                               timeout, configs.parent / f"client-{mode}.log")
                if answer["errors"] or sorted(answer["done"]) != sorted(services):
                    raise Failed(f"first requests through the front failed: {answer['errors'] or 'no answer in time'}; "
                                 f"front log: {tail(folder / 'logs' / 'front.log')}")
            finally:
                stop(client, f"the {mode} client", leftovers)
                stopped = stop(front, "the front", leftovers)
            runs[READY].append(ready * 1000)
            for service, done in answer["done"].items():
                runs[FIRST[service]].append((done - t0) * 1000)
            runs[STOPPED].append(stopped * 1000)
        out[eager] = runs
    return out


def write_csv(path: Path, rows: int) -> None:
    rnd = random.Random(7)
    regions = ["north", "south", "east", "west", "central", "online"]
    statuses = ["shipped", "shipped", "shipped", "pending", "cancelled"]
    with open(path, "w", encoding="utf-8") as f:
        f.write("order_id,region,product,quantity,amount,status,ordered_at\n")
        for i in range(1, rows + 1):
            day = rnd.randrange(0, 240)
            stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(1735689600 + day * 86400 + rnd.randrange(86400)))
            f.write(f"{i},{rnd.choice(regions)},sku-{rnd.randrange(60):03d},{rnd.randrange(1, 9)},"
                    f"{rnd.uniform(5, 500):.2f},{rnd.choice(statuses)},{stamp} UTC\n")


def bench_load(base: Path, script: Path, configs: Path, args: argparse.Namespace, leftovers: list[str]) -> dict:
    csv = configs.parent / "orders.csv"
    write_csv(csv, args.rows)
    client, lines = spawn_client(script, "load", configs, args.timeout * 4)
    front, port, folder, _, _ = spawn_front(base, "gcp,gcplogging", args.timeout)
    try:
        ports = emulator_ports(folder, ["gcp", "gcplogging"], args.timeout)
        budget = args.timeout + (args.queries * 8 + args.calls * 7) * 0.5  # 0.5 s a request is already a failure
        answer = order(client, lines, {"env": front_env(port, folder), "ports": ports, "csv": str(csv), "sql": SQL,
                                       "queries": args.queries, "calls": args.calls, "warmup": WARMUP,
                                       "account": snowflake_credentials.ACCOUNT,
                                       "user": snowflake_credentials.USER},
                       budget, configs.parent / "client-load.log")
        answer["rss"] = [{"process": process_name(pid), "pid": pid, "mb": round(rss_mb(pid), 1)}
                         for pid in (front.pid, *descendants(front.pid))]
    finally:
        stop(client, "the load client", leftovers)
        answer_stop = stop(front, "the front", leftovers)
    answer["timings"][f"{STOPPED} (after the load)|front"] = [answer_stop * 1000]
    return answer


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def row(metric: str, via: str, values: list[float], target: float | None) -> dict:
    p50 = statistics.median(values)
    return {"metric": metric, "via": via, "n": len(values), "p50_ms": round(p50, 3), "p90_ms": round(pct(values, 0.9), 3),
            "min_ms": round(min(values), 3), "target_ms": target, "ok": None if target is None else p50 <= target}


# An episode's front starts only what its task uses: a Google Cloud task gets the first three, a Snowflake one
# the front and Snowflake; the load here has all of them up at once. The front's forkserver counts to each (its
# children share its pages until they write them, so VmRSS summed over them counts the shared ones twice).
EPISODES = {"all (this load)": None, "Google Cloud task": ("front", "forkserver", "gcp", "gcplogging"),
            "Snowflake task": ("front", "forkserver", "snowflake")}


def report(start: dict, load: dict, args: argparse.Namespace) -> dict:
    rows = []
    for eager, runs in start.items():
        for metric, values in runs.items():
            target = TARGETS_MS["start"] if metric.startswith("first ") else None
            rows.append(row(f"start --eager {eager}: {metric}", "front", values, target))
    timings = load["timings"]
    for key, values in timings.items():
        metric, via = key.split("|")
        target = None
        if via == "front" and metric.startswith("bq "):
            target = TARGETS_MS["bigquery"]
        elif via == "front" and metric.startswith(("gcs ", "logging ")):
            target = TARGETS_MS["call"]
        rows.append(row(metric, via, values, target))
    for r in rows:
        direct = timings.get(f"{r['metric']}|direct")
        if r["via"] == "front" and direct:
            r["front_share_ms"] = round(r["p50_ms"] - statistics.median(direct), 3)
    totals = {}
    for episode, names in EPISODES.items():
        mb = round(sum(p["mb"] for p in load["rss"] if names is None or p["process"] in names), 1)
        totals[episode] = {"mb": mb, "ok": mb <= TARGET_RSS_MB}
    return {"config": {"starts": args.starts, "queries": args.queries, "calls": args.calls, "rows": args.rows,
                       "warmup": WARMUP, "load_average": os.getloadavg()[0], "cpus": os.cpu_count()},
            "rows": rows, "info": load["info"],
            "rss_mb": {"processes": load["rss"], "totals": totals, "target": TARGET_RSS_MB}}


def print_table(result: dict) -> None:
    def verdict(ok: bool | None) -> str:
        return "" if ok is None else ("ok" if ok else "MISSED")

    print(f"{'metric':60} {'via':6} {'n':>4} {'p50 ms':>9} {'p90 ms':>9} {'target':>7} {'front +':>8}  verdict")
    for r in result["rows"]:
        target = f"{r['target_ms']:.0f}" if r["target_ms"] is not None else "-"
        share = f"{r['front_share_ms']:.2f}" if "front_share_ms" in r else ""
        print(f"{r['metric']:60} {r['via']:6} {r['n']:>4} {r['p50_ms']:>9.2f} {r['p90_ms']:>9.2f} {target:>7} {share:>8}  "
              f"{verdict(r['ok'])}")
    print("(front + = the front's p50 minus the same call's p50 straight at the emulator's port, the two interleaved)")
    rss = result["rss_mb"]
    parts = ", ".join(f"{p['process']} {p['mb']:.0f}" for p in rss["processes"])
    print(f"\nRSS (VmRSS, MB) after the load: {parts}")
    for episode, t in rss["totals"].items():
        print(f"  {episode:20} {t['mb']:6.0f} MB  (target ≤ {rss['target']:.0f})  {verdict(t['ok'])}")
    info, config = result["info"], result["config"]
    print(f"BigQuery load of {info['bigquery_rows']} CSV rows (autodetect): {info['bigquery_load_ms']:.0f} ms; "
          f"result rows {info['bigquery_result_rows']}; Snowflake connect in the load client: "
          f"{info['snowflake_connect_ms']:.0f} ms")
    print(f"load average {config['load_average']:.1f} on {config['cpus']} CPUs")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", type=int, default=5, help="front starts per --eager set (median)")
    ap.add_argument("--queries", type=int, default=50, help="timed BigQuery queries per shape, method and path")
    ap.add_argument("--calls", type=int, default=100, help="timed Storage / Logging calls per kind and path")
    ap.add_argument("--rows", type=int, default=3000, help="rows of the CSV loaded into BigQuery")
    ap.add_argument("--timeout", type=float, default=60.0, help="bound on each wait for a process (s)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    if min(args.starts, args.queries, args.calls, args.rows) < 1:
        ap.error("the counts must be at least 1")
    if not SAAS_PYTHON.exists():
        print(f"{SAAS_PYTHON} is missing: python ci/install_servers.py builds it", file=sys.stderr)
        return 2

    def terminated(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    for sig in (signal.SIGINT, signal.SIGTERM):  # SIGINT too: a shell may have started this with it ignored
        signal.signal(sig, terminated)
    leftovers: list[str] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench-saas-") as tmpdir:
            base = Path(tmpdir)
            configs = base / "configs"
            configs.mkdir()
            saas_credentials.write(configs)  # the key file (and the Snowflake key) an episode gets
            script = base / "client.py"
            script.write_text(CLIENT)
            try:
                start = bench_start(base, script, configs, args.starts, args.timeout, leftovers)
                load = bench_load(base, script, configs, args, leftovers)
            finally:
                # A second Ctrl-C must not leave the front behind half-stopped: the stopping is bounded anyway.
                previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_IGN)
                try:
                    for proc in list(_live):
                        stop(proc, "a process of the bench", leftovers)
                finally:
                    signal.signal(signal.SIGINT, previous[0])
                    signal.signal(signal.SIGTERM, previous[1])
    except Failed as exc:
        print(f"bench_saas: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench_saas: interrupted; everything it started is stopped", file=sys.stderr)
        return 130
    finally:
        for line in leftovers:
            print(f"bench_saas: leftover: {line}", file=sys.stderr)
    result = report(start, load, args)
    result["leftovers"] = leftovers
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_table(result)
    return 1 if leftovers else 0


if __name__ == "__main__":
    sys.exit(main())
