"""Running GoogleSQL: translate, bind `queryParameters`, execute statement by statement (a multi-statement
request is a script: its result is the last SELECT's), and name anonymous columns `f0_` like BigQuery."""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from decimal import Decimal
from typing import Any, Callable

from decathlon.emulators.gcp.bigquery.errors import QueryError, from_duckdb, invalid_query
from decathlon.emulators.gcp.bigquery.sql import Statement, translate
from decathlon.emulators.gcp.bigquery.store import Table, Warehouse
from decathlon.emulators.gcp.bigquery.types import bq_type, field_from_duck
from decathlon.emulators.gcp.bigquery.values import LoadError, parse_timestamp


@dataclass
class QueryResult:
    statement_type: str
    fields: list[dict[str, Any]] = field(default_factory=list)
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    dml_affected: int | None = None
    ddl_operation: str | None = None
    ddl_target: tuple[str, str, str] | None = None
    bytes_processed: int = 0

    @property
    def returns_rows(self) -> bool:
        return self.statement_type == "SELECT" or (self.statement_type == "SCRIPT" and bool(self.fields))


def parameter_value(ptype: dict[str, Any], pvalue: dict[str, Any] | None) -> Any:
    kind = bq_type(ptype.get("type", "STRING"))
    pvalue = pvalue or {}
    if kind == "ARRAY":
        return [parameter_value(ptype.get("arrayType") or {}, v) for v in pvalue.get("arrayValues") or []]
    if kind == "RECORD":
        values = pvalue.get("structValues") or {}
        return {s["name"]: parameter_value(s.get("type") or {}, values.get(s["name"]))
                for s in ptype.get("structTypes") or []}
    raw = pvalue.get("value")
    if raw is None:
        return None
    try:
        if kind == "INTEGER":
            return int(raw)
        if kind == "FLOAT":
            return float(raw)
        if kind in ("NUMERIC", "BIGNUMERIC"):
            return Decimal(str(raw))
        if kind == "BOOLEAN":
            return str(raw).lower() == "true"
        if kind == "TIMESTAMP":
            return parse_timestamp(str(raw))
        if kind == "DATETIME":
            return datetime.fromisoformat(str(raw).replace(" ", "T", 1)).replace(tzinfo=None)
        if kind == "DATE":
            return date.fromisoformat(str(raw))
        if kind == "TIME":
            return time.fromisoformat(str(raw))
    except (ValueError, LoadError):
        raise QueryError(400, "invalidQuery", f"Invalid {kind} value: {raw}", "query") from None
    return str(raw)


def bind(params: list[dict[str, Any]]) -> tuple[dict[str, Any], list[Any]]:
    named: dict[str, Any] = {}
    positional: list[Any] = []
    for p in params or []:
        value = parameter_value(p.get("parameterType") or {}, p.get("parameterValue"))
        if p.get("name"):
            named[p["name"]] = value
        else:
            positional.append(value)
    return named, positional


# A result is held in memory to be paged out: past this many rows BigQuery's own answer for an oversized response.
MAX_RESULT_ROWS = int(os.environ.get("DECATHLON_BIGQUERY_MAX_RESULT_ROWS", "1000000"))
FETCH_BATCH = 10_000


class Stopped(Exception):
    """The job was asked to stop (jobs.cancel, or its time bound) between statements or row batches."""


def run(wh: Warehouse, sql: str, project: str, default_dataset: tuple[str, str] | None,
        params: list[dict[str, Any]], stopped: Callable[[], bool] = lambda: False) -> QueryResult:
    """Statements in order on this thread's connection; the metadata read and written under the warehouse lock,
    DuckDB's work outside it (another job, or the evaluator's, is not kept waiting). `stopped` is asked between
    statements and row batches; DuckDB's own work is interrupted through the connection (decathlon.emulators.gcp
    .bigquery.runner)."""
    with wh.lock:
        statements = translate(sql, project, default_dataset, wh)
    named, positional = bind(params)
    script = len(statements) > 1
    result = QueryResult("SCRIPT" if script else statements[0].statement_type)
    con = wh.con
    try:
        for st in statements:
            if stopped():
                raise Stopped()
            last = _execute(wh, con, st, sql, named, positional, stopped)
            if last.returns_rows or not script:
                result.fields, result.rows = last.fields, last.rows
            result.dml_affected = last.dml_affected if not script else result.dml_affected
            result.ddl_operation, result.ddl_target = last.ddl_operation, last.ddl_target
    finally:
        if script:
            for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
                con.execute(f'DROP TABLE IF EXISTS temp."{name}"')
    return result


def _fetch(cur: Any, stopped: Callable[[], bool]) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = []
    while True:
        if stopped():
            raise Stopped()
        batch = cur.fetchmany(FETCH_BATCH)
        if not batch:
            return rows
        rows.extend(batch)
        if len(rows) > MAX_RESULT_ROWS:
            raise QueryError(403, "responseTooLarge", "Response too large to return. Consider specifying a destination "
                             "table in your job configuration. For more details, see "
                             "https://cloud.google.com/bigquery/troubleshooting-errors")


def _execute(wh: Warehouse, con: Any, st: Statement, sql: str, named: dict[str, Any],
             positional: list[Any], stopped: Callable[[], bool] = lambda: False) -> QueryResult:
    import duckdb  # type: ignore[import-not-found]

    args: Any = None
    if st.params:
        missing = [p for p in st.params if p not in named]
        if missing:
            raise invalid_query(f"Query parameter '{missing[0]}' not found at {_at(sql, '@' + missing[0])}")
        args = {p: named[p] for p in st.params}
    elif st.positional:
        if len(positional) < st.positional:
            raise invalid_query("Undeclared query parameters")
        args = positional[:st.positional]
    text = st.sql
    try:
        cur = con.execute(text, args) if args is not None else con.execute(text)
        out = QueryResult(st.statement_type)
        if st.returns_rows:
            description = cur.description or []
            names = [d[0] for d in description]
            dupes = sorted({n for n in names if [x.lower() for x in names].count(n.lower()) > 1})
            if dupes:
                raise invalid_query(f"Duplicate column names in the result are not supported. Found duplicate(s): "
                                    f"{', '.join(dupes)}")
            out.fields = [field_from_duck(d[0], d[1]) for d in description]
            out.rows = _fetch(cur, stopped)
        elif st.dml:
            row = cur.fetchone()
            out.dml_affected = int(row[0]) if row else 0
        else:
            cur.fetchall()
    except duckdb.Error as exc:
        raise from_duckdb(exc, sql) from None
    if st.ddl_operation:
        out.ddl_operation, out.ddl_target = st.ddl_operation, st.target
    with wh.lock:
        _record(wh, st, sql)
    return out


def _record(wh: Warehouse, st: Statement, sql: str) -> None:
    """What a statement changed, in the warehouse's metadata."""
    if st.ddl_operation:
        wh.sync()
        if st.target and st.statement_type.startswith("CREATE") and st.target in wh.tables:
            t: Table = wh.tables[st.target]
            now = wh.clock()
            if st.replace:
                t.created = now
            t.modified = now
            if st.statement_type == "CREATE_VIEW":
                t.view_query = re.sub(r"(?is)^.*?\bAS\b\s*", "", sql, count=1).strip().rstrip(";")
    elif st.dml and st.target in wh.tables:
        wh.tables[st.target].modified = wh.clock()  # type: ignore[index,unused-ignore]


def _at(sql: str, needle: str) -> str:
    from decathlon.emulators.gcp.bigquery.errors import position
    return position(sql, needle)


def utc(dt: datetime) -> datetime:
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
