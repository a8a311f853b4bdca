"""State as a kit feature (decathlon.emulators.kit.state, .control): every emulator, started as a process with
`--control SOCKET`, is filled through its real API (the vendors' own clients for BigQuery, Storage, Logging and
Snowflake; HTTP, IMAP and SMTP for the local services), snapshotted, changed, restored; a fixed set of reads through
the vendor API must then be byte-for-byte what it was, a second snapshot must be byte-for-byte the first, a reset
must give the reads of a fresh emulator, and a seed loaded through the socket must be what the API shows. The
socket is 0600 in a 0700 folder (as root: another user cannot connect), and bad requests get clear JSON errors.
"""
from __future__ import annotations

import filecmp
import imaplib
import json
import os
import shutil
import smtplib
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from lines import readline
from saas_venv import REPO, saas_python

from decathlon.emulators.kit import control_client as cc

SERVICES = REPO / "fixtures" / "toolathlon-services"
USERS = json.loads((SERVICES / "configs" / "users_data.json").read_text())
PEOPLE = USERS["users"] if isinstance(USERS, dict) else USERS


class Emulator:
    def __init__(self, name: str, python: str, root: Path, control: Path, *extra: str) -> None:
        self.name, self.control = name, control
        self.sock = control / f"{name}.sock"
        self.log = (control.parent / f"{name}.log").open("w")
        self.proc = subprocess.Popen([python, "-m", f"decathlon.emulators.{name}", "--root", str(root), "--control",
                                      str(self.sock), *extra], stdout=subprocess.PIPE, stderr=self.log, text=True,
                                     cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)})
        line = readline(self.proc, what=f"the {name} emulator's ready line")
        assert line.startswith(f"ready {name} "), (line, (control.parent / f"{name}.log").read_text()[-2000:])
        self.ports = json.loads(line.split(" ", 2)[2])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Emulator]]:
    started: list[Emulator] = []

    def go(name: str, *extra: str, saas: bool = False, root: Path = SERVICES) -> Emulator:
        python = str(saas_python()) if saas else sys.executable
        emulator = Emulator(name, python, root, tmp_path / "control", *extra)
        started.append(emulator)
        return emulator

    yield go
    for e in started:
        e.stop()


def same_tree(a: Path, b: Path) -> None:
    """Every file of `a` is in `b` with the same bytes, and nothing more."""
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert filecmp.cmp(a / rel, b / rel, shallow=False), f"{rel} differs between {a} and {b}"


def cycle(e: Emulator, fill: Callable[[], None], change: Callable[[], None], reads: Callable[[], Any],
          fresh_reads: Callable[[Any], Any] = lambda r: r) -> None:
    """The contract every emulator keeps, driven through its API and its control socket."""
    fresh = reads()
    fill()
    cc.snapshot(e.sock, "one")
    filled = reads()
    assert filled != fresh, "filling the emulator changed none of the reads: the test would prove nothing"
    change()
    assert reads() != filled, "the change is not visible in the reads: the test would prove nothing"
    answer = cc.restore(e.sock, "one")
    assert answer["ok"] is True
    cc.snapshot(e.sock, "two")  # before any read: a read may itself change state (a BigQuery job, IMAP's \Recent)
    assert reads() == filled
    same_tree(e.control / "one", e.control / "two")
    cc.reset(e.sock)
    assert fresh_reads(reads()) == fresh_reads(fresh)
    cc.load_seed(e.sock, "one")
    assert reads() == filled
    manifest = json.loads((e.control / "one" / "manifest.json").read_text())
    assert manifest == {"emulator": e.name, "format": 1}


# --- the local services ---------------------------------------------------------------------------------------------

def test_canvas_state(start: Callable[..., Emulator]) -> None:
    e = start("canvas", "--port", "http=0", "--port", "https=0")
    base = f"http://127.0.0.1:{e.ports['http']}/api/v1"
    h = {"Authorization": "Bearer mcpcanvasadmintoken1"}
    student = PEOPLE[0]

    def fill() -> None:
        course = requests.post(f"{base}/accounts/1/courses", headers=h, json={"course": {"name": "Biology 101"}}).json()
        requests.post(f"{base}/courses/{course['id']}/enrollments", headers=h,
                      json={"enrollment": {"user_id": student["id"] + 33, "type": "StudentEnrollment",
                                           "enrollment_state": "active"}}).raise_for_status()
        requests.post(f"{base}/courses/{course['id']}/assignments", headers=h,
                      json={"assignment": {"name": "Essay", "points_possible": 10, "published": True}}).raise_for_status()

    def change() -> None:
        requests.post(f"{base}/accounts/1/courses", headers=h, json={"course": {"name": "Chemistry"}}).raise_for_status()
        requests.delete(f"{base}/courses/1", headers=h, params={"event": "delete"}).raise_for_status()

    def reads() -> list[str]:
        paths = ["accounts/1/courses", "courses/1/assignments", "courses/1/enrollments", "courses/1/users", "users/self"]
        return [requests.get(f"{base}/{p}", headers=h).text for p in paths]

    cycle(e, fill, change, reads)


def test_woocommerce_state(start: Callable[..., Emulator]) -> None:
    e = start("woocommerce", "--port", "http=0")
    owner = PEOPLE[0]
    base = f"http://127.0.0.1:{e.ports['http']}/store{owner['id']}/wp-json/wc/v3"
    auth = (owner["woocommerce_consumer_key"], owner["woocommerce_consumer_secret"])

    def fill() -> None:
        product = requests.post(f"{base}/products", auth=auth, json={"name": "Mug", "regular_price": "9.50"}).json()
        requests.post(f"{base}/orders", auth=auth, json={"status": "processing", "line_items": [
            {"product_id": product["id"], "quantity": 2}]}).raise_for_status()
        requests.post(f"{base}/customers", auth=auth, json={"email": "c@example.com", "first_name": "C"}).raise_for_status()

    def change() -> None:
        requests.post(f"{base}/products", auth=auth, json={"name": "Cup"}).raise_for_status()
        products = requests.get(f"{base}/products", auth=auth).json()
        requests.delete(f"{base}/products/{products[-1]['id']}", auth=auth, params={"force": "true"}).raise_for_status()

    def reads() -> list[str]:
        return [requests.get(f"{base}/{p}", auth=auth).text for p in ("products", "orders", "customers",
                                                                          "products/categories", "reports/sales")]

    cycle(e, fill, change, reads)


def test_mail_state(start: Callable[..., Emulator]) -> None:
    e = start("mail", "--port", "imap=0", "--port", "smtp=0", "--port", "smtp-mx=0")
    sender, reader = PEOPLE[0], PEOPLE[1]

    def send(subject: str) -> None:
        with smtplib.SMTP("127.0.0.1", e.ports["smtp"], timeout=30) as s:
            s.login(sender["email"], sender["password"])
            s.sendmail(sender["email"], [reader["email"]], f"From: {sender['email']}\r\nTo: {reader['email']}\r\n"
                       f"Subject: {subject}\r\n\r\nhello\r\nFrom the start\r\n>From quoted\r\n")

    def imap() -> imaplib.IMAP4:
        m = imaplib.IMAP4("127.0.0.1", e.ports["imap"], timeout=30)
        m.login(reader["email"], reader["password"])
        return m

    def fill() -> None:
        send("first")
        send("second")
        m = imap()
        m.create("Archive")
        m.select("INBOX")
        m.store("1", "+FLAGS", "(\\Seen \\Flagged)")
        m.copy("2", "Archive")
        m.logout()

    def change() -> None:
        m = imap()
        m.select("INBOX")
        m.store("1", "+FLAGS", "\\Deleted")
        m.expunge()
        m.delete("Archive")
        m.logout()
        send("third")

    def reads() -> list[Any]:
        m = imap()
        out = [m.list(), m.status("INBOX", "(MESSAGES UIDNEXT UIDVALIDITY UNSEEN)")]
        for box in ("INBOX", "Archive"):
            selected = m.select(box, readonly=True)
            out.append(selected)
            if selected[0] == "OK":
                out.append(m.uid("FETCH", "1:*", "(FLAGS INTERNALDATE BODY.PEEK[])"))
        m.logout()
        return out

    def without_uidvalidity(r: list[Any]) -> list[Any]:
        # A mailbox made afresh has a UIDVALIDITY of its own, as a new Poste mailbox would.
        return [x for x in r if "UIDVALIDITY" not in repr(x)]

    cycle(e, fill, change, reads, without_uidvalidity)
    folders = json.loads((e.control / "one" / "mail" / reader["email"] / "folders.json").read_text())
    assert [(f["name"], len(f["messages"])) for f in folders][:1] + [(f["name"], len(f["messages"])) for f in folders
                                                                      if f["name"] == "Archive"] == [("INBOX", 2),
                                                                                                     ("Archive", 1)]
    assert b"\n>From the start" in (e.control / "one" / "mail" / reader["email"] / "INBOX.mbox").read_bytes()


# --- the SaaS emulators (their own virtualenv; the vendors' clients) ------------------------------------------------

def saas_client(code: str, env: dict[str, str]) -> Callable[[str], Any]:
    def run(step: str) -> Any:
        done = subprocess.run([str(saas_python()), "-c", code, step], capture_output=True, text=True, timeout=180,
                              env={**os.environ, **env})
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1]) if step == "read" else None
    return run


GCP = r'''
import json, sys
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery, storage
bq = bigquery.Client(project="emu-project", credentials=AnonymousCredentials())
gcs = storage.Client(project="emu-project", credentials=AnonymousCredentials())
step = sys.argv[1]
if step == "fill":
    bq.create_dataset("sales")
    bq.query("CREATE TABLE sales.orders (id INT64 NOT NULL, name STRING, amount NUMERIC, ts TIMESTAMP, "
             "tags ARRAY<STRING>, meta STRUCT<k INT64>, d DATE)").result()
    bq.query("INSERT INTO sales.orders VALUES (1, 'a', 1.5, TIMESTAMP '2024-01-01 10:00:00', ['x', 'y'], STRUCT(3 AS k), "
             "DATE '2024-01-02'), (2, NULL, NULL, NULL, [], NULL, NULL)").result()
    bq.query("CREATE VIEW sales.big AS SELECT id FROM sales.orders WHERE id > 1").result()
    t = bigquery.Table("emu-project.sales.notes", schema=[bigquery.SchemaField("n", "STRING", mode="REQUIRED",
                                                                                 description="a note")])
    t.description = "notes"
    bq.create_table(t)
    bq.insert_rows_json("emu-project.sales.notes", [{"n": "hello"}])
    bq.query("SELECT 42 AS answer", job_id="fixed-job").result()
    bucket = gcs.create_bucket("state-bucket")
    bucket.blob("dir/a.txt").upload_from_string("hello", content_type="text/plain")
    bucket.blob("b.bin").upload_from_string(bytes(range(256)) * 40)
elif step == "change":
    bq.query("DELETE FROM sales.orders WHERE id = 1").result()
    bq.delete_table("emu-project.sales.notes")
    bq.create_dataset("other")
    gcs.bucket("state-bucket").blob("dir/a.txt").delete()
else:
    out = [[d.dataset_id for d in bq.list_datasets()]]
    for ds in [d.dataset_id for d in bq.list_datasets()]:
        for t in bq.list_tables(ds):
            table = bq.get_table(t)
            out.append(table.to_api_repr())
            if table.table_type == "TABLE":
                out.append([list(map(str, r.values())) for r in bq.list_rows(table)])
    try:
        job = bq.get_job("fixed-job")
        out.append([job.state, [list(map(str, r.values())) for r in job.result()]])
    except Exception as exc:
        out.append(type(exc).__name__)
    for b in gcs.list_buckets():
        out.append(b.name)
        for blob in gcs.list_blobs(b.name):
            out.append([blob.name, blob.md5_hash, blob.generation, blob.content_type, blob.size,
                        blob.download_as_bytes().hex()[:64]])
    print(json.dumps(out, sort_keys=True, default=str))
'''


def test_gcp_state(start: Callable[..., Emulator], tmp_path: Path) -> None:
    e = start("gcp", saas=True, root=tmp_path)
    url = f"http://127.0.0.1:{e.ports['http']}"
    run = saas_client(GCP, {"BIGQUERY_EMULATOR_HOST": url, "STORAGE_EMULATOR_HOST": url})
    cycle(e, lambda: run("fill"), lambda: run("change"), lambda: run("read"))
    tables = json.loads((e.control / "one" / "bigquery" / "tables.json").read_text())
    assert [t["table"]["table_id"] for t in tables] == ["big", "notes", "orders"]
    assert (e.control / "one" / "bigquery" / "tables" / "emu-project" / "sales" / "orders.parquet").is_file()
    assert (e.control / "one" / "storage" / "objects" / "state-bucket" / "dir%2Fa.txt").read_bytes() == b"hello"


LOGGING = r'''
import json, sys, datetime as dt
import grpc
from google.cloud.logging_v2.services.config_service_v2 import ConfigServiceV2Client
from google.cloud.logging_v2.services.config_service_v2.transports import ConfigServiceV2GrpcTransport
from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport
from google.cloud.logging_v2.types import LogBucket, LogEntry, LogSink
from google.api import monitored_resource_pb2
from google.protobuf import json_format, struct_pb2
import os
ADDR = os.environ["GL_ADDR"]
config = ConfigServiceV2Client(transport=ConfigServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
logs = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
P = "projects/emu-project"
step = sys.argv[1]
def entry(text, severity="INFO", payload=None):
    e = LogEntry(log_name=f"{P}/logs/app", resource={"type": "global"}, severity=severity, labels={"b": "2", "a": "1"})
    if payload: e.json_payload = payload
    else: e.text_payload = text
    return e
if step == "fill":
    config.create_bucket(request={"parent": f"{P}/locations/global", "bucket_id": "audit",
                                  "bucket": LogBucket(retention_days=10)})
    config.create_sink(request={"parent": P, "sink": LogSink(name="to-audit", destination="logging.googleapis.com/"
                                f"{P}/locations/global/buckets/audit", filter="severity>=ERROR")})
    logs.write_log_entries(entries=[entry("one"), entry("two", "ERROR"), entry("", payload={"k": 1, "z": [1, "x"]})])
elif step == "change":
    config.delete_sink(sink_name=f"{P}/sinks/to-audit")
    logs.write_log_entries(entries=[entry("three")])
    logs.delete_log(log_name=f"{P}/logs/app")
    logs.write_log_entries(entries=[entry("four")])
else:
    out = [[type(b).to_dict(b) for b in config.list_buckets(parent=f"{P}/locations/global")],
           [type(s).to_dict(s) for s in config.list_sinks(parent=P)],
           [type(x).to_dict(x) for x in logs.list_log_entries(resource_names=[P], order_by="timestamp asc")],
           list(logs.list_logs(parent=P))]
    print(json.dumps(out, sort_keys=True, default=str))
'''


def test_gcplogging_state(start: Callable[..., Emulator], tmp_path: Path) -> None:
    e = start("gcplogging", saas=True, root=tmp_path)
    run = saas_client(LOGGING, {"GL_ADDR": f"127.0.0.1:{e.ports['grpc']}"})

    def untimed(r: Any) -> Any:
        # A project's built-in buckets are made on its first use, stamped then: a fresh one's times are its own.
        return [[{k: v for k, v in b.items() if not k.endswith("_time")} for b in r[0]], *r[1:]]

    cycle(e, lambda: run("fill"), lambda: run("change"), lambda: run("read"), untimed)
    entries = json.loads((e.control / "one" / "logging" / "entries.json").read_text())
    assert [x["entry"].get("textPayload") for x in entries] == ["one", "two", None]


SNOWFLAKE = r'''
import json, os, sys
import snowflake.connector
c = snowflake.connector.connect(host="127.0.0.1", port=int(os.environ["SF_PORT"]), protocol="http", account="acct",
                                user="u", password="p")
cur = c.cursor()
step = sys.argv[1]
if step == "fill":
    for s in ["CREATE DATABASE SALES", "CREATE SCHEMA SALES.RAW",
              "CREATE TABLE SALES.RAW.ORDERS (ID INT NOT NULL, NAME VARCHAR, AMT NUMBER(10,2), TS TIMESTAMP_NTZ, V VARIANT)",
              "INSERT INTO SALES.RAW.ORDERS SELECT 1, 'a', 1.50, '2024-01-01 10:00:00', PARSE_JSON('{\"k\": 1}')",
              "INSERT INTO SALES.RAW.ORDERS VALUES (2, NULL, NULL, NULL, NULL)",
              "CREATE VIEW SALES.RAW.BIG AS SELECT ID FROM SALES.RAW.ORDERS WHERE ID > 1",
              "COMMENT ON TABLE SALES.RAW.ORDERS IS 'the orders'"]:
        cur.execute(s)
elif step == "change":
    cur.execute("DELETE FROM SALES.RAW.ORDERS WHERE ID = 1")
    cur.execute("DROP VIEW SALES.RAW.BIG")
    cur.execute("CREATE DATABASE OTHER")
else:
    out = []
    for s in ["SHOW DATABASES", "SELECT * FROM SALES.RAW.ORDERS ORDER BY ID", "SELECT * FROM SALES.RAW.BIG",
              "SELECT table_name, table_type, comment FROM SALES.INFORMATION_SCHEMA.TABLES WHERE table_schema = 'RAW' "
              "ORDER BY 1",
              "SELECT column_name, data_type, is_nullable FROM SALES.INFORMATION_SCHEMA.COLUMNS WHERE table_name = 'ORDERS' "
              "ORDER BY ordinal_position"]:
        try:
            cur.execute(s)
            out.append([list(map(str, r)) for r in cur.fetchall()])
        except Exception as exc:
            out.append(str(exc))
    print(json.dumps(out))
'''


def test_snowflake_state(start: Callable[..., Emulator], tmp_path: Path) -> None:
    e = start("snowflake", saas=True, root=tmp_path)
    run = saas_client(SNOWFLAKE, {"SF_PORT": str(e.ports["http"])})
    cycle(e, lambda: run("fill"), lambda: run("change"), lambda: run("read"))
    databases = json.loads((e.control / "one" / "snowflake" / "databases.json").read_text())
    assert [d["name"] for d in databases] == ["SALES"]


# --- the socket and bad requests ------------------------------------------------------------------------------------

def test_the_socket_is_the_service_users_alone(start: Callable[..., Emulator]) -> None:
    e = start("canvas", "--port", "http=0", "--port", "https=0")
    assert oct(e.sock.stat().st_mode & 0o777) == "0o600"
    assert oct(e.control.stat().st_mode & 0o777) == "0o700"
    assert e.sock.stat().st_uid == os.geteuid()
    if os.geteuid() != 0:
        pytest.skip("connecting as another user needs root to become one")
    probe = ("import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1])\n"
             "except PermissionError:\n    print('refused')\nelse:\n    print('connected')\n")
    other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe,
                            str(e.sock)], capture_output=True, text=True, timeout=30)
    assert other.stdout.strip() == "refused", other.stderr
    # Even with the folder opened up, the socket's own mode keeps another user out.
    os.chmod(e.control, 0o755)
    other = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", probe,
                            str(e.sock)], capture_output=True, text=True, timeout=30)
    assert other.stdout.strip() == "refused", other.stderr


def test_bad_control_requests_get_clear_errors(start: Callable[..., Emulator], tmp_path: Path) -> None:
    e = start("woocommerce", "--port", "http=0")
    other = start("canvas", "--port", "http=0", "--port", "https=0")
    assert cc.health(e.sock) == {"ok": True, "emulator": "woocommerce", "format": 1}
    cc.snapshot(other.sock, "canvas-state")

    def refused(path: str, body: Any, code: str, status: int, words: str) -> None:
        with pytest.raises(cc.ControlError) as exc:
            cc.call(e.sock, "POST", path, body)
        assert (exc.value.code, exc.value.status) == (code, status), str(exc.value)
        assert words in str(exc.value)

    refused("/restore", {"folder": "nowhere"}, "missing_folder", 404, "no such folder")
    refused("/restore", {"folder": "/etc"}, "outside_root", 403, "outside the state root")
    refused("/load_seed", {"folder": "../.."}, "outside_root", 403, "outside the state root")
    refused("/restore", {"folder": "canvas-state"}, "wrong_emulator", 400, "the 'canvas' emulator's state")
    refused("/restore", {}, "bad_request", 400, "naming a \"folder\"")
    refused("/restore", {"folder": 7}, "bad_folder", 400, "non-empty path")
    (e.control / "future").mkdir()
    (e.control / "future" / "manifest.json").write_text(json.dumps({"emulator": "woocommerce", "format": 99}))
    refused("/restore", {"folder": "future"}, "unknown_format", 400, "format 99")
    (e.control / "broken").mkdir()
    (e.control / "broken" / "manifest.json").write_text("{not json")
    refused("/load_seed", {"folder": "broken"}, "bad_file", 400, "not valid JSON")
    (e.control / "partial").mkdir()
    (e.control / "partial" / "manifest.json").write_text(json.dumps({"emulator": "woocommerce", "format": 1}))
    refused("/restore", {"folder": "partial"}, "missing_file", 400, "network.json is missing")
    assert cc.load_seed(e.sock, "partial")["ok"] is True  # a seed may leave parts out: they stay fresh
    (e.control / "partial" / "network.json").write_text(json.dumps({"sites": [{"$type": "Nope"}]}))
    refused("/load_seed", {"folder": "partial"}, "bad_file", 400, "reset to its fresh state")
    (e.control / "full").mkdir()
    (e.control / "full" / "x").write_text("mine")
    refused("/snapshot", {"folder": "full"}, "not_empty", 409, "not replaced")
    with pytest.raises(cc.ControlError) as exc:
        cc.call(e.sock, "GET", "/nothing")
    assert exc.value.status == 404 and "/health" in str(exc.value)
    with pytest.raises(cc.ControlError) as exc:
        cc.call(e.sock, "GET", "/reset")
    assert exc.value.status == 405
    raw = subprocess.run(["curl", "-s", "--unix-socket", str(e.sock), "-X", "POST", "-d", "{nope",
                          "http://localhost/restore"], capture_output=True, text=True, timeout=30) \
        if shutil.which("curl") else None
    if raw is not None:
        assert json.loads(raw.stdout)["error"]["code"] == "bad_json"
    # Still serving after every refusal.
    assert cc.health(e.sock)["ok"] is True


def test_a_long_socket_path_is_served_through_its_folder(tmp_path: Path) -> None:
    """An episode's folder can be deep: past sun_path's 107 bytes the socket is bound and reached through its
    folder's descriptor."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    sock = deep / "control" / "canvas.sock"
    proc = subprocess.Popen([sys.executable, "-m", "decathlon.emulators.canvas", "--root", str(SERVICES), "--port",
                             "http=0", "--port", "https=0", "--control", str(sock)], stdout=subprocess.PIPE, text=True,
                            cwd=str(REPO))
    try:
        assert readline(proc).startswith("ready canvas ")
        assert len(str(sock)) > 107 and sock.is_socket()
        assert cc.health(sock)["emulator"] == "canvas"
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_fronts_emulators_get_their_control_sockets(tmp_path: Path) -> None:
    """The SaaS front starts each emulator with `--control <services folder>/control/<name>.sock`."""
    code = ("import asyncio, json, sys\nfrom pathlib import Path\nfrom decathlon.emulators.front.backends import Backends\n"
            "from decathlon.emulators.kit import control_client as cc\n"
            "async def main():\n    b = Backends(sys.executable, Path(sys.argv[1]), Path(sys.argv[2]))\n"
            "    await b.port('gcplogging')\n"
            "    print(json.dumps(cc.health(b.control / 'gcplogging.sock')), flush=True)\n    await b.stop()\n"
            "asyncio.run(main())\n")
    logs = tmp_path / "services" / "logs"
    logs.mkdir(parents=True)
    done = subprocess.run([str(saas_python()), "-c", code, str(tmp_path), str(logs)], capture_output=True, text=True,
                          timeout=120, cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"ok": True, "emulator": "gcplogging", "format": 1}
    assert oct((tmp_path / "services" / "control").stat().st_mode & 0o777) == "0o700"


def test_the_supervisor_passes_control_sockets() -> None:
    from decathlon.emulators.kit import spawn

    assert spawn.command("py", "mail", Path("/r"), control=Path("/h/services/control"))[-2:] == [
        "--control", "/h/services/control/mail.sock"]
    assert "--control" not in spawn.command("py", "mail", Path("/r"))
