"""DuckDB's (and fakesnow's own) exceptions as the ProgrammingError Snowflake would raise for the same statement:
its error number, SQL state and message style. The message keeps DuckDB's first line where Snowflake's wording
depends on details DuckDB does not give."""
from __future__ import annotations

from typing import Any

from .wire import internal_error


def _first_line(exc: BaseException) -> str:
    text = str(exc.args[0]) if exc.args else str(exc)
    return text.split("\n")[0]


def classify(exc: BaseException) -> tuple[int, str, str]:
    """(errno, sqlstate, message) for an exception that escaped fakesnow's own mapping."""
    import duckdb  # type: ignore[import-not-found,import-untyped,unused-ignore]

    line = _first_line(exc)
    if isinstance(exc, duckdb.ConstraintException) and "NOT NULL" in line.upper():
        return 100072, "22000", "NULL result in a non-nullable column"
    if isinstance(exc, duckdb.OutOfRangeException):
        return 100046, "22003", f"Number out of representable range: {line}"
    if isinstance(exc, (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.TypeMismatchException)):
        return 100038, "22018", line
    if isinstance(exc, (duckdb.NotImplementedException, NotImplementedError)):
        return 2, "0A000", f"Unsupported feature '{line}'."
    if isinstance(exc, (duckdb.BinderException, duckdb.CatalogException)):
        return 2003, "42S02", f"SQL compilation error:\n{line}"
    if isinstance(exc, duckdb.TransactionException):
        return 625, "57014", line
    fallback = internal_error()
    return fallback.errno, fallback.sqlstate, fallback.message


def translate(exc: BaseException) -> Any:
    """A snowflake.connector ProgrammingError for `exc`, which fakesnow's handler answers in Snowflake's shape."""
    from snowflake.connector.errors import ProgrammingError  # type: ignore[import-not-found,import-untyped,unused-ignore]

    errno, sqlstate, message = classify(exc)
    return ProgrammingError(msg=message, errno=errno, sqlstate=sqlstate)
