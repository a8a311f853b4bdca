"""Jobs: query, load, extract, copy. A job is RUNNING from its insert until it ends (DONE); a failure is the job's
`status.errorResult`, as on the real service, a cancelled or timed-out one included (decathlon.emulators.gcp.bigquery
.runner runs them)."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from decathlon.emulators.gcp.bigquery import values
from decathlon.emulators.gcp.bigquery.errors import QueryError
from decathlon.emulators.gcp.bigquery.query import QueryResult, run
from decathlon.emulators.gcp.bigquery.store import Table, Warehouse, relation
from decathlon.emulators.gcp.bigquery.types import bq_type, export_text, quote_ident
from decathlon.emulators.gcp.storage.store import StorageStore
from decathlon.emulators.kit.clock import epoch_millis


@dataclass
class Job:
    project: str
    job_id: str
    location: str
    job_type: str
    configuration: dict[str, Any]
    created: datetime
    started: datetime | None = None
    ended: datetime | None = None
    error: QueryError | None = None
    result: QueryResult | None = None
    stats: dict[str, Any] = field(default_factory=dict)
    anon_table: tuple[str, str, str] | None = None
    state: str = "PENDING"
    stop: str | None = None  # why it is being stopped: "cancel" (jobs.cancel) or "timeout" (its bound)
    connection: Any = field(default=None, repr=False)  # the DuckDB connection running it (to interrupt)

    @property
    def done(self) -> bool:
        return self.state == "DONE"

    def resource(self) -> dict[str, Any]:
        status: dict[str, Any] = {"state": self.state}
        if self.error is not None and self.done:
            status["errorResult"] = self.error.item()
            status["errors"] = [self.error.item()]
        statistics: dict[str, Any] = {"creationTime": epoch_millis(self.created)}
        if self.started:
            statistics["startTime"] = epoch_millis(self.started)
        if self.ended:
            statistics["endTime"] = epoch_millis(self.ended)
        statistics.update(self.stats)
        config = json.loads(json.dumps(self.configuration))
        config["jobType"] = self.job_type
        if self.anon_table and "query" in config:
            p, d, t = self.anon_table
            config["query"].setdefault("destinationTable", {"projectId": p, "datasetId": d, "tableId": t})
        return {"kind": "bigquery#job", "etag": f'"{self.job_id[:16]}"', "id": f"{self.project}:{self.location}.{self.job_id}",
                "selfLink": f"https://bigquery.googleapis.com/bigquery/v2/projects/{self.project}/jobs/{self.job_id}"
                            f"?location={self.location}",
                "user_email": f"emulator@{self.project}.iam.gserviceaccount.com",
                "configuration": config,
                "jobReference": {"projectId": self.project, "jobId": self.job_id, "location": self.location},
                "statistics": statistics, "status": status, "principal_subject": "serviceAccount:emulator"}


def _table_ref(ref: dict[str, Any] | None, project: str) -> tuple[str, str, str]:
    if not ref or not ref.get("datasetId") or not ref.get("tableId"):
        raise QueryError(400, "invalid", "Required parameter is missing: tableReference")
    return (ref.get("projectId") or project, ref["datasetId"], ref["tableId"])


def run_query_job(wh: Warehouse, job: Job) -> None:
    cfg = job.configuration.get("query") or {}
    default = cfg.get("defaultDataset")
    default_ds = (default.get("projectId") or job.project, default["datasetId"]) if default else None
    result = run(wh, cfg.get("query") or "", job.project, default_ds, cfg.get("queryParameters") or [],
                 stopped=lambda: job.stop is not None)
    job.result = result
    q: dict[str, Any] = {"statementType": result.statement_type, "totalBytesProcessed": str(result.bytes_processed),
                         "totalBytesBilled": "0", "cacheHit": False, "billingTier": 1,
                         "totalSlotMs": "0"}
    if result.dml_affected is not None:
        q["numDmlAffectedRows"] = str(result.dml_affected)
        q["dmlStats"] = {"insertedRowCount" if result.statement_type == "INSERT" else
                         "deletedRowCount" if result.statement_type == "DELETE" else "updatedRowCount":
                         str(result.dml_affected)}
    if result.ddl_operation:
        q["ddlOperationPerformed"] = result.ddl_operation
        if result.ddl_target and result.ddl_target[2]:
            p, d, t = result.ddl_target
            q["ddlTargetTable"] = {"projectId": p, "datasetId": d, "tableId": t}
        elif result.ddl_target:
            q["ddlTargetDataset"] = {"projectId": result.ddl_target[0], "datasetId": result.ddl_target[1]}
    if result.returns_rows:
        q["schema"] = {"fields": result.fields}
        job.anon_table = (job.project, "_" + job.job_id.replace("-", "")[:40], "anon" + job.job_id.replace("-", "")[:40])
    job.stats = {"query": q, "totalBytesProcessed": str(result.bytes_processed)}


def _insert(wh: Warehouse, t: Table, fields: list[dict[str, Any]], rows: list[list[Any]]) -> None:
    if not rows:
        return
    import pyarrow as pa  # type: ignore[import-not-found]

    columns = [pa.array([r[i] for r in rows], type=_arrow_type(f, pa)) for i, f in enumerate(fields)]
    batch = pa.Table.from_arrays(columns, names=[f"c{i}" for i in range(len(fields))])
    name = "_load_" + wh.ids.hex(12)
    wh.con.register(name, batch)
    try:
        cols = ", ".join(quote_ident(f["name"]) for f in fields)
        picks = ", ".join(f"c{i}" for i in range(len(fields)))
        wh.con.execute(f"INSERT INTO {relation(t.project, t.dataset_id, t.table_id)} ({cols}) SELECT {picks} FROM {name}")
    finally:
        wh.con.unregister(name)


def _arrow_type(f: dict[str, Any], pa: Any) -> Any:
    kind = bq_type(f.get("type", "STRING"))
    if kind == "RECORD":
        base = pa.struct([pa.field(s["name"], _arrow_type(s, pa)) for s in f.get("fields") or []])
    else:
        base = {"STRING": pa.string(), "INTEGER": pa.int64(), "FLOAT": pa.float64(), "NUMERIC": pa.decimal128(38, 9),
                "BIGNUMERIC": pa.decimal128(38, 9), "BOOLEAN": pa.bool_(), "TIMESTAMP": pa.timestamp("us", tz="UTC"),
                "DATETIME": pa.timestamp("us"), "DATE": pa.date32(), "TIME": pa.time64("us"), "BYTES": pa.binary(),
                "JSON": pa.string(), "GEOGRAPHY": pa.string()}.get(kind, pa.string())
    return pa.list_(base) if f.get("mode") == "REPEATED" else base


def run_load_job(wh: Warehouse, storage: StorageStore, job: Job, data: bytes | None) -> None:
    cfg = job.configuration.get("load") or {}
    p, d, name = _table_ref(cfg.get("destinationTable"), job.project)
    if (p, d) not in wh.datasets:
        raise QueryError(404, "notFound", f"Not found: Dataset {p}:{d}")
    if data is None:
        data = b"".join(_read_uris(storage, cfg.get("sourceUris") or []))
    existing = wh.tables.get((p, d, name))
    write = (cfg.get("writeDisposition") or "WRITE_APPEND").upper()
    if existing is None and (cfg.get("createDisposition") or "").upper() == "CREATE_NEVER":
        raise QueryError(404, "notFound", f"Not found: Table {p}:{d}.{name}")
    fmt = (cfg.get("sourceFormat") or "CSV").upper()
    declared = (cfg.get("schema") or {}).get("fields")
    try:
        if fmt == "CSV":
            raw_rows = values.read_csv(data, cfg)
            skip = cfg.get("skipLeadingRows")
            skip_n = int(skip) if skip is not None else None
            if declared:
                fields = declared
                rows_text = raw_rows[skip_n or 0:]
            elif existing is not None and existing.materialized and existing.kind == "TABLE":
                fields = wh.schema(existing)
                rows_text = raw_rows[skip_n or 0:]
            elif cfg.get("autodetect"):
                fields, rows_text = values.autodetect_csv(raw_rows, skip_n)
            else:
                raise QueryError(400, "invalid", "No schema specified on job or table.")
            rows = values.csv_rows(rows_text, fields, cfg.get("nullMarker") or "")
        elif fmt == "NEWLINE_DELIMITED_JSON":
            records = values.ndjson(data)
            if declared:
                fields = declared
            elif existing is not None and existing.materialized and existing.kind == "TABLE":
                fields = wh.schema(existing)
            elif cfg.get("autodetect"):
                fields = values.detect_json_schema(records)
            else:
                raise QueryError(400, "invalid", "No schema specified on job or table.")
            rows = values.json_rows(records, fields, bool(cfg.get("ignoreUnknownValues")))
        else:
            raise QueryError(400, "invalid", f"Source format {fmt} is not supported by this emulator.")
    except values.LoadError as exc:
        raise QueryError(400, "invalid", str(exc)) from None
    if not fields:
        raise QueryError(400, "invalid", "No schema specified on job or table.")
    now = wh.clock()
    if existing is not None and existing.kind == "TABLE" and write == "WRITE_EMPTY" and wh.num_rows(existing):
        raise QueryError(409, "duplicate", f"Already Exists: Table {p}:{d}.{name}")
    if existing is None or not existing.materialized or (write == "WRITE_TRUNCATE" and declared):
        t = existing or Table(p, d, name, now, now, time_partitioning=cfg.get("timePartitioning"),
                              clustering=cfg.get("clustering"))
        wh.create_table(t, fields, replace=existing is not None and existing.materialized)
    else:
        t = existing
        if write == "WRITE_TRUNCATE":
            wh.con.execute(f"DELETE FROM {relation(p, d, name)}")
    import duckdb  # type: ignore[import-not-found]
    try:
        _insert(wh, t, fields, rows)
    except (duckdb.Error, ValueError, TypeError) as exc:
        raise QueryError(400, "invalid", f"Error while reading data, error message: {str(exc).splitlines()[0]}") from None
    t.modified = now
    job.stats = {"load": {"inputFiles": "1", "inputFileBytes": str(len(data)), "outputRows": str(len(rows)),
                          "outputBytes": str(len(data)), "badRecords": "0"}}


def _split_uri(uri: str) -> tuple[str, str]:
    if not uri.startswith("gs://") or "/" not in uri[5:]:
        raise QueryError(400, "invalid", f"Invalid URI: {uri}")
    bucket, _, path = uri[5:].partition("/")
    return bucket, path


def _read_uris(storage: StorageStore, uris: list[str]) -> list[bytes]:
    out: list[bytes] = []
    for uri in uris:
        bucket, path = _split_uri(uri)
        b = storage.buckets.get(bucket)
        if b is None:
            raise QueryError(404, "notFound", f"Not found: URI {uri}")
        if "*" in path:
            head, _, tail = path.partition("*")
            names = sorted(n for n in b.objects if n.startswith(head) and n.endswith(tail))
        else:
            names = [path] if path in b.objects else []
        if not names:
            raise QueryError(404, "notFound", f"Not found: URI {uri}")
        out.extend(b.objects[n].data for n in names)
    return out


def run_extract_job(wh: Warehouse, storage: StorageStore, job: Job) -> None:
    cfg = job.configuration.get("extract") or {}
    p, d, name = _table_ref(cfg.get("sourceTable"), job.project)
    t = wh.tables.get((p, d, name))
    if t is None:
        raise QueryError(404, "notFound", f"Not found: Table {p}:{d}.{name}")
    fields = wh.schema(t)
    rows = wh.con.execute(f"SELECT * FROM {relation(p, d, name)}").fetchall() if t.materialized else []
    fmt = (cfg.get("destinationFormat") or "CSV").upper()
    if fmt == "CSV":
        if any(bq_type(f.get("type", "")) == "RECORD" or f.get("mode") == "REPEATED" for f in fields):
            raise QueryError(400, "invalid", f"Operation cannot be performed on a nested schema. Field: "
                             f"{next(f['name'] for f in fields if bq_type(f['type']) == 'RECORD' or f.get('mode') == 'REPEATED')}")  # noqa: E501
        payload = _csv(fields, rows, cfg.get("fieldDelimiter") or ",", cfg.get("printHeader", True) is not False)
        content_type = "text/csv"
    elif fmt == "NEWLINE_DELIMITED_JSON":
        payload = "".join(json.dumps(_json_row(fields, r), ensure_ascii=False) + "\n" for r in rows).encode()
        content_type = "application/json"
    elif fmt == "PARQUET":
        # Through Arrow in memory: the warehouse's DuckDB has no file system (decathlon.emulators.gcp.bigquery.store).
        import pyarrow.parquet as pq  # type: ignore[import-not-found]

        buf = io.BytesIO()
        pq.write_table(wh.con.execute(f"SELECT * FROM {relation(p, d, name)}").fetch_arrow_table(), buf)
        payload = buf.getvalue()
        content_type = "application/octet-stream"
    else:
        raise QueryError(400, "invalid", f"Destination format {fmt} is not supported by this emulator.")
    uris = cfg.get("destinationUris") or ([cfg["destinationUri"]] if cfg.get("destinationUri") else [])
    if not uris:
        raise QueryError(400, "invalid", "Required parameter is missing: destinationUris")
    counts = []
    for uri in uris:
        bucket, path = _split_uri(uri)
        b = storage.buckets.get(bucket)
        if b is None:
            raise QueryError(404, "notFound", f"Not found: URI {uri}")
        storage.put(b, path.replace("*", "000000000000", 1), payload, content_type)
        counts.append("1")
    job.stats = {"extract": {"destinationUriFileCounts": counts, "inputBytes": str(len(payload))}}


def _csv(fields: list[dict[str, Any]], rows: list[tuple[Any, ...]], delimiter: str, header: bool) -> bytes:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter[0], lineterminator="\n")
    if header:
        writer.writerow([f["name"] for f in fields])
    kinds = [bq_type(f.get("type", "STRING")) for f in fields]
    for r in rows:
        writer.writerow([export_text(v, k) for v, k in zip(r, kinds)])
    return buf.getvalue().encode()


def _json_value(value: Any, f: dict[str, Any]) -> Any:
    if value is None:
        return None
    if f.get("mode") == "REPEATED":
        return [_json_value(v, {**f, "mode": "NULLABLE"}) for v in value]
    kind = bq_type(f.get("type", "STRING"))
    if kind == "RECORD":
        subs = f.get("fields") or []
        vals = list(value.values()) if isinstance(value, dict) else list(value)
        return {s["name"]: _json_value(v, s) for s, v in zip(subs, vals)}
    if kind in ("FLOAT", "BOOLEAN"):
        return value
    return export_text(value, kind)


def _json_row(fields: list[dict[str, Any]], row: tuple[Any, ...]) -> dict[str, Any]:
    return {f["name"]: _json_value(v, f) for f, v in zip(fields, row) if v is not None}


def run_copy_job(wh: Warehouse, job: Job) -> None:
    cfg = job.configuration.get("copy") or {}
    sources = cfg.get("sourceTables") or ([cfg["sourceTable"]] if cfg.get("sourceTable") else [])
    p, d, name = _table_ref(cfg.get("destinationTable"), job.project)
    if (p, d) not in wh.datasets:
        raise QueryError(404, "notFound", f"Not found: Dataset {p}:{d}")
    srcs = []
    for ref in sources:
        key = _table_ref(ref, job.project)
        if key not in wh.tables:
            raise QueryError(404, "notFound", f"Not found: Table {key[0]}:{key[1]}.{key[2]}")
        srcs.append(wh.tables[key])
    if not srcs:
        raise QueryError(400, "invalid", "Required parameter is missing: sourceTables")
    write = (cfg.get("writeDisposition") or "WRITE_EMPTY").upper()
    existing = wh.tables.get((p, d, name))
    union = " UNION ALL ".join(f"SELECT * FROM {relation(s.project, s.dataset_id, s.table_id)}" for s in srcs)
    if existing is not None and write == "WRITE_EMPTY" and wh.num_rows(existing):
        raise QueryError(409, "duplicate", f"Already Exists: Table {p}:{d}.{name}")
    if existing is not None and write == "WRITE_APPEND":
        wh.con.execute(f"INSERT INTO {relation(p, d, name)} {union}")
    else:
        wh.con.execute(f"CREATE OR REPLACE TABLE {relation(p, d, name)} AS {union}")
        now = wh.clock()
        t = Table(p, d, name, now, now, declared=wh.schema(srcs[0]))
        wh.tables[t.key] = t
    job.stats = {"copy": {"copiedRows": str(wh.num_rows(wh.tables[(p, d, name)])), "copiedLogicalBytes": "0"}}
