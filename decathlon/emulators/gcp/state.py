"""The gcp emulator's state as a folder (decathlon.emulators.kit.state): BigQuery's datasets, tables with their
rows, and jobs; Cloud Storage's buckets and objects.

    bigquery/datasets.json     the datasets (plain records, decathlon.emulators.kit.plain)
    bigquery/tables.json       each table or view: its record, DuckDB's exact columns, a view's DuckDB SQL, its rows' file
    bigquery/tables/P/D/T.parquet   a table's rows, in their stored order
    bigquery/jobs.json         the jobs, with a query's result rows (a job still running is kept as stopped)
    storage/buckets.json       the buckets
    storage/objects.json       each object's metadata and its file
    storage/objects/B/NAME     an object's bytes (names %-quoted into one file name)
    counters.json              the id generator's state and the last object generation (so what follows repeats)

A seed may hold any of these: a table with no `columns` is made from its declared schema (or from the Parquet file's
own), one with no rows file is empty. The work runs on BigQuery's metadata worker under the warehouse's lock, the
rows read in one DuckDB transaction (a job running beside it changes nothing mid-snapshot); running jobs are stopped
before a restore.
"""
from __future__ import annotations

import dataclasses
import hashlib
import random
from pathlib import Path
from typing import Any
from urllib.parse import quote

from decathlon.emulators.gcp.bigquery.errors import QueryError
from decathlon.emulators.gcp.bigquery.jobs import Job
from decathlon.emulators.gcp.bigquery.query import QueryResult
from decathlon.emulators.gcp.bigquery.routes import BigQueryRoutes
from decathlon.emulators.gcp.bigquery.store import Dataset, Table, Warehouse, relation, schema_name
from decathlon.emulators.gcp.bigquery.types import quote_ident
from decathlon.emulators.gcp.storage.routes import StorageRoutes
from decathlon.emulators.gcp.storage.store import Blob, Bucket, StorageStore
from decathlon.emulators.kit.tables import load_rows, read_parquet, write_parquet
from decathlon.emulators.kit.plain import Codec, PlainError
from decathlon.emulators.kit.state import FolderState, StateError, part, read_json, write_json

NAME = "gcp"
TYPES = (Dataset, Table, Job, QueryResult, QueryError, Bucket, Blob)
_STOP_WAIT = 2.0  # seconds a running job is given to stop before a restore or reset goes on


def file_name(name: str) -> str:
    """One path component for a name (a table's, an object's: `/`, `..` and all): %-quoted, hashed if too long."""
    quoted = quote(name, safe="") or "%00"
    if quoted in (".", ".."):
        quoted = quoted.replace(".", "%2E")
    return quoted if len(quoted) <= 200 else quoted[:120] + "~" + hashlib.sha256(name.encode()).hexdigest()


def _inside(folder: Path, rel: Any, what: str) -> Path:
    if not isinstance(rel, str) or not rel or rel.startswith("/") or ".." in Path(rel).parts:
        raise StateError(f"{what}: {rel!r} is not a path inside the snapshot", "bad_file")
    return folder / rel


class GcpState(FolderState):
    name = NAME

    def __init__(self, warehouse: Warehouse, storage: StorageStore, bigquery: BigQueryRoutes,
                 gcs: StorageRoutes) -> None:
        self.wh, self.storage, self.bigquery, self.gcs = warehouse, storage, bigquery, gcs
        self._fresh_ids = warehouse.ids._rng.getstate()
        self._fresh_generation = storage._generation
        self.codec = Codec(TYPES)

    # hooks -----------------------------------------------------------------------------------------
    async def _fresh(self) -> None:
        await self._stop_jobs()
        await self.bigquery.call(self._clear)

    async def _dump(self, folder: Path) -> None:
        await self.bigquery.call(self._write, folder)

    async def _load(self, folder: Path, seed: bool) -> None:
        await self.bigquery.call(self._read, folder, seed)

    async def _stop_jobs(self) -> None:
        running = [j for j in self.bigquery.jobs.values() if not j.done]
        for job in running:
            self.bigquery.runner.stop(job, "cancel")
        for job in running:
            await self.bigquery.runner.wait(job, _STOP_WAIT)

    # reset (worker thread, warehouse lock held) --------------------------------------------------
    def _clear(self) -> None:
        con = self.wh.con
        schemas = [r[0] for r in con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = "
                                             "current_database() AND NOT internal AND schema_name <> 'main'").fetchall()]
        for name in schemas:
            con.execute(f"DROP SCHEMA IF EXISTS {quote_ident(name)} CASCADE")
        self.wh.datasets.clear()
        self.wh.tables.clear()
        self.bigquery.jobs.clear()
        self.bigquery.anon.clear()
        self.bigquery.sessions.clear()
        self.gcs.sessions.clear()
        self.storage.buckets.clear()
        self.storage._generation = self._fresh_generation
        self.wh.ids._rng.setstate(self._fresh_ids)

    # snapshot ------------------------------------------------------------------------------------
    def _write(self, folder: Path) -> None:
        bq = folder / "bigquery"
        con = self.wh.con
        con.execute("BEGIN TRANSACTION")
        try:
            write_json(bq / "datasets.json", [self.codec.encode(d) for d in
                                              sorted(self.wh.datasets.values(), key=lambda d: (d.project, d.dataset_id))])
            write_json(bq / "tables.json", [self._table_doc(t, bq) for t in
                                            sorted(self.wh.tables.values(), key=lambda t: t.key)])
        finally:
            con.execute("COMMIT")
        write_json(bq / "jobs.json", [self._job_doc(j) for j in self.bigquery.jobs.values()])
        gcs = folder / "storage"
        buckets = sorted(self.storage.buckets.values(), key=lambda b: b.name)
        write_json(gcs / "buckets.json", [self.codec.encode(dataclasses.replace(b, objects={})) for b in buckets])
        objects = []
        for b in buckets:
            for blob in sorted(b.objects.values(), key=lambda o: o.name):
                rel = f"objects/{file_name(b.name)}/{file_name(blob.name)}"
                (gcs / rel).parent.mkdir(parents=True, exist_ok=True)
                (gcs / rel).write_bytes(blob.data)
                doc = self.codec.encode(dataclasses.replace(blob, data=b""))
                doc.pop("data")
                objects.append({**doc, "file": rel})
        write_json(gcs / "objects.json", objects)
        write_json(folder / "counters.json", {"ids": self.codec.encode(_rng(self.wh.ids._rng.getstate())),
                                              "generation": self.storage._generation})

    def _table_doc(self, t: Table, bq: Path) -> dict[str, Any]:
        doc: dict[str, Any] = {"table": self.codec.encode(t), "columns": None, "view_sql": None, "rows": None}
        if not t.materialized:
            return doc
        con = self.wh.con
        rel = relation(t.project, t.dataset_id, t.table_id)
        if t.kind == "VIEW":
            row = con.execute("SELECT sql FROM duckdb_views() WHERE database_name = current_database() AND "
                              "schema_name = ? AND view_name = ?", [schema_name(t.project, t.dataset_id),
                                                                    t.table_id]).fetchone()
            doc["view_sql"] = row[0] if row else None
            return doc
        doc["columns"] = [[name, dtype, not nullable] for name, dtype, nullable in con.execute(
            "SELECT column_name, data_type, is_nullable FROM duckdb_columns() WHERE database_name = current_database() "
            "AND schema_name = ? AND table_name = ? ORDER BY column_index",
            [schema_name(t.project, t.dataset_id), t.table_id]).fetchall()]
        rel_file = f"tables/{file_name(t.project)}/{file_name(t.dataset_id)}/{file_name(t.table_id)}.parquet"
        write_parquet(con, rel, doc["columns"], bq / rel_file)
        doc["rows"] = rel_file
        return doc

    def _job_doc(self, job: Job) -> Any:
        kept = dataclasses.replace(job, connection=None)
        if not kept.done:  # its thread is not part of the state: restored, it is a job that was stopped
            kept.state, kept.stop, kept.result = "DONE", "cancel", None
            kept.error = QueryError(400, "stopped", "Job execution was cancelled: the emulator's state was snapshotted "
                                    "while it ran")
            kept.ended = kept.ended or self.wh.clock()
        return self.codec.encode(kept)

    # restore / seed ------------------------------------------------------------------------------
    def _read(self, folder: Path, seed: bool) -> None:
        try:
            self._read_parts(folder, seed)
        except PlainError as exc:
            raise StateError(str(exc), "bad_file") from None

    def _read_parts(self, folder: Path, seed: bool) -> None:
        bq = folder / "bigquery"
        path = part(folder, "bigquery/datasets.json", seed)
        for d in self._records(path, Dataset):
            self.wh.create_dataset(d)
        path = part(folder, "bigquery/tables.json", seed)
        views = []
        for doc in (read_json(path) if path else []):
            t = self._table_from(doc)
            if (t.project, t.dataset_id) not in self.wh.datasets:
                raise StateError(f"table {t.project}:{t.dataset_id}.{t.table_id}: its dataset is not in datasets.json",
                                 "bad_file")
            if t.kind == "VIEW":
                views.append((t, doc.get("view_sql")))
                continue
            self._table_in(t, doc, bq)
        self._views_in(views)
        path = part(folder, "bigquery/jobs.json", seed)
        for job in self._records(path, Job):
            self.bigquery.jobs[(job.project, job.job_id)] = job
            if job.anon_table:
                self.bigquery.anon[job.anon_table] = job
        path = part(folder, "storage/buckets.json", seed)
        for b in self._records(path, Bucket):
            self.storage.buckets[b.name] = b
        path = part(folder, "storage/objects.json", seed)
        for doc in (read_json(path) if path else []):
            if not isinstance(doc, dict):
                raise StateError(f"{path}: each object is a JSON object", "bad_file")
            data = _inside(folder / "storage", doc.get("file"), "an object's file").read_bytes()
            blob = self.codec.decode({**{k: v for k, v in doc.items() if k != "file"}, "data": {"$bytes": ""}})
            if not isinstance(blob, Blob) or blob.bucket not in self.storage.buckets:
                raise StateError(f"{path}: object {doc.get('name')!r} names no bucket of buckets.json", "bad_file")
            blob.data = data
            blob.__post_init__()  # its hashes, from the bytes it holds
            self.storage.buckets[blob.bucket].objects[blob.name] = blob
        path = part(folder, "counters.json", seed)
        if path is not None:
            counters = read_json(path)
            rng = self.codec.decode(counters.get("ids")) if isinstance(counters, dict) else None
            if not isinstance(rng, random.Random) or not isinstance(counters.get("generation"), int):
                raise StateError(f"{path} must hold \"ids\" (a $random) and \"generation\" (a number)", "bad_file")
            self.wh.ids._rng.setstate(rng.getstate())
            self.storage._generation = counters["generation"]

    def _records(self, path: Path | None, cls: type) -> list[Any]:
        docs = read_json(path) if path else []
        if not isinstance(docs, list):
            raise StateError(f"{path} must hold a list", "bad_file")
        out = [self.codec.decode(d) for d in docs]
        for o in out:
            if not isinstance(o, cls):
                raise StateError(f"{path} must hold {cls.__name__} records (\"$type\": \"{cls.__name__}\")", "bad_file")
        return out

    def _table_from(self, doc: Any) -> Table:
        t = self.codec.decode(doc.get("table")) if isinstance(doc, dict) else None
        if not isinstance(t, Table):
            raise StateError("tables.json: each entry is {\"table\": a Table record, \"columns\", \"view_sql\", "
                             "\"rows\"}", "bad_file")
        return t

    def _table_in(self, t: Table, doc: dict[str, Any], bq: Path) -> None:
        con = self.wh.con
        rel = relation(t.project, t.dataset_id, t.table_id)
        rows = read_parquet(_inside(bq, doc["rows"], "a table's rows")) if doc.get("rows") else None
        columns = doc.get("columns")
        if columns:
            cols = ", ".join(f"{quote_ident(n)} {dtype}" + (" NOT NULL" if not_null else "") for n, dtype, not_null in columns)
            con.execute(f"CREATE TABLE {rel} ({cols})")
            self.wh.tables[t.key] = t
            t.materialized = True
        elif t.declared:
            self.wh.create_table(t, t.declared)
        elif rows is not None:
            load_rows(con, rel, rows, create=True)
            t.materialized = True
            self.wh.tables[t.key] = t
            return
        else:
            t.materialized = False
            self.wh.tables[t.key] = t
            return
        if rows is not None:
            load_rows(con, rel, rows)

    def _views_in(self, views: list[tuple[Table, Any]]) -> None:
        """Views in an order their dependencies allow (a view on a view comes after it)."""
        import duckdb  # type: ignore[import-not-found]

        pending = list(views)
        while pending:
            failed: list[tuple[Table, Any]] = []
            last: Exception | None = None
            for t, sql in pending:
                if not isinstance(sql, str):
                    raise StateError(f"view {t.project}:{t.dataset_id}.{t.table_id} has no \"view_sql\"", "bad_file")
                try:
                    self.wh.con.execute(sql)
                except duckdb.Error as exc:
                    failed.append((t, sql))
                    last = exc
                    continue
                t.materialized = True
                self.wh.tables[t.key] = t
            if len(failed) == len(pending):
                t = failed[0][0]
                raise StateError(f"view {t.project}:{t.dataset_id}.{t.table_id} cannot be made: {last}", "bad_file")
            pending = failed


def _rng(state: Any) -> random.Random:
    rng = random.Random()
    rng.setstate(state)
    return rng



