"""The Snowflake emulator's state as a folder (decathlon.emulators.kit.state), read from and written to fakesnow's
shared DuckDB (one attached catalog per database):

    snowflake/databases.json    each database: its schemas, each with its tables (DuckDB's exact columns and the
                                rows' file) and views (DuckDB's SQL)
    snowflake/tables/DB/SCHEMA/TABLE.parquet   a table's rows, in their stored order
    snowflake/global/NAME.parquet              fakesnow's own side tables (comments, stages, file formats, users),
                                               those that hold rows
    snowflake/stage/...         the files PUT into stages (the episode's stage folder)

A database is made again as fakesnow makes one (its information_schema views and macros), then its schemas and
tables. The work holds the statement gate alone (no statement runs meanwhile) and runs off the event loop. Sessions
keep their connection; one whose current database is made again by a restore is put back in it.
"""
from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any, Awaitable, Callable
from urllib.parse import quote

from decathlon.emulators.kit.tables import load_rows, read_parquet, write_parquet
from decathlon.emulators.kit.state import FolderState, StateError, part, read_json, write_json

NAME = "snowflake"
GLOBAL = "_fs_global"
_META_SCHEMA = "_fs_information_schema"
_SYSTEM_CATALOGS = ("system", "temp", "memory", GLOBAL)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _file(name: str) -> str:
    quoted = quote(name, safe="") or "%00"
    return quoted.replace(".", "%2E") if quoted in (".", "..") else quoted


class SnowflakeState(FolderState):
    name = NAME

    def __init__(self, app: Callable[[], Awaitable[Any]], stage: Path) -> None:
        """`app()`: the loaded app module (decathlon.emulators.snowflake.app, loaded on a thread at start-up)."""
        self._app, self.stage = app, stage

    async def _locked(self, fn: Callable[..., Any], *args: Any) -> Any:
        app = await self._app()
        async with app._gate.exclusive():
            return await asyncio.to_thread(fn, app, *args)

    async def _fresh(self) -> None:
        await self._locked(self._clear)

    async def _dump(self, folder: Path) -> None:
        await self._locked(self._write, folder)

    async def _load(self, folder: Path, seed: bool) -> None:
        await self._locked(self._read, folder, seed)

    # worker thread, gate held ----------------------------------------------------------------------
    @staticmethod
    def _duck(app: Any) -> Any:
        return app.fs_server.shared_fs.duck_conn

    def _databases(self, duck: Any) -> list[str]:
        rows = duck.execute("SELECT database_name FROM duckdb_databases() WHERE NOT internal ORDER BY database_oid")
        return [r[0] for r in rows.fetchall() if r[0].lower() not in _SYSTEM_CATALOGS]

    def _clear(self, app: Any) -> None:
        from . import databases

        duck = self._duck(app)
        for conn in app.fs_server.sessions.values():  # where each session was, for _sessions_back
            conn._state_database = (conn.database, conn._schema) if conn.database else None
        for name in self._databases(duck):
            databases.drop(duck, app.fs_server.sessions, name)
        for table in self._global_tables(duck):
            duck.execute(f"DELETE FROM {GLOBAL}.{_META_SCHEMA}.{_q(table)}")
        if self.stage.is_dir():
            for child in self.stage.iterdir():
                shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()

    def _global_tables(self, duck: Any) -> list[str]:
        return [r[0] for r in duck.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND "
                                           "schema_name = ? ORDER BY table_name", [GLOBAL, _META_SCHEMA]).fetchall()]

    def _write(self, app: Any, folder: Path) -> None:
        duck = self._duck(app).cursor()
        out = folder / "snowflake"
        duck.execute("BEGIN TRANSACTION")
        try:
            docs = [self._database_doc(duck, name, out) for name in self._databases(duck)]
            for table in self._global_tables(duck):
                if not duck.execute(f"SELECT count(*) FROM {GLOBAL}.{_META_SCHEMA}.{_q(table)}").fetchone()[0]:
                    continue  # an empty side table is what a reset leaves: no file for it
                write_parquet(duck, f"{GLOBAL}.{_META_SCHEMA}.{_q(table)}", self._columns(duck, GLOBAL, _META_SCHEMA,
                               table), out / "global" / f"{_file(table)}.parquet")
        finally:
            duck.execute("COMMIT")
        write_json(out / "databases.json", docs)
        if self.stage.is_dir() and any(self.stage.iterdir()):
            shutil.copytree(self.stage, out / "stage", symlinks=False)

    def _columns(self, duck: Any, db: str, schema: str, table: str) -> list[list[Any]]:
        return [[n, t, not nullable] for n, t, nullable in duck.execute(
            "SELECT column_name, data_type, is_nullable FROM duckdb_columns() WHERE database_name = ? AND schema_name = ? "
            "AND table_name = ? ORDER BY column_index", [db, schema, table]).fetchall()]

    def _database_doc(self, duck: Any, db: str, out: Path) -> dict[str, Any]:
        schemas = [r[0] for r in duck.execute("SELECT schema_name FROM duckdb_schemas() WHERE database_name = ? AND NOT "
                                              "internal AND schema_name <> ? ORDER BY oid", [db, _META_SCHEMA]).fetchall()]
        doc: dict[str, Any] = {"name": db, "schemas": []}
        for schema in schemas:
            tables = []
            for (table,) in duck.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND "
                                         "schema_name = ? AND NOT temporary ORDER BY table_oid", [db, schema]).fetchall():
                columns = self._columns(duck, db, schema, table)
                rel_file = f"tables/{_file(db)}/{_file(schema)}/{_file(table)}.parquet"
                write_parquet(duck, f"{_q(db)}.{_q(schema)}.{_q(table)}", columns, out / rel_file)
                tables.append({"name": table, "columns": columns, "rows": rel_file})
            views = [{"name": v, "sql": sql} for v, sql in duck.execute(
                "SELECT view_name, sql FROM duckdb_views() WHERE database_name = ? AND schema_name = ? AND NOT internal "
                "AND NOT temporary ORDER BY view_oid", [db, schema]).fetchall()]
            doc["schemas"].append({"name": schema, "tables": tables, "views": views})
        return doc

    def _read(self, app: Any, folder: Path, seed: bool) -> None:
        duck = self._duck(app)
        base = folder / "snowflake"
        path = part(folder, "snowflake/databases.json", seed)
        docs = read_json(path) if path else []
        if not isinstance(docs, list) or not all(isinstance(d, dict) and isinstance(d.get("name"), str) for d in docs):
            raise StateError(f"{path} must hold a list of databases, each with its \"name\"", "bad_file")
        views: list[tuple[str, str, str]] = []
        for doc in docs:
            self._database_in(duck, doc, base, views)
        _views_in(duck, views)
        path = part(folder, "snowflake/global", seed)
        if path is not None:
            known = set(self._global_tables(duck))
            for f in sorted(path.glob("*.parquet")):
                from urllib.parse import unquote
                table = unquote(f.stem)
                if table not in known:
                    raise StateError(f"{f}: fakesnow has no side table {table!r}", "bad_file")
                load_rows(duck, f"{GLOBAL}.{_META_SCHEMA}.{_q(table)}", read_parquet(f))
        if (base / "stage").is_dir():
            shutil.copytree(base / "stage", self.stage, symlinks=False, dirs_exist_ok=True)
        self._sessions_back(app, duck)

    def _database_in(self, duck: Any, doc: dict[str, Any], base: Path, views: list[tuple[str, str, str]]) -> None:
        from fakesnow import info_schema, macros  # type: ignore[import-not-found,import-untyped,unused-ignore]

        db = doc["name"]
        if not db or '"' in db or "'" in db:
            raise StateError(f"database name {db!r} cannot be made", "bad_file")
        duck.execute(f"ATTACH DATABASE ':memory:' AS {_q(db)}")
        duck.execute(info_schema.per_db_creation_sql(db))
        duck.execute(macros.creation_sql(db))
        for schema in doc.get("schemas") or []:
            sname = schema.get("name") if isinstance(schema, dict) else None
            if not isinstance(sname, str) or not sname:
                raise StateError(f"database {db}: each schema is an object with its \"name\"", "bad_file")
            duck.execute(f"CREATE SCHEMA IF NOT EXISTS {_q(db)}.{_q(sname)}")
            for t in schema.get("tables") or []:
                self._table_in(duck, db, sname, t, base)
            for v in schema.get("views") or []:
                if not isinstance(v, dict) or not isinstance(v.get("sql"), str):
                    raise StateError(f"database {db}, schema {sname}: each view has its \"sql\"", "bad_file")
                views.append((db, f"{db}.{sname}.{v.get('name')}", v["sql"]))

    def _table_in(self, duck: Any, db: str, schema: str, t: Any, base: Path) -> None:
        if not isinstance(t, dict) or not isinstance(t.get("name"), str):
            raise StateError(f"database {db}, schema {schema}: each table is an object with its \"name\"", "bad_file")
        rel = f"{_q(db)}.{_q(schema)}.{_q(t['name'])}"
        rows_file = t.get("rows")
        if rows_file is not None and (not isinstance(rows_file, str) or rows_file.startswith("/") or
                                      ".." in Path(rows_file).parts):
            raise StateError(f"table {db}.{schema}.{t['name']}: {rows_file!r} is not a path inside the snapshot",
                             "bad_file")
        rows = read_parquet(base / rows_file) if rows_file else None
        columns = t.get("columns")
        if columns:
            cols = ", ".join(f"{_q(n)} {dtype}" + (" NOT NULL" if not_null else "") for n, dtype, not_null in columns)
            duck.execute(f"CREATE TABLE {rel} ({cols})")
        elif rows is not None:
            load_rows(duck, rel, rows, create=True)
            return
        else:
            raise StateError(f"table {db}.{schema}.{t['name']} has neither \"columns\" nor \"rows\"", "bad_file")
        if rows is not None:
            load_rows(duck, rel, rows)

    def _sessions_back(self, app: Any, duck: Any) -> None:
        """A session whose database was dropped by the reset and is there again goes back to it."""
        for conn in list(app.fs_server.sessions.values()):
            wanted = getattr(conn, "_state_database", None)
            if wanted and conn.database is None:
                db, schema = wanted
                try:
                    conn.cursor().execute(f"USE SCHEMA {_q(db)}.{_q(schema)}" if schema else f"USE DATABASE {_q(db)}")
                except Exception:  # noqa: BLE001 - the database or schema is not in the snapshot: left without one
                    pass


def _views_in(duck: Any, views: list[tuple[str, str, str]]) -> None:
    """Views in an order their dependencies allow. DuckDB keeps a view's SQL without its catalog (`CREATE VIEW S.v AS
    SELECT a FROM S.t`), so each runs on a cursor whose current catalog is its database."""
    import duckdb  # type: ignore[import-not-found,import-untyped,unused-ignore]

    pending = list(views)
    while pending:
        failed: list[tuple[str, str, str]] = []
        last: Exception | None = None
        for db, name, sql in pending:
            cur = duck.cursor()
            try:
                cur.execute(f"USE {_q(db)}")
                cur.execute(sql)
            except duckdb.Error as exc:
                failed.append((db, name, sql))
                last = exc
            finally:
                cur.close()
        if len(failed) == len(pending):
            raise StateError(f"view {failed[0][1]} cannot be made: {last}", "bad_file")
        pending = failed
