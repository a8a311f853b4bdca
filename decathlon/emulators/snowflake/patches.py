"""The only place that reaches into fakesnow's internals, at its pinned version (ci/servers/saas.txt: 0.12.1).

Each patch closes a gap between fakesnow's server and Snowflake that no wrapper around its HTTP handler can reach:

- NULL timestamps: fakesnow builds Snowflake's timestamp struct without a validity mask, so a NULL comes back to
  the connector as 1970-01-01. The struct gets the column's null mask.
- Errors: fakesnow turns only some DuckDB errors into Snowflake ones; any other (a NOT NULL violation, a bad cast)
  escapes as an HTTP 500, which the connector retries for minutes. Every exception out of a cursor becomes a
  Snowflake ProgrammingError, which fakesnow's handler already answers in Snowflake's shape.
- AUTOINCREMENT: fakesnow creates the column's sequence in the session's current schema, so a CREATE TABLE in
  another database fails (DuckDB will not write two catalogs in one statement). The sequence goes next to its table.
- Result types: DuckDB types fakesnow cannot describe (SMALLINT, FLOAT …) fail the whole answer; they get the
  Snowflake types the connector reads them as.
- Sums of numbers: fakesnow casts every SUM/AVG/… argument to DOUBLE so that a VARCHAR sums as Snowflake's implicit
  cast sums it; a SUM of a NUMBER(38,2) then comes back a FLOAT (125912.23999999999, not Snowflake's 125912.24) and
  a SUM of integers `3.0` (a recorded run's answer). The cast is now made only where DuckDB refuses the statement
  without it (an aggregate of text): the statement runs as written first, and again with the cast.
- Column defaults: INFORMATION_SCHEMA.COLUMNS shows a default as DuckDB keeps it, `CURRENT_TIMESTAMP`, where
  Snowflake shows `CURRENT_TIMESTAMP()` (recorded runs' describe_table). fakesnow's view text gets Snowflake's
  spelling of the niladic date functions, before fakesnow's server module makes its first database with it.

`verify()` fails loudly when the pinned internals are not what these patches expect (tests call it too).
"""
from __future__ import annotations

import contextvars
import functools
import importlib.metadata
import logging
import re
from typing import Any

log = logging.getLogger("decathlon.emulators.snowflake")

PINNED_FAKESNOW = "0.12.1"

# DuckDB result types fakesnow 0.12.1 has no Snowflake type for, and the type the connector decodes them as.
_EXTRA_RESULT_TYPES = {
    "TINYINT": "fixed", "SMALLINT": "fixed", "UTINYINT": "fixed", "USMALLINT": "fixed", "UINTEGER": "fixed",
    "FLOAT": "real", "UUID": "text",
}

_applied = False

_CAST_AGGREGATES = contextvars.ContextVar("decathlon_cast_aggregates", default=False)
# DuckDB's refusal of a numeric aggregate of text (`sum(VARCHAR)`), which fakesnow's cast exists for.
_TEXT_AGGREGATE = re.compile(r"No function matches the given name and argument types "
                             r"'(sum|avg|median|var\w*|stddev\w*)\([^)]*VARCHAR", re.I)

_DUCK_DEFAULT = "columns.column_default AS COLUMN_DEFAULT"
# A whole default that is one of the niladic date functions, spelled as Snowflake shows it (DuckDB keeps it bare,
# in the case it was written in).
_SNOWFLAKE_DEFAULT = ("case when upper(columns.column_default) in ('CURRENT_TIMESTAMP', 'CURRENT_DATE', 'CURRENT_TIME') "
                      "then upper(columns.column_default) || '()' else columns.column_default end AS COLUMN_DEFAULT")


class PinMismatch(RuntimeError):
    pass


def verify() -> None:
    """Raise PinMismatch unless fakesnow is the pinned version with the internals the patches replace."""
    import fakesnow.arrow  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.cursor  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.info_schema  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.rowtype  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.server  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.transforms  # type: ignore[import-not-found,import-untyped,unused-ignore]

    version = importlib.metadata.version("fakesnow")
    if version != PINNED_FAKESNOW:
        raise PinMismatch(f"fakesnow {version} is installed; decathlon.emulators.snowflake patches {PINNED_FAKESNOW}")
    expected: list[tuple[Any, str]] = [
        (fakesnow.arrow, "timestamp_to_sf_struct"), (fakesnow.arrow, "to_sf"),
        (fakesnow.cursor.FakeSnowflakeCursor, "execute"), (fakesnow.cursor.FakeSnowflakeCursor, "_transform_explode"),
        (fakesnow.rowtype, "duckdb_to_sf_type"), (fakesnow.transforms, "numeric_agg_implicit_cast"),
        (fakesnow.server, "query_request"), (fakesnow.server, "sessions"), (fakesnow.server, "shared_fs"),
        (fakesnow.server, "to_token"), (fakesnow.server, "routes"), (fakesnow.server, "ServerError"),
    ]
    missing = [f"{getattr(owner, '__name__', owner)}.{name}" for owner, name in expected if not hasattr(owner, name)]
    if missing:
        raise PinMismatch(f"fakesnow {version} lacks {', '.join(missing)}")
    if not isinstance(fakesnow.rowtype.duckdb_to_sf_type, dict):
        raise PinMismatch("fakesnow.rowtype.duckdb_to_sf_type is no longer a dict")
    columns_view = getattr(fakesnow.info_schema, "SQL_CREATE_GLOBAL_INFORMATION_SCHEMA_COLUMNS_VIEW", "")
    if _DUCK_DEFAULT not in columns_view and _SNOWFLAKE_DEFAULT not in columns_view:
        raise PinMismatch("fakesnow's INFORMATION_SCHEMA.COLUMNS view no longer reads column_default as it did")


def _masked_timestamps(original: Any) -> Any:
    import pyarrow as pa  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import pyarrow.compute as pc  # type: ignore[import-not-found,import-untyped,unused-ignore]

    @functools.wraps(original)
    def timestamp_to_sf_struct(ts: Any) -> Any:
        struct = original(ts)
        column = ts.combine_chunks() if isinstance(ts, pa.ChunkedArray) else ts
        if column.null_count == 0:
            return struct
        children = [pc.fill_null(struct.field(i), 0) for i in range(struct.type.num_fields)]
        return pa.StructArray.from_arrays(children, fields=list(struct.type), mask=column.is_null())

    return timestamp_to_sf_struct


def _translated_errors(original: Any) -> Any:
    from snowflake.connector.errors import Error  # type: ignore[import-not-found,import-untyped,unused-ignore]

    from .errors import translate

    @functools.wraps(original)
    def execute(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 (any escape would be an HTTP 500: a connector retry storm)
            if not _CAST_AGGREGATES.get() and _TEXT_AGGREGATE.search(str(exc)):
                # Refused at binding, so nothing ran: again, with fakesnow's cast of the aggregates' arguments.
                token = _CAST_AGGREGATES.set(True)
                try:
                    return execute(self, *args, **kwargs)
                finally:
                    _CAST_AGGREGATES.reset(token)
            if isinstance(exc, Error):
                raise
            raise translate(exc) from exc

    return execute


def _typed_aggregates(original: Any) -> Any:
    """fakesnow's transform, keeping its Snowflake column name (`SUM(X)`) but its DOUBLE cast only on a retry."""

    @functools.wraps(original)
    def numeric_agg_implicit_cast(expression: Any) -> Any:
        argument = expression.args.get("this")
        out = original(expression)
        if not _CAST_AGGREGATES.get() and argument is not None and expression.args.get("this") is not argument:
            expression.set("this", argument)
        return out

    return numeric_agg_implicit_cast


def _sequences_beside_tables(original: Any) -> Any:
    from sqlglot import exp  # type: ignore[import-not-found,import-untyped,unused-ignore]

    @functools.wraps(original)
    def _transform_explode(self: Any, expression: Any) -> Any:
        parts = original(self, expression)
        if (len(parts) != 2 or not isinstance(parts[0], exp.Create) or str(parts[0].kind).upper() != "SEQUENCE"
                or not isinstance(parts[1], exp.Create) or str(parts[1].kind).upper() != "TABLE"):
            return parts
        sequence, table = parts[0].this, parts[1].find(exp.Table)
        catalog = (table.catalog if table is not None else "") or self._conn.database
        schema = (table.db if table is not None else "") or self._conn.schema
        if not (catalog and schema and isinstance(sequence, exp.Table)):
            return parts
        name = sequence.name
        parts[0].set("this", exp.table_(name, db=schema, catalog=catalog, quoted=False))
        for call in parts[1].find_all(exp.Anonymous):
            if call.name.upper() == "NEXTVAL" and call.expressions and call.expressions[0].name == name:
                call.expressions[0].replace(exp.Literal.string(f"{catalog}.{schema}.{name}"))
        return parts

    return _transform_explode


def apply() -> None:
    global _applied
    if _applied:
        return
    # First: fakesnow's server module makes its shared database (and the view) when it is imported, which verify does.
    import fakesnow.info_schema  # type: ignore[import-not-found,import-untyped,unused-ignore]

    view = fakesnow.info_schema.SQL_CREATE_GLOBAL_INFORMATION_SCHEMA_COLUMNS_VIEW
    fakesnow.info_schema.SQL_CREATE_GLOBAL_INFORMATION_SCHEMA_COLUMNS_VIEW = view.replace(_DUCK_DEFAULT,
                                                                                        _SNOWFLAKE_DEFAULT)
    verify()
    import fakesnow.arrow  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.cursor  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.rowtype  # type: ignore[import-not-found,import-untyped,unused-ignore]
    import fakesnow.transforms  # type: ignore[import-not-found,import-untyped,unused-ignore]

    fakesnow.arrow.timestamp_to_sf_struct = _masked_timestamps(fakesnow.arrow.timestamp_to_sf_struct)
    cursor = fakesnow.cursor.FakeSnowflakeCursor
    cursor.execute = _translated_errors(cursor.execute)
    cursor._transform_explode = _sequences_beside_tables(cursor._transform_explode)
    fakesnow.transforms.numeric_agg_implicit_cast = _typed_aggregates(fakesnow.transforms.numeric_agg_implicit_cast)
    for duck, snow in _EXTRA_RESULT_TYPES.items():
        fakesnow.rowtype.duckdb_to_sf_type.setdefault(duck, snow)
    _applied = True
