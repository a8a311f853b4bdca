"""End-to-end tests of the Cloud Logging emulator (decathlon.emulators.gcplogging) with the real client library.

The emulator runs in the SaaS virtualenv as a subprocess; the client scripts run there too (google-cloud-logging
3.12.1, grpcio), on an insecure channel straight to the emulator's port (episodes reach it through the SaaS
front, which terminates TLS). The shapes are those of the Toolathlon tasks' preprocess and evaluators
(ab-testing, academic-warning, live-transactions) and of the google-cloud MCP server; the data is made up.
"""
from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from tests.saas_venv import REPO, run_client, saas_python

PROJECT = "emu-project"

# Clients on an insecure channel: the gapic clients take a transport built on it; logging.Client takes the
# gapic adapters (its own factory would open a TLS channel to logging.googleapis.com).
PRELUDE = '''
import json, os, sys, datetime as dt
import grpc
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import logging
from google.cloud.logging_v2 import _gapic
from google.cloud.logging_v2.services.config_service_v2 import ConfigServiceV2Client
from google.cloud.logging_v2.services.config_service_v2.transports import ConfigServiceV2GrpcTransport
from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
from google.cloud.logging_v2.services.logging_service_v2.transports import LoggingServiceV2GrpcTransport
from google.cloud.logging_v2.types import CreateBucketRequest, LogBucket, LogSink

ADDR = os.environ["GL_ADDR"]
P = os.environ["GL_PROJECT"]
config = ConfigServiceV2Client(transport=ConfigServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
gapic = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
client = logging.Client(project=P, credentials=AnonymousCredentials(), _use_grpc=True)
client._logging_api = _gapic._LoggingAPI(gapic, client)
client._sinks_api = _gapic._SinksAPI(config, client)
out = {}

def err(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exceptions.GoogleAPICallError as exc:
        return [exc.grpc_status_code.name if exc.grpc_status_code else type(exc).__name__, exc.message]
    return None

def timed(fn):
    """What `fn()` gave (or the status of the call that failed it) and how long it took."""
    import time
    started = time.monotonic()
    try:
        value = fn()
    except exceptions.GoogleAPICallError as exc:
        value = exc.grpc_status_code.name
    return value, time.monotonic() - started

def while_running(background, foreground):
    """`background()` on a thread of its own and, half a second in, `foreground(other)` on another client: each one's
    (value, seconds), the foreground's first."""
    import threading, time
    done = []
    thread = threading.Thread(target=lambda: done.append(timed(background)))
    thread.start()
    time.sleep(0.5)
    other = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(ADDR)))
    front = timed(lambda: foreground(other))
    thread.join(timeout=15)
    return front, (done[0] if done else (None, None))

def at(text):
    return dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc)
'''


class Emulator:
    def __init__(self, root: Path) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.log_path = root / "gcplogging.log"
        self.started = time.monotonic()
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.gcplogging", "--root", str(root)],
                                         stdout=subprocess.PIPE, stderr=log, text=True,
                                         env={**os.environ, "PYTHONPATH": str(REPO)})
        assert self.proc.stdout is not None
        self.ready_line = _first_line(self.proc.stdout, timeout=60).strip()
        match = re.fullmatch(r'ready gcplogging \{"grpc": (\d+)\}', self.ready_line)
        if not match:
            self.proc.kill()
            raise AssertionError(f"no ready line: {self.ready_line!r}; log: {self.log_path.read_text()[-2000:]}")
        self.port = int(match.group(1))

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            # an emulator whose event loop is stuck never sees SIGTERM: it must not outlive the test
            self.proc.kill()
            return self.proc.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text()


def _first_line(stream: IO[str], timeout: float) -> str:
    """The stream's first line, or "" when none comes within `timeout`: an emulator that hangs before its ready
    line fails the test instead of blocking it."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout)
    except queue.Empty:
        return ""


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[Emulator]:
    emu = Emulator(tmp_path_factory.mktemp("gcplogging"))
    yield emu
    emu.stop()


@pytest.fixture
def own_emulator(tmp_path: Path) -> Iterator[Emulator]:
    """An emulator for one test: the calls that used to stall one must not stall the other tests' emulator."""
    emu = Emulator(tmp_path / "own")
    yield emu
    emu.stop()


def _log_line(emu: Emulator, pattern: str, timeout: float = 5) -> re.Match[str] | None:
    """The first request-log line matching `pattern`, waited for up to `timeout` seconds (None if none came)."""
    deadline = time.monotonic() + timeout
    while True:
        found = next(filter(None, (re.search(pattern, line) for line in emu.log().splitlines())), None)
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def run(emu: Emulator, body: str, tmp_path: Path, project: str = PROJECT) -> dict[str, Any]:
    """`body` run after PRELUDE by the SaaS interpreter; it fills `out`, which comes back as a dict."""
    script = tmp_path / "client.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(out, default=str))\n")
    proc = subprocess.run([str(saas_python()), str(script)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GL_ADDR": f"127.0.0.1:{emu.port}", "GL_PROJECT": project})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, \
        f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}\n{emu.log()[-3000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def test_buckets_as_the_preprocess_manages_them(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        glob = f"projects/{P}/locations/global"
        out["initial"] = [[b.name, b.retention_days, b.locked, b.lifecycle_state.name]
                          for b in config.list_buckets(parent=f"projects/{P}/locations/-")]
        created = config.create_bucket(request=CreateBucketRequest(parent=glob, bucket_id="abtesting_logging-0a1b2c",
                                                                   bucket=LogBucket(retention_days=30)))
        out["created"] = [created.name, created.retention_days, created.lifecycle_state.name, created.create_time is not None]
        config.create_bucket(request={"parent": glob, "bucket_id": "Trading_Logging-x",
                                      "bucket": LogBucket(retention_days=7, description="trading")})
        out["again"] = err(config.create_bucket, request={"parent": glob, "bucket_id": "abtesting_logging-0a1b2c",
                                                          "bucket": LogBucket()})
        got = config.get_bucket(request={"name": f"{glob}/buckets/Trading_Logging-x"})
        out["get"] = [got.description, got.retention_days]
        out["missing"] = err(config.get_bucket, request={"name": f"{glob}/buckets/nope"})
        out["delete_missing"] = err(config.delete_bucket, request={"name": f"{glob}/buckets/nope"})
        out["listed"] = [b.name.split("/")[-1] for b in config.list_buckets(parent=glob)]
        out["other_location"] = [b.name for b in config.list_buckets(parent=f"projects/{P}/locations/us-east1")]
        config.delete_bucket(request={"name": created.name})
        out["after_delete"] = {b.name.split("/")[-1]: b.lifecycle_state.name for b in config.list_buckets(parent=glob)}
        out["recreate"] = err(config.create_bucket, request={"parent": glob, "bucket_id": "abtesting_logging-0a1b2c",
                                                             "bucket": LogBucket()})
        out["delete_twice"] = err(config.delete_bucket, request={"name": created.name})
        out["delete_default"] = err(config.delete_bucket, request={"name": f"{glob}/buckets/_Default"})
        config.undelete_bucket(request={"name": created.name})
        out["undeleted"] = config.get_bucket(request={"name": created.name}).lifecycle_state.name
        updated = config.update_bucket(request={"name": f"{glob}/buckets/Trading_Logging-x",
                                                "bucket": LogBucket(retention_days=60, description="ignored"),
                                                "update_mask": {"paths": ["retention_days"]}})
        out["updated"] = [updated.retention_days, updated.description]
        out["bad_parent"] = err(config.list_buckets, parent=f"projects/{P}")
        out["bad_id"] = err(config.create_bucket, request={"parent": glob, "bucket_id": "_mine", "bucket": LogBucket()})
        out["paged"] = [len(page.buckets) for page in config.list_buckets(request={"parent": glob, "page_size": 2}).pages]
    ''', tmp_path)
    glob = f"projects/{PROJECT}/locations/global"
    assert got["initial"] == [[f"{glob}/buckets/_Default", 30, False, "ACTIVE"],
                              [f"{glob}/buckets/_Required", 400, True, "ACTIVE"]]
    assert got["created"] == [f"{glob}/buckets/abtesting_logging-0a1b2c", 30, "ACTIVE", True]
    assert got["again"] == ["ALREADY_EXISTS", "Bucket abtesting_logging-0a1b2c already exists"]
    assert got["get"] == ["trading", 7]
    assert got["missing"] == ["NOT_FOUND", "Bucket nope does not exist"]
    assert got["delete_missing"] == ["NOT_FOUND", "Bucket nope does not exist"]
    assert got["listed"] == ["Trading_Logging-x", "_Default", "_Required", "abtesting_logging-0a1b2c"]
    assert got["other_location"] == []
    assert got["after_delete"]["abtesting_logging-0a1b2c"] == "DELETE_REQUESTED"
    assert got["after_delete"]["_Default"] == "ACTIVE"
    assert got["recreate"][0] == "ALREADY_EXISTS"
    assert got["delete_twice"][0] == "FAILED_PRECONDITION"
    assert got["delete_default"] == ["FAILED_PRECONDITION", "The _Default bucket cannot be deleted"]
    assert got["undeleted"] == "ACTIVE"
    assert got["updated"] == [60, "trading"]
    assert got["bad_parent"][0] == "INVALID_ARGUMENT" and "projects/[PROJECT_ID]/locations/[LOCATION_ID]" in got["bad_parent"][1]
    assert got["bad_id"][0] == "INVALID_ARGUMENT"
    assert got["paged"] == [2, 2]


def test_entries_with_the_evaluators_filters(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        log = client.logger("exam_log-5f6e")
        log.log_text("warming up", severity="INFO", timestamp=at("2025-10-21T09:00:00"))
        log.log_text("CRITICAL: Lisa Wright (S060) dropped 47.16%", severity="CRITICAL", timestamp=at("2025-10-21T13:10:00"))
        log.log_struct({"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"},
                       severity="CRITICAL", timestamp=at("2025-10-21T13:11:00"), labels={"team": "risk"})
        log.log_text("ERROR for S105", severity="ERROR", timestamp=at("2025-10-21T13:12:00"))
        log.log_text("late CRITICAL", severity="CRITICAL", timestamp=at("2025-10-21T15:00:00"))
        client.logger("other_log").log_text("T8492XJ3 elsewhere", severity="CRITICAL", timestamp=at("2025-10-21T13:13:00"))
        name = f"projects/{P}/logs/exam_log-5f6e"
        window = ' AND timestamp >= "2025-10-21T13:07:48+00:00" AND timestamp <= "2025-10-21T14:00:00+00:00"'

        def payloads(filter_, **kw):
            return [e.payload for e in client.list_entries(filter_=filter_, **kw)]

        # academic-warning: CRITICAL entries of the log in the task's window, newest first
        out["academic"] = payloads(f'logName="{name}" AND severity="CRITICAL"' + window,
                                   order_by=logging.DESCENDING, page_size=500)
        # ab-testing: the diagnostic exclusion is a text search; the evaluator drops the diagnostic entry itself
        abt = client.list_entries(filter_=f'logName="{name}" AND NOT jsonPayload.logging\\\\.googleapis\\\\.com/diagnostic'
                                  + window, order_by=logging.DESCENDING, page_size=500)
        out["abtesting"] = [e.payload for e in abt
                            if not (isinstance(e.payload, dict) and "logging.googleapis.com/diagnostic" in e.payload)]
        # live-transactions: OR binds tighter than AND
        out["live"] = payloads(f'logName="{name}" AND NOT jsonPayload.logging\\\\.googleapis\\\\.com/diagnostic AND '
                               'jsonPayload.transaction_id="T8492XJ3" OR textPayload:"T8492XJ3"' + window, page_size=500)
        # the client's first write adds it with no timestamp of its own: stamped on receipt, now, so outside the
        # window (the client's default filter, the last 24 hours, finds it)
        out["diagnostic"] = [sorted(e.payload) for e in client.list_entries(
            filter_=f'logName="{name}" AND jsonPayload.logging\\\\.googleapis\\\\.com/diagnostic:*')]
        out["diagnostic_in_window"] = len(list(client.list_entries(
            filter_=f'logName="{name}" AND jsonPayload.logging\\\\.googleapis\\\\.com/diagnostic:*' + window)))
        out["severity_ge"] = payloads(f'logName="{name}" severity>=ERROR' + window)
        out["severity_num"] = payloads(f'logName="{name}" AND severity<500 AND timestamp>="2025-10-21"')
        out["label"] = payloads(f'labels."team"="RISK" AND timestamp>="2025-10-21T00:00:00Z"')
        out["regex"] = payloads(f'textPayload=~"^ERROR for S1[0-9]+$" AND timestamp>="2025-10-21T00:00:00Z"')
        out["minus"] = payloads(f'logName="{name}" -severity=CRITICAL' + window)
        out["asc"] = [e.timestamp.isoformat() for e in client.list_entries(
            filter_=f'logName="{name}" AND timestamp>="2025-10-21T00:00:00Z" AND timestamp<"2025-10-22T00:00:00Z"',
            order_by=logging.ASCENDING)]
        pages = gapic.list_log_entries(request={"resource_names": [f"projects/{P}"], "page_size": 2,
                                                "filter": f'log_id("exam_log-5f6e") AND timestamp>="2025-10-21T00:00:00Z" '
                                                              'AND timestamp<"2025-10-22T00:00:00Z"',
                                                "order_by": "timestamp desc"}).pages
        out["pages"] = [[e.timestamp.isoformat() for e in page.entries] for page in pages]
        view = f"projects/{P}/locations/global/buckets/_Default/views/_AllLogs"
        out["view"] = len(list(client.list_entries(resource_names=[view], filter_='timestamp>="2025-10-21T00:00:00Z"')))
        out["default_window"] = len(list(client.list_entries(filter_=f'logName="{name}"')))
        first = next(iter(client.list_entries(filter_=f'logName="{name}" AND timestamp>="2025-10-21T13:11:00Z"',
                                                   order_by=logging.ASCENDING)))
        out["entry"] = [first.log_name, first.severity, first.labels, first.resource.type, len(first.insert_id),
                        first.received_timestamp is not None]
    ''', tmp_path)
    assert got["academic"] == [
        {"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"},
        "CRITICAL: Lisa Wright (S060) dropped 47.16%"]
    assert got["abtesting"] == ["ERROR for S105",
                                {"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"},
                                "CRITICAL: Lisa Wright (S060) dropped 47.16%"]
    assert got["live"] == [{"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"}]
    assert got["diagnostic"] == [["logging.googleapis.com/diagnostic"]] and got["diagnostic_in_window"] == 0
    assert got["severity_ge"] == ["CRITICAL: Lisa Wright (S060) dropped 47.16%",
                                  {"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"},
                                  "ERROR for S105"]
    # the diagnostic entry has no severity (DEFAULT) and the receive time as its timestamp (today: not in 2025's window)
    assert "warming up" in got["severity_num"] and "ERROR for S105" not in got["severity_num"]
    assert got["label"] == [{"alert_type": "Fraud", "transaction_id": "T8492XJ3", "status": "Pending_Investigation"}]
    assert got["regex"] == ["ERROR for S105"]
    assert got["minus"] == ["ERROR for S105"]
    assert got["asc"] == ["2025-10-21T09:00:00+00:00", "2025-10-21T13:10:00+00:00", "2025-10-21T13:11:00+00:00",
                          "2025-10-21T13:12:00+00:00", "2025-10-21T15:00:00+00:00"]
    assert got["pages"] == [["2025-10-21T15:00:00+00:00", "2025-10-21T13:12:00+00:00"],
                            ["2025-10-21T13:11:00+00:00", "2025-10-21T13:10:00+00:00"],
                            ["2025-10-21T09:00:00+00:00"]]
    assert got["view"] == 7  # the five of exam_log, other_log's and the diagnostic entry
    assert got["default_window"] == 1  # the client adds `timestamp >= 24 h ago`: only the diagnostic entry is that recent
    assert got["entry"] == [f"projects/{PROJECT}/logs/exam_log-5f6e", "CRITICAL", {"team": "risk"}, "global", 14, True]


def test_bad_requests_get_google_statuses_and_the_server_survives(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        def listing(**kw):
            request = {"resource_names": [f"projects/{P}"], **kw}
            return list(gapic.list_log_entries(request=request))
        out["unparseable"] = err(listing, filter='logName="x" AND (severity=ERROR')
        out["unquoted_time"] = err(listing, filter="timestamp>=2025-10-21T13:15:00Z")
        out["bad_severity"] = err(listing, filter="severity>=LOUD")
        out["bad_order"] = err(listing, order_by="severity desc")
        out["big_page"] = err(listing, page_size=1001)
        out["bad_token"] = err(listing, page_token="not-a-token")
        out["bad_resource"] = err(gapic.list_log_entries, request={"resource_names": ["project/x"]})
        out["no_bucket_view"] = err(listing, resource_names=[f"projects/{P}/locations/global/buckets/zzz/views/_AllLogs"])
        out["bad_log_name"] = err(gapic.write_log_entries, request={
            "entries": [{"log_name": f"projects/{P}/logs/bad name!", "resource": {"type": "global"}, "text_payload": "x"}]})
        out["no_resource"] = err(gapic.write_log_entries, request={
            "entries": [{"log_name": f"projects/{P}/logs/ok", "text_payload": "x"}]})
        out["too_big_entry"] = err(gapic.write_log_entries, request={
            "entries": [{"log_name": f"projects/{P}/logs/ok", "resource": {"type": "global"}, "text_payload": "x" * 300000}]})
        out["too_big_request"] = err(gapic.write_log_entries, request={
            "entries": [{"log_name": f"projects/{P}/logs/ok", "resource": {"type": "global"}, "text_payload": "y" * 200000}
                        for _ in range(60)]})
        out["unimplemented"] = err(config.list_views, parent=f"projects/{P}/locations/global/buckets/_Default")
        channel = grpc.insecure_channel(ADDR)
        garbage = channel.unary_unary("/google.logging.v2.LoggingServiceV2/ListLogEntries")
        try:
            garbage(b"\\xff\\xff\\xff")
            out["garbage"] = None
        except grpc.RpcError as exc:
            out["garbage"] = [exc.code().name, exc.details()]
        unknown = channel.unary_unary("/google.logging.v2.MetricsServiceV2/ListLogMetrics")
        try:
            unknown(b"")
        except grpc.RpcError as exc:
            out["unknown_service"] = exc.code().name
        out["still_serving"] = len(list(config.list_buckets(parent=f"projects/{P}/locations/global")))
    ''', tmp_path)
    assert got["unparseable"] == ["INVALID_ARGUMENT", "Unparseable filter: syntax error at line 1, column 32, token ''"]
    assert got["unquoted_time"] == ["INVALID_ARGUMENT", "Unparseable filter: syntax error at line 1, column 25, token ':'"]
    assert got["bad_severity"][0] == "INVALID_ARGUMENT" and "LOUD" in got["bad_severity"][1]
    assert got["bad_order"][0] == "INVALID_ARGUMENT"
    assert got["big_page"][0] == "INVALID_ARGUMENT"
    assert got["bad_token"] == ["INVALID_ARGUMENT", "The page token is invalid."]
    assert got["bad_resource"][0] == "INVALID_ARGUMENT"
    assert got["no_bucket_view"] == ["NOT_FOUND", "Bucket zzz does not exist"]
    assert got["bad_log_name"][0] == "INVALID_ARGUMENT" and "illegal characters" in got["bad_log_name"][1]
    assert got["no_resource"][0] == "INVALID_ARGUMENT"
    assert got["too_big_entry"][0] == "INVALID_ARGUMENT" and "exceeds maximum size of 256.0K" in got["too_big_entry"][1]
    assert got["too_big_request"][0] == "RESOURCE_EXHAUSTED"
    assert got["unimplemented"][0] == "UNIMPLEMENTED" and "ListViews" in got["unimplemented"][1]
    assert got["garbage"][0] == "INVALID_ARGUMENT"
    assert got["unknown_service"] == "UNIMPLEMENTED"
    assert got["still_serving"] >= 2
    log = emulator.log()
    assert "/google.logging.v2.LoggingServiceV2/ListLogEntries" in log and "INVALID_ARGUMENT" in log
    assert "Traceback" not in log


def test_sinks_logs_and_deletes(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        dest = f"logging.googleapis.com/projects/{P}/locations/global/buckets/_Default"
        created = config.create_sink(request={"parent": f"projects/{P}", "unique_writer_identity": True,
            "sink": LogSink(name="fraud_sink", destination=dest, filter='logName="projects/p/logs/fraud_alerts"')})
        out["created"] = [created.name, created.destination, created.filter, created.writer_identity]
        config.create_sink(request={"parent": f"projects/{P}", "sink": LogSink(name="a_sink", destination=dest,
            filter='severity="CRITICAL" AND logName=~".*academic.*" AND jsonPayload.student_id IS NOT NULL')})
        out["again"] = err(config.create_sink, request={"parent": f"projects/{P}",
                                                        "sink": LogSink(name="fraud_sink", destination=dest)})
        out["bad_filter"] = err(config.create_sink, request={"parent": f"projects/{P}",
                                                             "sink": LogSink(name="s2", destination=dest, filter="(")})
        out["listed"] = [s.name for s in config.list_sinks(parent=f"projects/{P}")]
        updated = config.update_sink(request={"sink_name": f"projects/{P}/sinks/fraud_sink",
                                              "sink": LogSink(filter="severity>=ERROR"), "update_mask": {"paths": ["filter"]}})
        out["updated"] = [updated.filter, updated.destination]
        out["got"] = config.get_sink(sink_name=f"projects/{P}/sinks/fraud_sink").filter
        config.delete_sink(sink_name=f"projects/{P}/sinks/fraud_sink")
        out["gone"] = err(config.get_sink, sink_name=f"projects/{P}/sinks/fraud_sink")
        client.logger("to_delete").log_text("bye")
        client.logger("kept/with_slash").log_text("hi")
        out["space"] = err(client.logger("with space").log_text, "no")
        out["logs"] = [n for n in gapic.list_logs(parent=f"projects/{P}")]
        client.logger("to_delete").delete()
        out["after"] = [n for n in gapic.list_logs(parent=f"projects/{P}")]
        out["delete_again"] = err(client.logger("to_delete").delete)
    ''', tmp_path, project="sink-project")
    prefix = "projects/sink-project"
    assert got["created"][:3] == ["fraud_sink", f"logging.googleapis.com/{prefix}/locations/global/buckets/_Default",
                                  'logName="projects/p/logs/fraud_alerts"']
    assert re.fullmatch(r"serviceAccount:service-\d{12}@gcp-sa-logging\.iam\.gserviceaccount\.com", got["created"][3])
    assert got["again"] == ["ALREADY_EXISTS", "Sink fraud_sink already exists"]
    assert got["bad_filter"][0] == "INVALID_ARGUMENT" and got["bad_filter"][1].startswith("Unparseable filter")
    assert got["listed"] == ["a_sink", "fraud_sink"]
    assert got["updated"] == ["severity>=ERROR", f"logging.googleapis.com/{prefix}/locations/global/buckets/_Default"]
    assert got["got"] == "severity>=ERROR"
    assert got["gone"] == ["NOT_FOUND", "Sink fraud_sink does not exist"]
    assert got["logs"] == [f"{prefix}/logs/kept%2Fwith_slash", f"{prefix}/logs/to_delete"]
    assert got["space"][0] == "INVALID_ARGUMENT" and "illegal characters" in got["space"][1]
    assert f"{prefix}/logs/to_delete" in got["logs"] and f"{prefix}/logs/to_delete" not in got["after"]
    assert got["delete_again"][0] == "NOT_FOUND"


def test_two_emulators_share_nothing_and_stop_cleanly(emulator: Emulator, tmp_path: Path) -> None:
    other = Emulator(tmp_path / "other")
    try:
        assert other.port != emulator.port
        run(emulator, '''
            config.create_bucket(request={"parent": f"projects/{P}/locations/global", "bucket_id": "only-in-first",
                                          "bucket": LogBucket()})
            client.logger("only_first").log_text("one")
        ''', tmp_path, project="iso")
        got = run(other, '''
            out["buckets"] = [b.name.split("/")[-1] for b in config.list_buckets(parent=f"projects/{P}/locations/-")]
            out["logs"] = list(gapic.list_logs(parent=f"projects/{P}"))
        ''', tmp_path, project="iso")
        assert got == {"buckets": ["_Default", "_Required"], "logs": []}
    finally:
        assert other.stop() == 0


def test_regular_expressions_have_re2_semantics(emulator: Emulator, tmp_path: Path) -> None:
    # Cloud Logging matches `=~` with RE2: `$` is the end of the text (not before a final newline), `\z`, POSIX
    # classes and Unicode classes exist; backreferences and lookaround do not, nor patterns past RE2's memory.
    got = run(emulator, r'''
        log = client.logger("re2_log")
        for text in ("ERROR for S105", "ERROR for S106\n", "Ελλάδα λ", "warning: aaaa"):
            log.log_text(text, timestamp=at("2025-11-01T10:00:00"))

        def query(regex):
            return f'log_id("re2_log") AND timestamp>="2025-11-01T00:00:00Z" AND textPayload=~"{regex}"'

        def payloads(regex):
            try:
                return sorted(e.payload for e in client.list_entries(filter_=query(regex)))
            except exceptions.GoogleAPICallError as exc:
                return [exc.grpc_status_code.name, exc.message]

        def refused(regex):
            return err(lambda: list(client.list_entries(filter_=query(regex))))

        out["anchored"] = payloads("^ERROR for S1[0-9]+$")
        out["end_of_text"] = payloads(r"S10[0-9]\\z")
        out["posix_class"] = payloads("^[[:upper:]]+ for")
        out["unicode_class"] = payloads(r"^\\p{Greek}+ ")
        out["case_flag"] = payloads("(?i)^WARNING: a+$")
        out["nested_quantifier"] = payloads("(a+)+$")
        out["backreference"] = refused(r"(a)\\1")
        out["lookahead"] = refused("warning(?=:)")
        out["python_only_escape"] = refused(r"S105\\Z")
        out["too_large"] = refused(r"\\pL{1000}")
        out["unbalanced"] = refused("(ERROR")
        out["lone_surrogate"] = refused(r"\uD800")
        out["too_long"] = err(lambda: list(client.list_entries(filter_='textPayload=~"' + "a" * 20000 + '"')))
    ''', tmp_path)
    assert got["anchored"] == ["ERROR for S105"]
    assert got["end_of_text"] == ["ERROR for S105"]
    assert got["posix_class"] == ["ERROR for S105", "ERROR for S106\n"]
    assert got["unicode_class"] == ["Ελλάδα λ"]
    assert got["case_flag"] == ["warning: aaaa"]
    assert got["nested_quantifier"] == ["warning: aaaa"]
    prefix = "Unparseable filter: invalid regular expression"
    assert got["backreference"] == ["INVALID_ARGUMENT",
                                    f"{prefix} '(a)\\1' at line 1, column 72: invalid escape sequence: \\1"]
    assert got["lookahead"] == ["INVALID_ARGUMENT",
                                f"{prefix} 'warning(?=:)' at line 1, column 72: invalid perl operator: (?="]
    assert got["python_only_escape"][0] == "INVALID_ARGUMENT" and "invalid escape sequence: \\Z" in got["python_only_escape"][1]
    assert got["too_large"][0] == "INVALID_ARGUMENT" and "pattern too large" in got["too_large"][1]
    assert got["unbalanced"][0] == "INVALID_ARGUMENT" and got["unbalanced"][1].startswith(prefix)
    assert got["lone_surrogate"] == ["INVALID_ARGUMENT", f"{prefix} '\\ud800' at line 1, column 72: invalid UTF-8"]
    assert got["too_long"][0] == "INVALID_ARGUMENT" and "20000" in got["too_long"][1]


def test_a_catastrophic_regex_answers_at_once_and_stalls_no_other_call(own_emulator: Emulator, tmp_path: Path) -> None:
    # The security report's filter: Python's backtracking `re` spent minutes on it on the event loop, so every
    # other client's call (the task's evaluator's) waited; RE2 answers in linear time.
    got = run(own_emulator, r'''
        gapic.write_log_entries(entries=[{"log_name": f"projects/{P}/logs/redos", "resource": {"type": "global"},
                                          "text_payload": "a" * 28 + "!"}], timeout=10)
        (out["logs"], out["logs_seconds"]), (out["evil"], out["evil_seconds"]) = while_running(
            lambda: [e.text_payload for e in gapic.list_log_entries(
                request={"resource_names": [f"projects/{P}"], "filter": 'textPayload=~"(a+)+$"'}, timeout=8, retry=None)],
            lambda other: list(other.list_logs(parent=f"projects/{P}", timeout=8, retry=None)))
    ''', tmp_path)
    # An answer at all is the check (stalled, each call would end DEADLINE_EXCEEDED at its client's 8 s); the times
    # leave room for a loaded machine.
    assert got["evil"] == [] and got["evil_seconds"] < 6, got
    assert got["logs"] == [f"projects/{PROJECT}/logs/redos"] and got["logs_seconds"] < 6, got


def test_a_slow_listing_delays_no_other_call_and_ends_at_its_deadline(own_emulator: Emulator, tmp_path: Path) -> None:
    # ~18,000 characters of words no entry has, each a text search of every field of 20 entries of 240 KB: far
    # more work than the caller's 3 s allow. It runs off the event loop and stops at the call's deadline.
    got = run(own_emulator, r'''
        for _ in range(2):
            gapic.write_log_entries(entries=[{"log_name": f"projects/{P}/logs/big", "resource": {"type": "global"},
                                              "text_payload": "x" * 240_000} for _ in range(10)], timeout=30)
        gapic.write_log_entries(entries=[{"log_name": f"projects/{P}/logs/small", "resource": {"type": "global"},
                                          "text_payload": "needle"}], timeout=10)
        heavy = " OR ".join(f"zq{i}" for i in range(1900))

        def innocent(other):
            logs = list(other.list_logs(parent=f"projects/{P}", timeout=8, retry=None))
            entries = [e.text_payload for e in other.list_log_entries(
                request={"resource_names": [f"projects/{P}"], "filter": 'log_id("small")'}, timeout=8, retry=None)]
            return logs, entries

        (both, out["innocent_seconds"]), (out["heavy"], out["heavy_seconds"]) = while_running(
            lambda: len(list(gapic.list_log_entries(request={"resource_names": [f"projects/{P}"], "filter": heavy},
                                                    timeout=3, retry=None))), innocent)
        out["logs"], out["entries"] = both if isinstance(both, tuple) else (both, None)
    ''', tmp_path)
    assert got["logs"] == [f"projects/{PROJECT}/logs/big", f"projects/{PROJECT}/logs/small"], got
    assert got["entries"] == ["needle"] and got["innocent_seconds"] < 6, got  # an answer, not the 8 s timeout
    assert got["heavy"] == "DEADLINE_EXCEEDED" and got["heavy_seconds"] < 5, got
    # the server too gave up at the deadline (answering it, or cancelled by grpc as the client left)
    ended = _log_line(own_emulator, r"filter='zq0 OR .*' (?:DEADLINE_EXCEEDED 'Deadline Exceeded'|CANCELLED) ([\d.]+)ms")
    assert ended and float(ended.group(1)) < 4000, own_emulator.log()[-2000:]
    assert "Traceback" not in own_emulator.log()


def test_the_server_caps_a_listing_without_a_deadline(tmp_path: Path) -> None:
    # A call without a deadline (or a far one) still ends: at the server's own limit, as DEADLINE_EXCEEDED.
    proc = run_client(textwrap.dedent('''
        import asyncio, time
        from decathlon.emulators.gcplogging import messages as m
        from decathlon.emulators.gcplogging.errors import ApiError
        from decathlon.emulators.gcplogging.logging_service import LoggingService
        from decathlon.emulators.gcplogging.store import Store
        from decathlon.emulators.kit.clock import system_clock
        from decathlon.emulators.kit.ids import Ids

        service = LoggingService(Store(lambda name, retention, locked: m.LogBucket(name=name)), system_clock, Ids(),
                                 max_list_seconds=0.5)
        service.WriteLogEntries(m.WriteLogEntriesRequest(entries=[
            m.LogEntry(log_name="projects/p/logs/big", resource={"type": "global"}, text_payload="x" * 240_000)
            for _ in range(20)]))
        request = m.ListLogEntriesRequest(resource_names=["projects/p"],
                                          filter=" OR ".join(f"zq{i}" for i in range(1900)))
        started = time.monotonic()
        try:
            asyncio.run(service.ListLogEntries(request, None))
            print("RESULT OK", round(time.monotonic() - started, 2))
        except ApiError as exc:
            print("RESULT", exc.code, exc.message, round(time.monotonic() - started, 2))
    '''), env={"PYTHONPATH": str(REPO)}, timeout=120)
    result = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert result, f"{proc.stdout}\n{proc.stderr}"
    words = result[-1].split()
    assert words[1:-1] == ["DEADLINE_EXCEEDED", "Deadline", "Exceeded"] and float(words[-1]) < 5, result
