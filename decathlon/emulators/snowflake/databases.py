"""Database-level DDL as Snowflake does it, over fakesnow's shared DuckDB (one attached catalog per database).

- `CREATE DATABASE X` also creates schema `X.PUBLIC` and makes `X.PUBLIC` the session's current schema;
  `IF NOT EXISTS` on an existing database changes nothing; `OR REPLACE` drops the old one first.
- `USE DATABASE X` makes `X.PUBLIC` current when it exists (fakesnow would leave no current schema).
- `DROP DATABASE [IF EXISTS] X` detaches the catalog, forgets fakesnow's metadata about it, and leaves every
  session that was using it without a current database.

The caller serialises these with every other statement, so each runs alone.
"""
from __future__ import annotations

from typing import Any

from . import wire

# fakesnow's side tables that describe objects by catalog (comments, text lengths, stages, file formats).
_METADATA = {
    "_fs_global._fs_information_schema._fs_tables_ext": "ext_table_catalog",
    "_fs_global._fs_information_schema._fs_columns_ext": "ext_table_catalog",
    "_fs_global._fs_information_schema._fs_stages": "database_name",
    "_fs_global._fs_information_schema._fs_file_formats": "database_name",
}


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def exists(duck: Any, name: str) -> bool:
    # fakesnow matches catalogs case-insensitively too (DuckDB's catalog names are).
    row = duck.execute("SELECT 1 FROM duckdb_databases() WHERE upper(database_name) = upper(?)", [name]).fetchone()
    return row is not None


def drop(duck: Any, sessions: dict[str, Any], name: str) -> None:
    for conn in sessions.values():
        if conn.database and conn.database.upper() == name.upper():
            conn.database, conn._schema = None, None
            conn.database_set = conn.schema_set = False
            conn._duck_conn.execute("SET schema = 'memory.main'")
    duck.execute(f"DETACH DATABASE {_quote(name)}")
    for table, column in _METADATA.items():
        duck.execute(f"DELETE FROM {table} WHERE upper({column}) = upper(?)", [name])


def make_public_current(duck: Any, conn: Any, name: str) -> None:
    """Create `name.PUBLIC` if missing and make it the session's current schema."""
    duck.execute(f"CREATE SCHEMA IF NOT EXISTS {_quote(name)}.PUBLIC")
    conn.cursor().execute(f"USE SCHEMA {_quote(name)}.PUBLIC")


def has_public(duck: Any, name: str) -> bool:
    row = duck.execute("SELECT 1 FROM duckdb_schemas() WHERE upper(database_name) = upper(?) AND schema_name = 'PUBLIC'",
                       [name]).fetchone()
    return row is not None


def drop_statement(duck: Any, sessions: dict[str, Any], conn: Any, name: str, if_exists: bool) -> dict[str, Any]:
    """The answer to `DROP DATABASE [IF EXISTS] name`."""
    if not exists(duck, name):
        if if_exists:
            return wire.status_body(f"Drop statement executed successfully ({name} already dropped).",
                                    conn.database, conn.schema)
        raise wire.does_not_exist("Database", name)
    drop(duck, sessions, name)
    return wire.status_body(f"{name} successfully dropped.", conn.database, conn.schema)


def comment_columns(duck: Any, conn: Any,
                    comments: tuple[tuple[tuple[str | None, str | None, str], str, str], ...]) -> dict[str, Any]:
    """`ALTER TABLE … ALTER COLUMN c COMMENT 'x'` / `COMMENT ON COLUMN`: DuckDB keeps the comment, and fakesnow's
    INFORMATION_SCHEMA.COLUMNS reads it from there. A table or column that is not there is Snowflake's error."""
    for (database, schema, table), column, text in comments:
        database, schema = database or conn.database, schema or conn.schema
        if not database or not schema:
            raise wire.no_current_database()
        rows = duck.execute("SELECT column_name FROM duckdb_columns() WHERE upper(database_name) = upper(?) AND "
                            "upper(schema_name) = upper(?) AND upper(table_name) = upper(?)",
                            [database, schema, table]).fetchall()
        if not rows:
            raise wire.does_not_exist("Table", f"{database}.{schema}.{table}")
        found = [r[0] for r in rows if r[0].upper() == column.upper()]
        if not found:
            raise wire.invalid_identifier(column)
        target = ".".join(_quote(x) for x in (database, schema, table, found[0]))
        duck.execute(f"COMMENT ON COLUMN {target} IS {_literal(text)}")
    return wire.status_body("Statement executed successfully.", conn.database, conn.schema)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
