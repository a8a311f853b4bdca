"""Contract tests of the gcp emulator (decathlon.emulators.gcp: BigQuery v2 on DuckDB, the Cloud Storage JSON API)
driven by the unmodified Google clients: google-cloud-bigquery 3.35 and google-cloud-storage 3.3, pointed at the
emulator by BIGQUERY_EMULATOR_HOST / STORAGE_EMULATOR_HOST with anonymous credentials.

The emulator runs in the SaaS virtualenv as a subprocess (one per module); the client scripts run there too and
print a `RESULT <json>` line. The calls are those Toolathlon's Google Cloud tasks make; the data is made up. Every
refusal must reach the client as Google's own error (the api_core exception of its status, Google's message and
reason), at once: never a 500, a traceback or a hang.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.saas_venv import REPO, saas_python

PROJECT = "emu-project"

PRELUDE = '''
import io, json, os, time
import requests
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery, storage

P = os.environ["GCP_PROJECT"]
bq = bigquery.Client(project=P, credentials=AnonymousCredentials())
gcs = storage.Client(project=P, credentials=AnonymousCredentials())
out = {}

def err(fn, *args, **kwargs):
    """[exception class, HTTP status, Google's message, reasons, seconds] of a call that must fail; None if it did not."""
    started = time.monotonic()
    try:
        got = fn(*args, **kwargs)
        if hasattr(got, "result"):
            got.result(timeout=30)
    except exceptions.GoogleAPICallError as exc:
        items = exc.errors or []
        message = (items[0].get("message") if items and isinstance(items[0], dict) else None) or exc.message
        reasons = [e.get("reason") for e in items if isinstance(e, dict)]
        return [type(exc).__name__, int(exc.code or 0), message, reasons, round(time.monotonic() - started, 2)]
    return None

def rows(sql, params=None):
    config = bigquery.QueryJobConfig(query_parameters=params) if params else None
    return [dict(r) for r in bq.query(sql, job_config=config).result(timeout=60)]
'''


def ready_line(proc: subprocess.Popen, timeout: float = 30.0) -> str:
    """The first line a process prints, waited for at most `timeout` seconds ("" if none came)."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    return proc.stdout.readline().strip() if ready else ""


class Emulator:
    def __init__(self, root: Path, **env: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.log_path = root / "gcp.log"
        with self.log_path.open("w") as log:
            self.proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.gcp", "--root", str(root)],
                                         stdout=subprocess.PIPE, stderr=log, text=True, cwd=str(root),
                                         env={**os.environ, "PYTHONPATH": str(REPO), **env})
        self.ready_line = ready_line(self.proc)
        match = re.fullmatch(r'ready gcp \{"http": (\d+)\}', self.ready_line)
        if not match:
            self.proc.kill()
            raise AssertionError(f"no ready line: {self.ready_line!r}; log: {self.log()[-2000:]}")
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=15)

    def log(self) -> str:
        return self.log_path.read_text()


@pytest.fixture(scope="module")
def emulator(tmp_path_factory) -> Iterator[Emulator]:
    emu = Emulator(tmp_path_factory.mktemp("gcp"))
    yield emu
    assert emu.stop() == 0


def run(emu: Emulator, body: str, tmp_path: Path, **env: str) -> dict[str, Any]:
    """`body` run after PRELUDE by the SaaS interpreter against `emu`; the `out` it fills comes back as a dict.
    The emulator's log must show no traceback and no 5xx answer afterwards."""
    script = tmp_path / "client.py"
    script.write_text(PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(out, default=str))\n")
    proc = subprocess.run([str(saas_python()), str(script)], capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
                          env={**os.environ, "BIGQUERY_EMULATOR_HOST": emu.url, "STORAGE_EMULATOR_HOST": emu.url,
                               "GCP_PROJECT": PROJECT, "PYTHONPATH": str(REPO), **env})
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    log = emu.log()
    assert proc.returncode == 0 and lines, f"client failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}\n{log[-3000:]}"
    assert "Traceback" not in log, log[-3000:]
    assert not re.search(r" 5\d\d [\d.]+ms$", log, re.M), log[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def quick(failure: list[Any] | None) -> list[Any]:
    """A refusal that came back at once (no client retry on a 5xx, no hang): its fields without the timing."""
    assert failure is not None, "the call succeeded"
    assert failure[4] < 10, failure
    return failure[:4]


def test_datasets_create_get_list_delete(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        ds = bigquery.Dataset(f"{P}.ds_life")
        ds.location = "US"
        ds.description = "lifecycle"
        created = bq.create_dataset(ds)
        out["created"] = [created.dataset_id, created.project, created.location, created.description]
        out["again"] = err(bq.create_dataset, bigquery.Dataset(f"{P}.ds_life"))
        out["exists_ok"] = bq.create_dataset(f"{P}.ds_life", exists_ok=True).dataset_id
        bq.create_dataset(f"{P}.ds_other")
        got = bq.get_dataset(f"{P}.ds_life")
        out["get"] = [got.full_dataset_id, got.location, got.description, got.created is not None]
        out["listed"] = sorted(d.dataset_id for d in bq.list_datasets())
        out["get_missing"] = err(bq.get_dataset, f"{P}.no_such_ds")
        bq.create_table(bigquery.Table(f"{P}.ds_life.t", schema=[bigquery.SchemaField("a", "INT64")]))
        out["in_use"] = err(bq.delete_dataset, f"{P}.ds_life")
        bq.delete_dataset(f"{P}.ds_life", delete_contents=True)
        out["after"] = sorted(d.dataset_id for d in bq.list_datasets())
        out["gone"] = err(bq.get_dataset, f"{P}.ds_life")
        out["delete_missing"] = err(bq.delete_dataset, f"{P}.ds_life")
        out["not_found_ok"] = bq.delete_dataset(f"{P}.ds_life", delete_contents=True, not_found_ok=True)
        out["bad_id"] = err(bq.create_dataset, f"{P}.bad-id")
        bq.delete_dataset(f"{P}.ds_other")
    ''', tmp_path)
    assert got["created"] == ["ds_life", PROJECT, "US", "lifecycle"]
    assert quick(got["again"]) == ["Conflict", 409, f"Already Exists: Dataset {PROJECT}:ds_life", ["duplicate"]]
    assert got["exists_ok"] == "ds_life"
    assert got["get"] == [f"{PROJECT}:ds_life", "US", "lifecycle", True]
    assert {"ds_life", "ds_other"} <= set(got["listed"])
    assert quick(got["get_missing"]) == ["NotFound", 404, f"Not found: Dataset {PROJECT}:no_such_ds", ["notFound"]]
    assert quick(got["in_use"]) == ["BadRequest", 400, f"Dataset {PROJECT}:ds_life is still in use", ["resourceInUse"]]
    assert "ds_life" not in got["after"] and "ds_other" in got["after"]
    assert quick(got["gone"])[:2] == ["NotFound", 404]
    assert quick(got["delete_missing"]) == ["NotFound", 404, f"Not found: Dataset {PROJECT}:ds_life", ["notFound"]]
    assert got["not_found_ok"] is None
    bad = quick(got["bad_id"])
    assert bad[:2] == ["BadRequest", 400] and 'Invalid dataset ID "bad-id"' in bad[2] and bad[3] == ["invalid"]


def test_tables_with_a_record_field_and_time_partitioning(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_tables")
        schema = [bigquery.SchemaField("order_id", "INT64", mode="REQUIRED"),
                  bigquery.SchemaField("placed_at", "TIMESTAMP"),
                  bigquery.SchemaField("customer", "RECORD", fields=[bigquery.SchemaField("name", "STRING"),
                                                                     bigquery.SchemaField("city", "STRING")]),
                  bigquery.SchemaField("tags", "STRING", mode="REPEATED")]
        table = bigquery.Table(f"{P}.ds_tables.orders", schema=schema)
        table.time_partitioning = bigquery.TimePartitioning(type_=bigquery.TimePartitioningType.DAY, field="placed_at")
        table.description = "orders by day"
        created = bq.create_table(table)
        out["created"] = [created.table_id, created.table_type, created.time_partitioning.type_,
                          created.time_partitioning.field]
        out["again"] = err(bq.create_table, bigquery.Table(f"{P}.ds_tables.orders", schema=schema))
        got = bq.get_table(f"{P}.ds_tables.orders")
        out["schema"] = [f.to_api_repr() for f in got.schema]
        out["get"] = [got.description, got.num_rows, got.partitioning_type, got.time_partitioning.field]
        bq.create_table(f"{P}.ds_tables.empty")
        out["listed"] = [t.table_id for t in bq.list_tables(f"{P}.ds_tables")]
        job = bq.load_table_from_json(
            [{"order_id": 1, "placed_at": "2025-04-15 22:36:01.357628 UTC",
              "customer": {"name": "Ann", "city": "Lyon"}, "tags": ["gift", "rush"]},
             {"order_id": 2, "placed_at": "2025-04-16T08:00:00Z", "customer": {"name": "Bob", "city": "Oslo"}, "tags": []}],
            f"{P}.ds_tables.orders")
        job.result(timeout=30)
        out["load"] = [job.state, job.output_rows, bq.get_table(f"{P}.ds_tables.orders").num_rows]
        out["nested"] = rows(f"SELECT order_id, customer.city AS city, ARRAY_LENGTH(tags) AS n_tags "
                             f"FROM `{P}.ds_tables.orders` ORDER BY order_id")
        out["list_rows"] = [[r["order_id"], r["customer"]["name"], list(r["tags"])]
                            for r in bq.list_rows(f"{P}.ds_tables.orders")]
        out["get_missing"] = err(bq.get_table, f"{P}.ds_tables.no_such_table")
        out["list_missing_ds"] = err(lambda: list(bq.list_tables(f"{P}.no_such_ds")))
        out["create_in_missing_ds"] = err(bq.create_table, bigquery.Table(f"{P}.no_such_ds.t", schema=schema))
        bq.delete_table(f"{P}.ds_tables.empty")
        out["after_delete"] = [t.table_id for t in bq.list_tables(f"{P}.ds_tables")]
        out["delete_missing"] = err(bq.delete_table, f"{P}.ds_tables.empty")
        out["not_found_ok"] = bq.delete_table(f"{P}.ds_tables.empty", not_found_ok=True)
    ''', tmp_path)
    assert got["created"] == ["orders", "TABLE", "DAY", "placed_at"]
    assert quick(got["again"]) == ["Conflict", 409, f"Already Exists: Table {PROJECT}:ds_tables.orders", ["duplicate"]]
    assert got["schema"] == [
        {"name": "order_id", "type": "INTEGER", "mode": "REQUIRED"},
        {"name": "placed_at", "type": "TIMESTAMP", "mode": "NULLABLE"},
        {"name": "customer", "type": "RECORD", "mode": "NULLABLE",
         "fields": [{"name": "name", "type": "STRING", "mode": "NULLABLE"},
                    {"name": "city", "type": "STRING", "mode": "NULLABLE"}]},
        {"name": "tags", "type": "STRING", "mode": "REPEATED"}]
    assert got["get"] == ["orders by day", 0, "DAY", "placed_at"]
    assert got["listed"] == ["empty", "orders"]
    assert got["load"] == ["DONE", 2, 2]
    assert got["nested"] == [{"order_id": 1, "city": "Lyon", "n_tags": 2}, {"order_id": 2, "city": "Oslo", "n_tags": 0}]
    assert got["list_rows"] == [[1, "Ann", ["gift", "rush"]], [2, "Bob", []]]
    assert quick(got["get_missing"]) == ["NotFound", 404, f"Not found: Table {PROJECT}:ds_tables.no_such_table",
                                         ["notFound"]]
    assert quick(got["list_missing_ds"]) == ["NotFound", 404, f"Not found: Dataset {PROJECT}:no_such_ds", ["notFound"]]
    assert quick(got["create_in_missing_ds"])[:2] == ["NotFound", 404]
    assert got["after_delete"] == ["orders"]
    assert quick(got["delete_missing"]) == ["NotFound", 404, f"Not found: Table {PROJECT}:ds_tables.empty", ["notFound"]]
    assert got["not_found_ok"] is None


def test_loads_autodetect_csv_timestamps_and_json(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_loads")
        csv = (b"order_id,customer,ordered_at,amount,paid,ship_date\\n"
               b"1001,Ann,2025-04-15 22:36:01.357628 UTC,19.99,true,2025-04-18\\n"
               b"1002,Bob,2025-04-16 08:00:00 UTC,5,false,2025-04-20\\n"
               b"1003,Cy,2025-04-17 09:30:00.5 UTC,12.5,true,\\n")
        config = bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.CSV, autodetect=True, skip_leading_rows=1)
        job = bq.load_table_from_file(io.BytesIO(csv), f"{P}.ds_loads.orders", job_config=config)
        job.result(timeout=30)
        out["job"] = [job.job_type, job.state, job.error_result, job.output_rows]
        out["schema"] = [[f.name, f.field_type] for f in bq.get_table(f"{P}.ds_loads.orders").schema]
        out["values"] = rows(f"SELECT order_id, ordered_at, amount, paid, ship_date FROM `{P}.ds_loads.orders` ORDER BY 1")
        # no skip_leading_rows: the header is recognised as one (all text over typed columns)
        auto = bigquery.LoadJobConfig(source_format=bigquery.SourceFormat.CSV, autodetect=True)
        bq.load_table_from_file(io.BytesIO(csv), f"{P}.ds_loads.orders_auto", job_config=auto).result(timeout=30)
        out["auto_schema"] = [[f.name, f.field_type] for f in bq.get_table(f"{P}.ds_loads.orders_auto").schema]
        # WRITE_TRUNCATE replaces, the default appends
        bq.load_table_from_file(io.BytesIO(csv), f"{P}.ds_loads.orders", job_config=config).result(timeout=30)
        out["appended"] = bq.get_table(f"{P}.ds_loads.orders").num_rows
        config.write_disposition = bigquery.WriteDisposition.WRITE_TRUNCATE
        bq.load_table_from_file(io.BytesIO(csv), f"{P}.ds_loads.orders", job_config=config).result(timeout=30)
        out["truncated"] = bq.get_table(f"{P}.ds_loads.orders").num_rows
        # load_table_from_json: schema given, and schema detected
        schema = [bigquery.SchemaField("sku", "STRING"), bigquery.SchemaField("qty", "INT64"),
                  bigquery.SchemaField("price", "NUMERIC")]
        job = bq.load_table_from_json([{"sku": "A-1", "qty": 3, "price": "9.99"}, {"sku": "B-2", "qty": 1, "price": 20}],
                                      f"{P}.ds_loads.items", job_config=bigquery.LoadJobConfig(schema=schema))
        job.result(timeout=30)
        out["json_rows"] = [[r["sku"], r["qty"], str(r["price"])] for r in
                            rows(f"SELECT * FROM `{P}.ds_loads.items` ORDER BY sku")]
        bq.load_table_from_json([{"name": "n1", "score": 1.5, "seen": "2025-01-02T03:04:05Z", "meta": {"k": 1}}],
                                f"{P}.ds_loads.detected").result(timeout=30)
        out["json_schema"] = [[f.name, f.field_type] for f in bq.get_table(f"{P}.ds_loads.detected").schema]
        out["into_missing_ds"] = err(bq.load_table_from_json, [{"a": 1}], f"{P}.no_such_ds.t")
        bad = io.BytesIO(b"sku,qty\\nA,notanumber\\n")
        out["bad_value"] = err(bq.load_table_from_file, bad, f"{P}.ds_loads.items",
                               job_config=bigquery.LoadJobConfig(source_format="CSV", skip_leading_rows=1))
    ''', tmp_path)
    assert got["job"] == ["load", "DONE", None, 3]
    assert got["schema"] == [["order_id", "INTEGER"], ["customer", "STRING"], ["ordered_at", "TIMESTAMP"],
                             ["amount", "FLOAT"], ["paid", "BOOLEAN"], ["ship_date", "DATE"]]
    assert got["values"] == [
        {"order_id": 1001, "ordered_at": "2025-04-15 22:36:01.357628+00:00", "amount": 19.99, "paid": True,
         "ship_date": "2025-04-18"},
        {"order_id": 1002, "ordered_at": "2025-04-16 08:00:00+00:00", "amount": 5.0, "paid": False,
         "ship_date": "2025-04-20"},
        {"order_id": 1003, "ordered_at": "2025-04-17 09:30:00.500000+00:00", "amount": 12.5, "paid": True,
         "ship_date": None}]
    assert got["auto_schema"] == got["schema"]
    assert got["appended"] == 6 and got["truncated"] == 3
    assert got["json_rows"] == [["A-1", 3, "9.99"], ["B-2", 1, "20"]]
    assert got["json_schema"] == [["name", "STRING"], ["score", "FLOAT"], ["seen", "TIMESTAMP"], ["meta", "RECORD"]]
    assert quick(got["into_missing_ds"]) == ["NotFound", 404, f"Not found: Dataset {PROJECT}:no_such_ds", ["notFound"]]
    bad = quick(got["bad_value"])
    assert bad[:2] == ["BadRequest", 400] and "notanumber" in bad[2] and bad[3] == ["invalid"]


def test_queries_as_the_tasks_write_them(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_sql")
        schema = [bigquery.SchemaField("region", "STRING"), bigquery.SchemaField("rep", "STRING"),
                  bigquery.SchemaField("amount", "INT64"), bigquery.SchemaField("ts", "TIMESTAMP")]
        bq.load_table_from_json([
            {"region": "EU", "rep": "ann", "amount": 10, "ts": "2025-04-15 22:36:01.357628 UTC"},
            {"region": "EU", "rep": "bob", "amount": 30, "ts": "2025-05-01 10:00:00 UTC"},
            {"region": "US", "rep": "cy", "amount": 20, "ts": "2025-06-30 23:59:59 UTC"},
            {"region": "US", "rep": "dee", "amount": 5, "ts": "2025-07-04 12:00:00 UTC"}],
            f"{P}.ds_sql.sales", job_config=bigquery.LoadJobConfig(schema=schema)).result(timeout=30)
        T = f"`{P}.ds_sql.sales`"
        out["param"] = rows(f"SELECT rep, amount FROM {T} WHERE region = @region AND amount >= @min ORDER BY rep",
                            [bigquery.ScalarQueryParameter("region", "STRING", "EU"),
                             bigquery.ScalarQueryParameter("min", "INT64", 20)])
        out["param_ts"] = rows(f"SELECT COUNT(*) AS n FROM {T} WHERE ts < @cut",
                               [bigquery.ScalarQueryParameter("cut", "TIMESTAMP", "2025-06-01T00:00:00Z")])
        out["cte"] = rows(f"WITH totals AS (SELECT region, SUM(amount) AS total FROM {T} GROUP BY region) "
                          "SELECT region, total FROM totals WHERE total > 20 ORDER BY total DESC")
        out["window"] = rows(f"SELECT rep, RANK() OVER (PARTITION BY region ORDER BY amount DESC) AS rk, "
                             f"SUM(amount) OVER (PARTITION BY region) AS region_total FROM {T} ORDER BY rep")
        out["string_agg"] = rows(f"SELECT region, STRING_AGG(rep, ', ' ORDER BY rep) AS reps FROM {T} "
                                 "GROUP BY region ORDER BY region")
        out["format"] = rows(f"SELECT rep, FORMAT_TIMESTAMP('%Y-%m-%d %H:%M:%S', ts) AS utc, "
                             f"FORMAT_TIMESTAMP('%Y-%m-%d %H:%M', ts, 'America/New_York') AS ny, "
                             f"EXTRACT(MONTH FROM ts) AS month, EXTRACT(YEAR FROM ts) AS year, "
                             f"EXTRACT(DAYOFWEEK FROM ts) AS dow FROM {T} WHERE rep IN ('ann', 'cy') ORDER BY rep")
        job = bq.query(f"CREATE TABLE `{P}.ds_sql.by_region` AS SELECT region, COUNT(*) AS n, SUM(amount) AS total "
                       f"FROM {T} GROUP BY region")
        job.result(timeout=30)
        out["ctas"] = [job.statement_type, job.ddl_operation_performed, job.ddl_target_table.table_id]
        job = bq.query(f"INSERT INTO `{P}.ds_sql.by_region` (region, n, total) VALUES ('APAC', 0, 0), ('LATAM', 1, 7)")
        job.result(timeout=30)
        out["insert"] = [job.statement_type, job.num_dml_affected_rows]
        out["by_region"] = rows(f"SELECT region, n, total FROM `{P}.ds_sql.by_region` ORDER BY region")
        out["tables"] = rows(f"SELECT table_name, table_type FROM `{P}.ds_sql.INFORMATION_SCHEMA.TABLES` ORDER BY 1")
        out["columns"] = rows(f"SELECT column_name, data_type, ordinal_position FROM `{P}.ds_sql`.INFORMATION_SCHEMA.COLUMNS "
                              "WHERE table_name = 'sales' ORDER BY ordinal_position")
        out["default_dataset"] = [dict(r) for r in bq.query(
            "SELECT COUNT(*) AS n FROM sales",
            job_config=bigquery.QueryJobConfig(default_dataset=f"{P}.ds_sql")).result(timeout=30)]
        out["anonymous"] = rows("SELECT 1 + 1, 'x'")
    ''', tmp_path)
    assert got["param"] == [{"rep": "bob", "amount": 30}]
    assert got["param_ts"] == [{"n": 2}]
    assert got["cte"] == [{"region": "EU", "total": 40}, {"region": "US", "total": 25}]
    assert got["window"] == [{"rep": "ann", "rk": 2, "region_total": 40}, {"rep": "bob", "rk": 1, "region_total": 40},
                             {"rep": "cy", "rk": 1, "region_total": 25}, {"rep": "dee", "rk": 2, "region_total": 25}]
    assert got["string_agg"] == [{"region": "EU", "reps": "ann, bob"}, {"region": "US", "reps": "cy, dee"}]
    assert got["format"] == [
        {"rep": "ann", "utc": "2025-04-15 22:36:01", "ny": "2025-04-15 18:36", "month": 4, "year": 2025, "dow": 3},
        {"rep": "cy", "utc": "2025-06-30 23:59:59", "ny": "2025-06-30 19:59", "month": 6, "year": 2025, "dow": 2}]
    assert got["ctas"] == ["CREATE_TABLE_AS_SELECT", "CREATE", "by_region"]
    assert got["insert"] == ["INSERT", 2]
    assert got["by_region"] == [{"region": "APAC", "n": 0, "total": 0}, {"region": "EU", "n": 2, "total": 40},
                                {"region": "LATAM", "n": 1, "total": 7}, {"region": "US", "n": 2, "total": 25}]
    assert got["tables"] == [{"table_name": "by_region", "table_type": "BASE TABLE"},
                             {"table_name": "sales", "table_type": "BASE TABLE"}]
    assert got["columns"] == [{"column_name": "region", "data_type": "STRING", "ordinal_position": 1},
                              {"column_name": "rep", "data_type": "STRING", "ordinal_position": 2},
                              {"column_name": "amount", "data_type": "INT64", "ordinal_position": 3},
                              {"column_name": "ts", "data_type": "TIMESTAMP", "ordinal_position": 4}]
    assert got["default_dataset"] == [{"n": 4}]
    assert got["anonymous"] == [{"f0_": 2, "f1_": "x"}]


def test_query_errors_come_back_as_google_errors(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_errs")
        bq.create_table(bigquery.Table(f"{P}.ds_errs.t", schema=[bigquery.SchemaField("a", "INT64")]))
        out["syntax"] = err(bq.query, f"SELECT a FROM FROM `{P}.ds_errs.t`")
        out["truncated"] = err(bq.query, f"SELECT * FROM `{P}.ds_errs.t` WHERE")
        out["missing_dataset"] = err(bq.query, f"SELECT * FROM `{P}.no_such_ds.t`")
        out["missing_table"] = err(bq.query, f"SELECT * FROM `{P}.ds_errs.no_such_table`")
        out["missing_column"] = err(bq.query, f"SELECT nope FROM `{P}.ds_errs.t`")
        out["missing_param"] = err(bq.query, f"SELECT a FROM `{P}.ds_errs.t` WHERE a = @x")
        out["unqualified"] = err(bq.query, "SELECT * FROM t")
        out["empty"] = err(bq.query, "   ")
        job = bq.query(f"SELECT a FROM FROM `{P}.ds_errs.t`")
        try:
            job.result(timeout=30)
        except exceptions.BadRequest:
            pass
        out["job_status"] = [job.state, job.error_result["reason"]]
        out["still_answers"] = rows("SELECT 41 + 1 AS n")
    ''', tmp_path)
    syntax = quick(got["syntax"])
    assert syntax[:2] == ["BadRequest", 400] and syntax[3] == ["invalidQuery"]
    assert re.fullmatch(r"Syntax error: .+ at \[1:\d+\]", syntax[2]), syntax
    truncated = quick(got["truncated"])
    assert truncated[:2] == ["BadRequest", 400] and truncated[2].startswith("Syntax error: ")
    assert quick(got["missing_dataset"]) == [
        "NotFound", 404, f"Not found: Dataset {PROJECT}:no_such_ds was not found in location US", ["notFound"]]
    assert quick(got["missing_table"]) == [
        "NotFound", 404, f"Not found: Table {PROJECT}:ds_errs.no_such_table was not found in location US", ["notFound"]]
    assert quick(got["missing_column"]) == ["BadRequest", 400, "Unrecognized name: nope at [1:8]", ["invalidQuery"]]
    missing_param = quick(got["missing_param"])
    assert missing_param[:2] == ["BadRequest", 400] and "x" in missing_param[2]
    unqualified = quick(got["unqualified"])
    assert unqualified[:2] == ["BadRequest", 400] and "must be qualified with a dataset" in unqualified[2]
    assert quick(got["empty"])[:2] == ["BadRequest", 400]
    assert got["job_status"] == ["DONE", "invalidQuery"]
    assert got["still_answers"] == [{"n": 42}]


def test_query_result_over_the_page_cap_is_paged(emulator: Emulator, tmp_path: Path) -> None:
    # The emulator caps one response's rows at ~10 MiB (bigquery/resources.py PAGE_BYTES, BigQuery's own page
    # cap); a bigger result comes in pages behind pageToken, which RowIterator follows.
    got = run(emulator, '''
        job = bq.query("SELECT n, REPEAT('x', 1000) AS pad FROM UNNEST(GENERATE_ARRAY(1, 12000)) AS n ORDER BY n")
        it = job.result(timeout=60)
        pages, seen, total, pads = [], 0, 0, set()
        for page in it.pages:
            pages.append(page.num_items)
            for row in page:
                seen += 1
                total += row["n"]
                pads.add(len(row["pad"]))
        out["result"] = [it.total_rows, seen, total, sorted(pads), pages]
    ''', tmp_path)
    total_rows, seen, total, pads, pages = got["result"]
    assert (total_rows, seen, total, pads) == (12000, 12000, 12000 * 12001 // 2, [1000])
    assert len(pages) >= 2 and sum(pages) == 12000 and all(p > 0 for p in pages)


def test_extract_to_gcs_and_load_back(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_extract")
        schema = [bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("name", "STRING"),
                  bigquery.SchemaField("seen_at", "TIMESTAMP")]
        bq.load_table_from_json([{"id": 1, "name": "Ann", "seen_at": "2025-04-15 22:36:01.357628 UTC"},
                                 {"id": 2, "name": "Bob, Jr.", "seen_at": "2025-04-16 08:00:00 UTC"}],
                                f"{P}.ds_extract.people", job_config=bigquery.LoadJobConfig(schema=schema)).result(timeout=30)
        gcs.create_bucket("emu-exports", location="US")
        job = bq.extract_table(f"{P}.ds_extract.people", "gs://emu-exports/exports/people-*.csv")
        job.result(timeout=30)
        out["job"] = [job.job_type, job.state, job.destination_uri_file_counts]
        blobs = list(gcs.list_blobs("emu-exports", prefix="exports/"))
        out["blobs"] = [b.name for b in blobs]
        out["csv"] = blobs[0].download_as_text() if blobs else None
        config = bigquery.job.ExtractJobConfig(destination_format=bigquery.DestinationFormat.NEWLINE_DELIMITED_JSON)
        bq.extract_table(f"{P}.ds_extract.people", "gs://emu-exports/people.json", job_config=config).result(timeout=30)
        text = gcs.bucket("emu-exports").blob("people.json").download_as_text()
        out["ndjson"] = [json.loads(line) for line in text.splitlines()]
        load = bq.load_table_from_uri("gs://emu-exports/exports/people-*.csv", f"{P}.ds_extract.copy",
                                      job_config=bigquery.LoadJobConfig(source_format="CSV", autodetect=True,
                                                                        skip_leading_rows=1))
        load.result(timeout=30)
        out["loaded_back"] = rows(f"SELECT id, name, seen_at FROM `{P}.ds_extract.copy` ORDER BY id")
        out["to_missing_bucket"] = err(bq.extract_table, f"{P}.ds_extract.people", "gs://no-such-bucket-x/p.csv")
        out["from_missing_uri"] = err(bq.load_table_from_uri, "gs://emu-exports/nothing-here.csv", f"{P}.ds_extract.x",
                                      job_config=bigquery.LoadJobConfig(source_format="CSV", autodetect=True))
        out["missing_source"] = err(bq.extract_table, f"{P}.ds_extract.no_such_table", "gs://emu-exports/x.csv")
    ''', tmp_path)
    assert got["job"] == ["extract", "DONE", [1]]
    assert got["blobs"] == ["exports/people-000000000000.csv"]
    assert got["csv"] == ('id,name,seen_at\n1,Ann,2025-04-15 22:36:01.357628 UTC\n'
                          '2,"Bob, Jr.",2025-04-16 08:00:00 UTC\n')
    assert got["ndjson"] == [{"id": "1", "name": "Ann", "seen_at": "2025-04-15 22:36:01.357628 UTC"},
                             {"id": "2", "name": "Bob, Jr.", "seen_at": "2025-04-16 08:00:00 UTC"}]
    assert got["loaded_back"] == [{"id": 1, "name": "Ann", "seen_at": "2025-04-15 22:36:01.357628+00:00"},
                                  {"id": 2, "name": "Bob, Jr.", "seen_at": "2025-04-16 08:00:00+00:00"}]
    assert quick(got["to_missing_bucket"])[:2] == ["NotFound", 404]
    assert "gs://no-such-bucket-x/p.csv" in got["to_missing_bucket"][2]
    assert quick(got["from_missing_uri"])[:2] == ["NotFound", 404]
    assert quick(got["missing_source"]) == ["NotFound", 404, f"Not found: Table {PROJECT}:ds_extract.no_such_table",
                                            ["notFound"]]


def test_storage_buckets_and_blobs(emulator: Emulator, tmp_path: Path) -> None:
    got = run(emulator, '''
        bucket = gcs.create_bucket("emu-reports", location="us-central1")
        out["created"] = [bucket.name, bucket.location, bucket.location_type, bucket.storage_class]
        out["again"] = err(gcs.create_bucket, "emu-reports")
        out["get"] = [gcs.get_bucket("emu-reports").location, gcs.lookup_bucket("no-such-bucket-x")]
        gcs.create_bucket("emu-scratch")
        out["listed"] = sorted(b.name for b in gcs.list_buckets())
        bucket.blob("reports/2025/q1.csv").upload_from_string("region,total\\nEU,40\\n", content_type="text/csv")
        bucket.blob("reports/2025/q2.csv").upload_from_string("region,total\\nUS,25\\n", content_type="text/csv")
        bucket.blob("notes/readme.txt").upload_from_string("héllo wörld")
        out["exists"] = [bucket.blob("reports/2025/q1.csv").exists(), bucket.blob("reports/2025/q9.csv").exists()]
        out["prefix"] = [b.name for b in gcs.list_blobs("emu-reports", prefix="reports/")]
        out["all"] = [b.name for b in bucket.list_blobs()]
        out["text"] = [bucket.blob("reports/2025/q1.csv").download_as_text(), bucket.blob("notes/readme.txt").download_as_text()]
        meta = bucket.get_blob("reports/2025/q1.csv")
        out["meta"] = [meta.size, meta.content_type, meta.md5_hash is not None]
        out["get_missing_blob"] = bucket.get_blob("reports/2025/q9.csv")
        out["download_missing"] = err(bucket.blob("reports/2025/q9.csv").download_as_text)
        bucket.blob("reports/2025/q2.csv").delete()
        out["after_delete"] = [b.name for b in gcs.list_blobs("emu-reports", prefix="reports/")]
        out["delete_missing"] = err(bucket.blob("reports/2025/q2.csv").delete)
        out["get_missing_bucket"] = err(gcs.get_bucket, "no-such-bucket-x")
        out["list_missing_bucket"] = err(lambda: list(gcs.list_blobs("no-such-bucket-x")))
        out["upload_missing_bucket"] = err(gcs.bucket("no-such-bucket-x").blob("a.txt").upload_from_string, "a")
        out["not_empty"] = err(bucket.delete)
        bucket.delete(force=True)
        gcs.bucket("emu-scratch").delete()
        out["after"] = [b.name for b in gcs.list_buckets() if b.name in ("emu-reports", "emu-scratch")]
        out["delete_missing_bucket"] = err(gcs.bucket("emu-reports").delete)
    ''', tmp_path)
    assert got["created"] == ["emu-reports", "US-CENTRAL1", "region", "STANDARD"]
    assert quick(got["again"])[:2] == ["Conflict", 409] and got["again"][3] == ["conflict"]
    assert got["get"] == ["US-CENTRAL1", None]
    assert {"emu-reports", "emu-scratch"} <= set(got["listed"])
    assert got["exists"] == [True, False]
    assert got["prefix"] == ["reports/2025/q1.csv", "reports/2025/q2.csv"]
    assert got["all"] == ["notes/readme.txt", "reports/2025/q1.csv", "reports/2025/q2.csv"]
    assert got["text"] == ["region,total\nEU,40\n", "héllo wörld"]
    assert got["meta"] == [len("region,total\nEU,40\n"), "text/csv", True]
    assert got["get_missing_blob"] is None
    missing = quick(got["download_missing"])
    assert missing[:2] == ["NotFound", 404] and "No such object: emu-reports/reports/2025/q9.csv" in missing[2]
    assert got["after_delete"] == ["reports/2025/q1.csv"]
    assert quick(got["delete_missing"]) == ["NotFound", 404, "No such object: emu-reports/reports/2025/q2.csv", ["notFound"]]
    assert quick(got["get_missing_bucket"]) == ["NotFound", 404, "The specified bucket does not exist.", ["notFound"]]
    assert quick(got["list_missing_bucket"]) == ["NotFound", 404, "The specified bucket does not exist.", ["notFound"]]
    upload = quick(got["upload_missing_bucket"])
    assert upload[:2] == ["NotFound", 404] and "The specified bucket does not exist." in upload[2]
    assert quick(got["not_empty"]) == ["Conflict", 409, "The bucket you tried to delete is not empty.", ["conflict"]]
    assert got["after"] == []
    assert quick(got["delete_missing_bucket"])[:2] == ["NotFound", 404]


def _google_error(resp: requests.Response, status: int, reason: str) -> str:
    assert resp.status_code == status, (resp.status_code, resp.text)
    assert resp.headers["Content-Type"].startswith("application/json"), resp.headers
    error = resp.json()["error"]
    assert error["code"] == status and error["status"]
    assert error["errors"][0]["reason"] == reason and error["errors"][0]["message"] == error["message"]
    assert "Traceback" not in resp.text
    return error["message"]


def test_unknown_paths_methods_and_bodies_over_raw_http(emulator: Emulator) -> None:
    base = emulator.url
    bq, gcs = f"{base}/bigquery/v2/projects/{PROJECT}", f"{base}/storage/v1"
    # unknown API paths: a JSON 404 (not the XML API's NoSuchBucket, whose `/<bucket>/<object>` route is a catch-all)
    for method, url in (("GET", f"{bq}/frobnicate"), ("POST", f"{bq}/datasets/x/frobnicate"), ("GET", f"{gcs}/frobnicate"),
                        ("GET", f"{base}/upload/storage/v1/b/x"), ("POST", f"{base}/upload/bigquery/v2/projects/{PROJECT}/x"),
                        ("GET", f"{base}/frobnicate")):
        resp = requests.request(method, url, timeout=10)
        assert _google_error(resp, 404, "notFound") == f"Not Found: {method} {url[len(base):]}"
    # a known path, a method it does not take: 405, and the body says 405 too
    for method, url in (("DELETE", f"{bq}/queries"), ("PATCH", f"{gcs}/b"), ("PUT", f"{bq}/jobs/some-job"),
                        ("GET", f"{base}/token")):
        resp = requests.request(method, url, timeout=10)
        assert _google_error(resp, 405, "methodNotAllowed") == f"Method Not Allowed: {method} {url[len(base):]}"
    # bodies that are no JSON object
    resp = requests.post(f"{bq}/datasets", data=b"{not json", headers={"Content-Type": "application/json"}, timeout=10)
    assert _google_error(resp, 400, "parseError").startswith("Parse error")
    resp = requests.post(f"{bq}/queries", json=["SELECT 1"], timeout=10)
    assert _google_error(resp, 400, "parseError").startswith("Parse error")
    resp = requests.post(f"{bq}/queries", json={"query": "SELECT 1 +"}, timeout=10)
    assert _google_error(resp, 400, "invalidQuery").startswith("Syntax error: ")
    resp = requests.post(f"{gcs}/b", params={"project": PROJECT}, data=b"[]", timeout=10)
    assert _google_error(resp, 400, "parseError")
    resp = requests.post(f"{gcs}/b", params={"project": PROJECT}, json={"name": "Bad_Name"}, timeout=10)
    assert _google_error(resp, 400, "invalid") == "Invalid bucket name: 'Bad_Name'"
    # the XML-style media path still serves objects and answers XML for missing ones
    requests.post(f"{gcs}/b", params={"project": PROJECT}, json={"name": "emu-raw"}, timeout=10).raise_for_status()
    requests.post(f"{base}/upload/storage/v1/b/emu-raw/o", params={"uploadType": "media", "name": "dir/a.txt"},
                  data=b"raw bytes", headers={"Content-Type": "text/plain"}, timeout=10).raise_for_status()
    resp = requests.get(f"{base}/emu-raw/dir/a.txt", timeout=10)
    assert (resp.status_code, resp.content) == (200, b"raw bytes")
    resp = requests.get(f"{base}/emu-raw/dir/missing.txt", timeout=10)
    assert resp.status_code == 404 and "<Code>NoSuchKey</Code>" in resp.text
    resp = requests.get(f"{gcs}/b/emu-raw/o/dir%2Fmissing.txt", timeout=10)
    assert _google_error(resp, 404, "notFound") == "No such object: emu-raw/dir/missing.txt"
    assert "Traceback" not in emulator.log()


REQUEST_CAP = '''
import asyncio, threading
from aiohttp import web
from decathlon.emulators.gcp.app import MAX_BODY, make_apps

CAP = 64 * 1024
app, _control, _state = make_apps(max_body=CAP)
ready, where = threading.Event(), {}

async def serve():
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    where["url"] = f"http://127.0.0.1:{runner.addresses[0][1]}"
    ready.set()
    await asyncio.Event().wait()

threading.Thread(target=lambda: asyncio.run(serve()), daemon=True).start()
assert ready.wait(30)
os.environ["BIGQUERY_EMULATOR_HOST"] = os.environ["STORAGE_EMULATOR_HOST"] = where["url"]
bq = bigquery.Client(project=P, credentials=AnonymousCredentials())
gcs = storage.Client(project=P, credentials=AnonymousCredentials())
out["default_cap"] = MAX_BODY
big = "x" * (CAP + 1)
resp = requests.post(where["url"] + f"/bigquery/v2/projects/{P}/queries", json={"query": f"SELECT '{big}'"}, timeout=10)
out["raw"] = [resp.status_code, resp.headers["Content-Type"].split(";")[0], resp.json()]
out["query"] = err(bq.query, f"SELECT '{big}' AS s")
bq.create_dataset(f"{P}.capped")
out["load"] = err(bq.load_table_from_json, [{"s": big}], f"{P}.capped.t")
gcs.create_bucket("emu-capped")
out["upload"] = err(gcs.bucket("emu-capped").blob("big.txt").upload_from_string, big)
gcs.bucket("emu-capped").blob("small.txt").upload_from_string("x" * (CAP // 2))
half = "y" * (CAP // 2)
out["under_cap"] = [rows(f"SELECT LENGTH('{half}') AS n"), gcs.bucket("emu-capped").get_blob("small.txt").size]
'''


def test_request_body_over_the_cap(emulator: Emulator, tmp_path: Path) -> None:
    """The cap is the app's client_max_size (gcp/app.py MAX_BODY, 1 GiB): sending that much is no test, so the
    same app is built in process with a 64 KiB cap (make_apps(max_body=...)) and driven by the same clients."""
    got = run(emulator, REQUEST_CAP, tmp_path)
    assert got["default_cap"] == 1024 ** 3
    message = f"Request payload size exceeds the limit: {64 * 1024} bytes."
    status, content_type, body = got["raw"]
    assert (status, content_type) == (400, "application/json")
    assert body == {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT",
                              "errors": [{"message": message, "domain": "global", "reason": "badRequest"}]}}
    assert quick(got["query"]) == ["BadRequest", 400, message, ["badRequest"]]
    assert quick(got["load"])[:2] == ["BadRequest", 400] and message in got["load"][2]
    assert quick(got["upload"])[:2] == ["BadRequest", 400] and message in got["upload"][2]
    assert got["under_cap"] == [[{"n": 32 * 1024}], 32 * 1024]


def test_two_emulators_share_no_state(emulator: Emulator, tmp_path: Path) -> None:
    other = Emulator(tmp_path / "other")
    try:
        assert other.port != emulator.port
        body = '''
            mine, theirs = os.environ["MINE"], os.environ["THEIRS"]
            bq.create_dataset(f"{P}.{mine}")
            bq.create_table(bigquery.Table(f"{P}.{mine}.t", schema=[bigquery.SchemaField("a", "INT64")]))
            gcs.create_bucket(mine.replace("_", "-"))
            gcs.bucket(mine.replace("_", "-")).blob("o.txt").upload_from_string(mine)
            out["datasets"] = sorted(d.dataset_id for d in bq.list_datasets())
            out["buckets"] = sorted(b.name for b in gcs.list_buckets())
            out["theirs"] = [err(bq.get_dataset, f"{P}.{theirs}"), err(gcs.get_bucket, theirs.replace("_", "-"))]
            out["tables"] = rows(f"SELECT table_schema, table_name FROM `{P}.region-us.INFORMATION_SCHEMA.TABLES` "
                                 f"WHERE table_schema IN ('{mine}', '{theirs}')")
        '''
        (tmp_path / "first").mkdir()
        (tmp_path / "second").mkdir()
        first = run(emulator, body, tmp_path / "first", MINE="iso_first", THEIRS="iso_second")
        second = run(other, body, tmp_path / "second", MINE="iso_second", THEIRS="iso_first")
    finally:
        code = other.stop()
    assert code == 0
    assert "iso_first" in first["datasets"] and "iso_second" not in first["datasets"]
    assert second["datasets"] == ["iso_second"] and second["buckets"] == ["iso-second"]
    assert "iso-first" in first["buckets"] and "iso-second" not in first["buckets"]
    for got, theirs in ((first, "iso_second"), (second, "iso_first")):
        assert [quick(e)[:2] for e in got["theirs"]] == [["NotFound", 404], ["NotFound", 404]]
        assert got["theirs"][0][2] == f"Not found: Dataset {PROJECT}:{theirs}"
    assert first["tables"] == [{"table_schema": "iso_first", "table_name": "t"}]
    assert second["tables"] == [{"table_schema": "iso_second", "table_name": "t"}]


def test_duckdb_functions_bigquery_lacks_are_refused_in_bigquerys_words(emulator: Emulator, tmp_path: Path) -> None:
    """The agent's SQL reaches DuckDB: its file, system and extension functions (read_text, read_csv, glob, query,
    getenv, COPY, ATTACH, INSTALL) must answer as BigQuery answers a function it does not have, and no file of the
    host comes back whatever the spelling (DuckDB's file access is off besides)."""
    secret = tmp_path / "grader_secret.csv"
    secret.write_text("answer\nTHE-GROUND-TRUTH\n")
    got = run(emulator, f'''
        bq.create_dataset(f"{{P}}.ds_jail")
        bq.query(f"CREATE TABLE `{{P}}.ds_jail.t` AS SELECT 1 AS a").result(timeout=30)
        cases = {{
            "read_text": "SELECT content FROM read_text('{secret}')",
            "read_text_scalar": "SELECT read_text('{secret}')",
            "read_csv": "SELECT * FROM read_csv('{secret}')",
            "glob": "SELECT * FROM glob('{tmp_path}/*')",
            "query": "SELECT * FROM query('SELECT 1')",
            "getenv": "SELECT getenv('HOME') AS h",
            "settings": "SELECT * FROM duckdb_settings()",
            "version": "SELECT version() AS v",
            "copy": f"COPY `{{P}}.ds_jail.t` TO '{tmp_path}/out.csv'",
            "attach": "ATTACH '{tmp_path}/x.db' AS x",
            "install": "INSTALL httpfs",
            "load": "LOAD httpfs",
            "quoted_path": "SELECT * FROM `{secret}`",
        }}
        out["refused"] = {{name: err(bq.query, sql) for name, sql in cases.items()}}
        out["bigquery_functions_still_run"] = rows(
            "SELECT SAFE_DIVIDE(1, 0) AS d, FORMAT_DATE('%Y', DATE '2024-05-06') AS y, "
            "ARRAY_LENGTH(GENERATE_ARRAY(1, 3)) AS n, REGEXP_CONTAINS('abc', 'b') AS r")
    ''', tmp_path)
    refused = {name: quick(failure) for name, failure in got["refused"].items()}
    assert refused["read_text"] == ["BadRequest", 400, "Table-valued function not found: read_text at [1:21]",
                                    ["invalidQuery"]]
    assert refused["read_text_scalar"] == ["BadRequest", 400, "Function not found: read_text at [1:8]", ["invalidQuery"]]
    assert refused["read_csv"][2] == "Table-valued function not found: read_csv at [1:15]"
    assert refused["glob"][:2] == ["BadRequest", 400]  # GLOB is an operator to sqlglot: a syntax error
    assert refused["query"][2].startswith("Table-valued function not found: query")
    assert refused["getenv"][2] == "Function not found: getenv at [1:8]"
    assert refused["settings"][2].startswith("Table-valued function not found: duckdb_settings")
    assert refused["version"][2] == "Function not found: version at [1:8]"
    for name in ("copy", "attach", "install", "load", "quoted_path"):
        assert refused[name][:2] in (["BadRequest", 400], ["NotFound", 404]), (name, refused[name])
    assert "THE-GROUND-TRUTH" not in json.dumps(got)
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "x.db").exists()
    assert got["bigquery_functions_still_run"] == [{"d": None, "y": "2024", "n": 3, "r": True}]


HEAVY = ("SELECT SUM(LENGTH(REPEAT('x', MOD(a * b, 1000)))) AS s "
         "FROM UNNEST(GENERATE_ARRAY(1, 20000)) AS a, UNNEST(GENERATE_ARRAY(1, 20000)) AS b")


def test_a_heavy_query_stalls_no_other_client_and_jobs_cancel_stops_it(tmp_path: Path) -> None:
    """One query the agent sends must not hold the warehouse for the evaluator after it: a trivial query from
    another client is answered while it runs (the heavy job is still RUNNING when the answer comes, however loaded
    the machine), and jobs.cancel stops it inside DuckDB (`stopped`) long before its bound."""
    emu = Emulator(tmp_path / "emu", DECATHLON_BIGQUERY_JOB_SECONDS="60")
    try:
        got = run(emu, f'''
            heavy = bq.query({HEAVY!r})
            out["trivial"] = rows("SELECT 1 AS one")
            out["heavy_state_after_trivial"] = bq.get_job(heavy.job_id).state
            started = time.monotonic()
            heavy.cancel()
            out["cancelled"] = err(heavy.result)
            out["cancel_seconds"] = time.monotonic() - started
            heavy.reload()
            out["cancelled_final"] = [heavy.state, heavy.error_result["reason"], heavy.error_result["message"]]
            out["after"] = rows("SELECT 2 AS two")
        ''', tmp_path)
    finally:
        assert emu.stop() == 0
    assert got["trivial"] == [{"one": 1}] and got["heavy_state_after_trivial"] == "RUNNING", got
    assert got["cancelled"] is not None and got["cancel_seconds"] < 20, got  # its bound is 60 s
    assert got["cancelled_final"] == ["DONE", "stopped", "Job execution was cancelled: User requested cancellation"]
    assert got["after"] == [{"two": 2}]


def test_a_query_past_its_bound_ends_as_bigquery_ends_one(tmp_path: Path) -> None:
    emu = Emulator(tmp_path / "emu", DECATHLON_BIGQUERY_JOB_SECONDS="2")
    try:
        got = run(emu, f'''
            heavy = bq.query({HEAVY!r})
            out["timed_out"] = err(heavy.result)
            heavy.reload()
            out["final"] = [heavy.state, heavy.error_result["reason"], heavy.error_result["message"]]
            out["after"] = rows("SELECT 2 AS two")
        ''', tmp_path)
    finally:
        assert emu.stop() == 0
    assert got["final"][:2] == ["DONE", "timeout"] and "timed out after 2 seconds" in got["final"][2], got
    assert got["timed_out"] is not None and got["timed_out"][4] < 30, got  # unbounded, it would run for minutes
    assert got["after"] == [{"two": 2}]


def test_a_result_too_large_to_return_is_refused_not_held(tmp_path: Path) -> None:
    emu = Emulator(tmp_path / "emu", DECATHLON_BIGQUERY_MAX_RESULT_ROWS="1000")
    try:
        got = run(emu, '''
            out["big"] = err(bq.query, "SELECT x FROM UNNEST(GENERATE_ARRAY(1, 5000)) AS x")
            out["small"] = len(rows("SELECT x FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS x"))
        ''', tmp_path)
    finally:
        assert emu.stop() == 0
    assert quick(got["big"])[1:] == [403, "Response too large to return. Consider specifying a destination table in your "
                                     "job configuration. For more details, see "
                                     "https://cloud.google.com/bigquery/troubleshooting-errors", ["responseTooLarge"]]
    assert got["small"] == 1000


def test_a_query_bigquery_refuses_before_running_fails_at_its_insert_even_on_a_cold_emulator(tmp_path: Path) -> None:
    """Syntax, names and functions are checked before anything runs, as BigQuery does: the job comes back from its
    insert DONE with the error (the recorded runs show that shape), even while the first query pays DuckDB's load."""
    emu = Emulator(tmp_path / "emu")
    try:
        got = run(emu, '''
            job = bq.query("SELECT content FROM read_text('/etc/passwd')")
            out["at_insert"] = [job.state, (job.error_result or {}).get("reason"), (job.error_result or {}).get("message")]
        ''', tmp_path)
    finally:
        assert emu.stop() == 0
    assert got["at_insert"] == ["DONE", "invalidQuery", "Table-valued function not found: read_text at [1:21]"]


def test_what_bigquery_refuses_before_running_is_refused_though_duckdb_would_run_it(emulator: Emulator,
                                                                                  tmp_path: Path) -> None:
    """decathlon.emulators.gcp.bigquery.typecheck: the refusals the recorded real runs show (a TIMESTAMP given to
    TIMESTAMP_MILLIS, an unknown column, ORDER BY before UNION ALL, CREATE TEMP TABLE outside a script), with
    BigQuery's message and its position in the user's text; the same functions on the right types still run."""
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_types")
        schema = [bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("ordered_at", "TIMESTAMP"),
                  bigquery.SchemaField("ms", "INT64"), bigquery.SchemaField("label", "STRING")]
        bq.load_table_from_json([
            {"id": 1, "ordered_at": "2025-04-15 22:36:01 UTC", "ms": 1744756561000, "label": "a"},
            {"id": 2, "ordered_at": "2025-05-01 10:00:00 UTC", "ms": 1746093600000, "label": "b"}],
            f"{P}.ds_types.orders", job_config=bigquery.LoadJobConfig(schema=schema)).result(timeout=30)
        T = f"`{P}.ds_types.orders`"
        out["millis_on_timestamp"] = err(bq.query, f"SELECT TIMESTAMP_MILLIS(ordered_at) FROM {T}")
        out["information_schema"] = err(bq.query, "\\nSELECT table_name, \\n       TIMESTAMP_MILLIS(creation_time) AS c\\n"
                                        "FROM `ds_types.INFORMATION_SCHEMA.TABLES`\\n")
        out["unix_on_int"] = err(bq.query, f"SELECT id, UNIX_SECONDS(ms) FROM {T}")
        out["unknown_name"] = err(bq.query, f"SELECT * FROM {T} WHERE user_id = 'U1'")
        out["ambiguous"] = err(bq.query, f"SELECT id FROM {T} a JOIN {T} b ON a.id = b.id")
        out["order_then_union"] = err(bq.query, f"SELECT id FROM {T}\\nORDER BY id\\nUNION ALL\\nSELECT id FROM {T}")
        out["temp_outside_script"] = err(bq.query, f"CREATE TEMP TABLE x AS SELECT id FROM {T}")
        job = bq.query(f"SELECT TIMESTAMP_MILLIS(ms) AS at, UNIX_MILLIS(ordered_at) AS back, "
                       f"SAFE.TIMESTAMP_SECONDS(id) AS s FROM {T} ORDER BY id")
        out["millis_on_int"] = [[r["at"].isoformat(), r["back"], r["s"].isoformat()] for r in job.result(timeout=30)]
        out["millis_type"] = [f.field_type for f in job.result(timeout=30).schema]
        out["temp_in_script"] = rows(f"CREATE TEMP TABLE x AS SELECT id FROM {T}; SELECT COUNT(*) AS n FROM x")
        out["parenthesized_union"] = rows(f"(SELECT id FROM {T} ORDER BY id LIMIT 1) UNION ALL "
                                          f"(SELECT id FROM {T} ORDER BY id DESC LIMIT 1) ORDER BY id")
    ''', tmp_path)

    def signature(name: str, given: str, expected: str, where: str) -> list[Any]:
        return ["BadRequest", 400, f"No matching signature for function {name}\n  Argument types: {given}\n  Signature: "
                f"{name}({expected})\n    Argument 1: Unable to coerce type {given} to expected type {expected} at {where}",
                ["invalidQuery"]]
    assert quick(got["millis_on_timestamp"]) == signature("TIMESTAMP_MILLIS", "TIMESTAMP", "INT64", "[1:8]")
    assert quick(got["information_schema"]) == signature("TIMESTAMP_MILLIS", "TIMESTAMP", "INT64", "[3:8]")
    assert quick(got["unix_on_int"]) == signature("UNIX_SECONDS", "INT64", "TIMESTAMP", "[1:12]")
    where = len(f"SELECT * FROM `{PROJECT}.ds_types.orders` WHERE ") + 1
    assert quick(got["unknown_name"]) == ["BadRequest", 400, f"Unrecognized name: user_id at [1:{where}]", ["invalidQuery"]]
    assert quick(got["ambiguous"]) == ["BadRequest", 400, "Column name id is ambiguous at [1:8]", ["invalidQuery"]]
    assert quick(got["order_then_union"]) == [
        "BadRequest", 400, "Syntax error: Expected end of input but got keyword UNION at [3:1]", ["invalidQuery"]]
    assert quick(got["temp_outside_script"]) == [
        "BadRequest", 400, "Use of CREATE TEMPORARY TABLE requires a script or session", ["invalid"]]
    assert got["millis_on_int"] == [["2025-04-15T22:36:01+00:00", 1744756561000, "1970-01-01T00:00:01+00:00"],
                                    ["2025-05-01T10:00:00+00:00", 1746093600000, "1970-01-01T00:00:02+00:00"]]
    assert got["millis_type"] == ["TIMESTAMP", "INTEGER", "TIMESTAMP"]
    assert got["temp_in_script"] == [{"n": 2}]
    assert got["parenthesized_union"] == [{"id": 1}, {"id": 2}]


VALID_QUERIES = {
    "join": "SELECT o.id, c.name FROM {O} o JOIN {C} c ON o.cust = c.cust ORDER BY o.id",
    "using": "SELECT id, name FROM {O} JOIN {C} USING (cust) ORDER BY id",
    "left_join_ambiguous_qualified": "SELECT o.cust, c.cust AS c2 FROM {O} o LEFT JOIN {C} c ON o.cust = c.cust ORDER BY 1",
    "cte": "WITH t AS (SELECT cust, SUM(amount) AS total FROM {O} GROUP BY cust) SELECT cust, total FROM t ORDER BY cust",
    "cte_columns_then_millis": "WITH t AS (SELECT id * 1000 AS ms FROM {O}) SELECT TIMESTAMP_MILLIS(ms) AS stamp FROM t "
                               "ORDER BY stamp LIMIT 1",
    "window": "SELECT id, ROW_NUMBER() OVER (PARTITION BY cust ORDER BY amount DESC) AS rn, "
              "SUM(amount) OVER w AS s FROM {O} WINDOW w AS (PARTITION BY cust) ORDER BY id",
    "qualify": "SELECT id, cust FROM {O} WHERE TRUE QUALIFY ROW_NUMBER() OVER (PARTITION BY cust ORDER BY id) = 1 "
               "ORDER BY id",
    "alias_in_group_and_order": "SELECT cust AS k, COUNT(*) AS n FROM {O} GROUP BY k HAVING n > 0 ORDER BY k",
    "struct_and_array": "SELECT STRUCT(id AS i, cust AS c) AS st, [id, amount] AS arr, tags[SAFE_OFFSET(0)] AS first_tag, "
                        "info.city FROM {O} ORDER BY id",
    "unnest": "SELECT id, tag, pos FROM {O}, UNNEST(tags) AS tag WITH OFFSET AS pos ORDER BY id, pos",
    "unnest_subquery": "SELECT id, (SELECT COUNT(*) FROM UNNEST(tags)) AS n, ARRAY(SELECT t FROM UNNEST(tags) t "
                       "WHERE t > 'a') AS big FROM {O} ORDER BY id",
    "correlated": "SELECT id FROM {O} o WHERE EXISTS (SELECT 1 FROM {C} c WHERE c.cust = o.cust) ORDER BY id",
    "scalar_subquery": "SELECT id, (SELECT MAX(amount) FROM {O}) AS top FROM {O} ORDER BY id",
    "star_except_replace": "SELECT * EXCEPT (tags, info) REPLACE (amount * 2 AS amount) FROM {O} ORDER BY id",
    "table_as_value": "SELECT c FROM {C} AS c ORDER BY c.cust",
    "case_insensitive_names": "SELECT ID, Cust FROM {O} ORDER BY Id",
    "dates": "SELECT DATE_TRUNC(DATE(placed), MONTH) AS m, DATE_ADD(DATE(placed), INTERVAL 1 DAY) AS nxt, "
             "TIMESTAMP_DIFF(placed, TIMESTAMP '2025-01-01', DAY) AS d, EXTRACT(ISOWEEK FROM placed) AS w, "
             "UNIX_MILLIS(placed) AS ms, FORMAT_TIMESTAMP('%Y', placed) AS y FROM {O} ORDER BY id",
    "safe_functions": "SELECT SAFE_DIVIDE(amount, 0) AS q, SAFE_CAST(cust AS INT64) AS n, SAFE.PARSE_DATE('%Y', 'x') AS p "
                      "FROM {O} ORDER BY id",
    "parameter": "SELECT id FROM {O} WHERE amount > @min ORDER BY id",
    "union_then_order": "SELECT id FROM {O} UNION ALL SELECT id FROM {O} ORDER BY id LIMIT 2",
    "information_schema": "SELECT table_name, column_name, data_type FROM `{P}.ds_valid.INFORMATION_SCHEMA.COLUMNS` "
                          "WHERE table_name = 'custs' ORDER BY ordinal_position",
    "information_schema_tables": "SELECT table_name, UNIX_MILLIS(creation_time) > 0 AS made FROM "
                                 "ds_valid.INFORMATION_SCHEMA.TABLES ORDER BY table_name",
}


def test_valid_queries_still_run_with_the_checks_before_duckdb(emulator: Emulator, tmp_path: Path) -> None:
    """Queries BigQuery accepts, of every construct the checks see (joins, CTEs, windows, STRUCT/ARRAY, UNNEST,
    correlated subqueries, INFORMATION_SCHEMA): none may be refused by the checks."""
    got = run(emulator, '''
        bq.create_dataset(f"{P}.ds_valid")
        orders = [bigquery.SchemaField("id", "INT64"), bigquery.SchemaField("cust", "STRING"),
                  bigquery.SchemaField("amount", "FLOAT64"), bigquery.SchemaField("placed", "TIMESTAMP"),
                  bigquery.SchemaField("tags", "STRING", mode="REPEATED"),
                  bigquery.SchemaField("info", "RECORD", fields=[bigquery.SchemaField("city", "STRING")])]
        bq.load_table_from_json([
            {"id": 1, "cust": "c1", "amount": 10.5, "placed": "2025-03-01 10:00:00 UTC", "tags": ["x", "b"],
             "info": {"city": "Oslo"}},
            {"id": 2, "cust": "c2", "amount": 3.0, "placed": "2025-04-02 11:00:00 UTC", "tags": [], "info": None}],
            f"{P}.ds_valid.orders", job_config=bigquery.LoadJobConfig(schema=orders)).result(timeout=30)
        bq.load_table_from_json([{"cust": "c1", "name": "Ann"}, {"cust": "c2", "name": "Bo"}], f"{P}.ds_valid.custs",
            job_config=bigquery.LoadJobConfig(schema=[bigquery.SchemaField("cust", "STRING"),
                                                      bigquery.SchemaField("name", "STRING")])).result(timeout=30)
        names = dict(O=f"`{P}.ds_valid.orders`", C=f"`{P}.ds_valid.custs`", P=P)
        for key, sql in json.loads(os.environ["QUERIES"]).items():
            params = [bigquery.ScalarQueryParameter("min", "FLOAT64", 1.0)] if "@min" in sql else None
            try:
                out[key] = len(rows(sql.format(**names), params))
            except exceptions.GoogleAPICallError as exc:
                out[key] = exc.message
    ''', tmp_path, QUERIES=json.dumps(VALID_QUERIES))
    refused = {k: v for k, v in got.items() if not isinstance(v, int)}
    assert not refused, refused
    assert got["join"] == 2 and got["unnest"] == 2 and got["information_schema"] == 2 and got["union_then_order"] == 2
