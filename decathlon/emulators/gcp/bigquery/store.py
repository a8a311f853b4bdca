"""The warehouse: one in-memory DuckDB per process (datasets are schemas named `project:dataset`) and the
BigQuery metadata DuckDB has no place for (modes, descriptions, partitioning, labels, times).

DuckDB runs the agent's SQL, so it is locked down when it opens: no file system, no extensions, no settings changed
afterwards, a memory limit and no spilling to disk. Each thread works through a connection of its own to the one
database (jobs run side by side, each interruptible); the metadata is shared, under `lock`."""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from decathlon.emulators.gcp.bigquery.types import api_field, duck_type, field_from_duck, quote_ident, same_shape
from decathlon.emulators.kit.clock import Clock
from decathlon.emulators.kit.ids import Ids


@dataclass
class Dataset:
    project: str
    dataset_id: str
    location: str
    created: datetime
    modified: datetime
    description: str | None = None
    friendly_name: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    default_table_expiration_ms: str | None = None
    hidden: bool = False


@dataclass
class Table:
    project: str
    dataset_id: str
    table_id: str
    created: datetime
    modified: datetime
    kind: str = "TABLE"
    declared: list[dict[str, Any]] = field(default_factory=list)
    description: str | None = None
    friendly_name: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    time_partitioning: dict[str, Any] | None = None
    range_partitioning: dict[str, Any] | None = None
    clustering: dict[str, Any] | None = None
    expiration_time: str | None = None
    view_query: str | None = None
    materialized: bool = True  # a table created without a schema has no DuckDB relation until a load gives it one

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.project, self.dataset_id, self.table_id)


def schema_name(project: str, dataset: str) -> str:
    return f"{project}:{dataset}"


def relation(project: str, dataset: str, table: str) -> str:
    return f"{quote_ident(schema_name(project, dataset))}.{quote_ident(table)}"


# The agent's SQL must not leave the database: DuckDB's file functions (read_text, read_csv, COPY, ATTACH, glob),
# extensions (INSTALL, LOAD, httpfs) and changes to these settings are refused by DuckDB itself.
MEMORY_LIMIT = os.environ.get("DECATHLON_BIGQUERY_MEMORY", "512MB")
THREADS = int(os.environ.get("DECATHLON_BIGQUERY_THREADS", "2"))
LOCKED_CONFIG: dict[str, Any] = {
    "enable_external_access": False, "autoinstall_known_extensions": False, "autoload_known_extensions": False,
    "allow_community_extensions": False, "allow_unsigned_extensions": False, "memory_limit": MEMORY_LIMIT,
    "threads": THREADS, "max_temp_directory_size": "0B",
}


def open_database() -> Any:
    import duckdb  # type: ignore[import-not-found]

    con = duckdb.connect(":memory:", config=LOCKED_CONFIG)
    con.execute("SET GLOBAL TimeZone = 'UTC'")
    con.execute("SET lock_configuration = true")
    return con


class Warehouse:
    def __init__(self, clock: Clock, ids: Ids) -> None:
        self.clock = clock
        self.ids = ids
        self.lock = threading.RLock()
        self.datasets: dict[tuple[str, str], Dataset] = {}
        self.tables: dict[tuple[str, str, str], Table] = {}
        self._root: Any = None
        self._opening = threading.Lock()
        self._local = threading.local()

    @property
    def con(self) -> Any:
        """This thread's connection to the database (a DuckDB connection is not shared between threads). DuckDB is
        imported on first use so that the process is ready before the import cost is paid."""
        con = getattr(self._local, "con", None)
        if con is None:
            with self._opening:
                if self._root is None:
                    self._root = open_database()
            con = self._local.con = self._root.cursor()
        return con

    # datasets
    def create_dataset(self, ds: Dataset) -> None:
        self.con.execute(f"CREATE SCHEMA {quote_ident(schema_name(ds.project, ds.dataset_id))}")
        self.datasets[(ds.project, ds.dataset_id)] = ds

    def drop_dataset(self, ds: Dataset) -> None:
        self.con.execute(f"DROP SCHEMA IF EXISTS {quote_ident(schema_name(ds.project, ds.dataset_id))} CASCADE")
        self.datasets.pop((ds.project, ds.dataset_id), None)
        for key in [k for k in self.tables if k[:2] == (ds.project, ds.dataset_id)]:
            del self.tables[key]

    def tables_of(self, project: str, dataset: str) -> list[Table]:
        return sorted((t for k, t in self.tables.items() if k[:2] == (project, dataset)), key=lambda t: t.table_id)

    # tables
    def create_table(self, t: Table, fields: list[dict[str, Any]], replace: bool = False) -> None:
        rel = relation(t.project, t.dataset_id, t.table_id)
        if fields:
            cols = ", ".join(f"{quote_ident(f['name'])} {duck_type(f)}" + (" NOT NULL" if f.get("mode") == "REQUIRED" else "")
                             for f in fields)
            self.con.execute(f"CREATE {'OR REPLACE ' if replace else ''}TABLE {rel} ({cols})")
        t.declared = [dict(f) for f in fields]
        t.materialized = bool(fields)
        self.tables[t.key] = t

    def drop_table(self, t: Table) -> None:
        rel = relation(t.project, t.dataset_id, t.table_id)
        if t.materialized:
            self.con.execute(f"DROP {'VIEW' if t.kind == 'VIEW' else 'TABLE'} IF EXISTS {rel}")
        self.tables.pop(t.key, None)

    def schema(self, t: Table) -> list[dict[str, Any]]:
        """The BigQuery schema: DuckDB's columns, with the declared modes and descriptions where they still fit."""
        if not t.materialized:
            return [api_field(f) for f in t.declared]
        rel = relation(t.project, t.dataset_id, t.table_id)
        description = self.con.execute(f"SELECT * FROM {rel} LIMIT 0").description
        declared = {f["name"].lower(): f for f in t.declared}
        out = []
        for name, typ, *_ in description:
            derived = field_from_duck(name, typ)
            known = declared.get(name.lower())
            out.append(api_field(known) if known is not None and same_shape(known, derived) else derived)
        return out

    def num_rows(self, t: Table) -> int:
        if not t.materialized or t.kind == "VIEW":
            return 0
        return int(self.con.execute(f"SELECT count(*) FROM {relation(t.project, t.dataset_id, t.table_id)}").fetchone()[0])

    def sync(self) -> None:
        """Takes in what SQL (DDL, CTAS, CREATE SCHEMA) changed in DuckDB's catalog."""
        now = self.clock()
        schemas = {r[0] for r in self.con.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = "
                                                   "current_database()").fetchall()}
        for name in schemas:
            if ":" not in name:
                continue
            project, dataset = name.rsplit(":", 1)
            if (project, dataset) not in self.datasets:
                self.datasets[(project, dataset)] = Dataset(project, dataset, "US", now, now)
        for key in [k for k in self.datasets if schema_name(*k) not in schemas]:
            self.drop_dataset(self.datasets[key])
        rows = self.con.execute("SELECT schema_name, table_name, 'TABLE' FROM duckdb_tables() WHERE NOT temporary "
                                "UNION ALL SELECT schema_name, view_name, 'VIEW' FROM duckdb_views() "
                                "WHERE NOT internal AND NOT temporary").fetchall()
        present: set[tuple[str, str, str]] = set()
        for schema, table, kind in rows:
            if ":" not in schema:
                continue
            project, dataset = schema.rsplit(":", 1)
            tkey = (project, dataset, table)
            present.add(tkey)
            if tkey not in self.tables:
                self.tables[tkey] = Table(project, dataset, table, now, now, kind=kind)
        for tkey in [k for k, t in self.tables.items() if t.materialized and k not in present]:
            del self.tables[tkey]

    def snapshot(self) -> dict[str, Any]:
        return {"datasets": [{"project": d.project, "dataset": d.dataset_id, "location": d.location,
                              "tables": {t.table_id: {"type": t.kind, "rows": self.num_rows(t)}
                                         for t in self.tables_of(d.project, d.dataset_id)}}
                             for d in sorted(self.datasets.values(), key=lambda d: (d.project, d.dataset_id))
                             if not d.hidden]}
