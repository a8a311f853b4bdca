"""Snowflake's JSON answers to a query request, for the statements the emulator answers itself and for errors.

A failed statement is an HTTP 200 with `success: false`, a six-digit `code` and a `sqlState`: the connector raises
ProgrammingError from it at once. Any other status (a 5xx above all) makes the connector retry for minutes, so
nothing the emulator sends for a query is ever a 5xx.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from decathlon.emulators.kit.failure import ServiceError

DDL_STATEMENT = 0x6000  # Snowflake's statementTypeId for DDL

_STATUS_COLUMN = {
    "name": "status", "database": "", "schema": "", "table": "", "nullable": True, "type": "text",
    "byteLength": 16777216, "length": 16777216, "scale": None, "precision": None, "collation": None,
}


@dataclass(frozen=True)
class SnowflakeError(ServiceError):
    """An error as Snowflake reports it: errno 2003 → code `002003`."""

    errno: int
    sqlstate: str
    message: str

    def body(self, query_id: str | None = None) -> dict[str, Any]:
        code = f"{self.errno:06d}"
        return {
            "data": {"errorCode": code, "sqlState": self.sqlstate, "queryId": query_id or str(uuid.uuid4()),
                     "internalError": False},
            "code": code,
            "message": self.message,
            "success": False,
        }


def internal_error() -> SnowflakeError:
    """What Snowflake says when it fails itself: the emulator's bugs read the same (the log has the details)."""
    incident = uuid.uuid4().int % 10_000_000
    return SnowflakeError(603, "XX000", f"SQL execution internal error:\nProcessing aborted due to error 300002:"
                                        f"{incident}; incident {incident}.")


def does_not_exist(kind: str, name: str) -> SnowflakeError:
    return SnowflakeError(2003, "02000", f"SQL compilation error:\n{kind} '{name}' does not exist or not authorized.")


def invalid_identifier(name: str) -> SnowflakeError:
    return SnowflakeError(904, "42000", f"SQL compilation error: error line 1 at position 0\ninvalid identifier '{name}'")


def no_current_database() -> SnowflakeError:
    return SnowflakeError(90105, "22000", "Cannot perform ALTER. This session does not have a current database. Call "
                                          "'USE DATABASE', or use a qualified name.")


def already_exists(name: str) -> SnowflakeError:
    return SnowflakeError(2002, "42710", f"SQL compilation error:\nObject '{name}' already exists.")


def statement_too_large(size: int, limit: int) -> SnowflakeError:
    return SnowflakeError(1003, "42000", f"SQL compilation error:\nStatement of {size} bytes exceeds the maximum "
                                         f"query text size of {limit} bytes.")


def statement_count_mismatch(count: int) -> SnowflakeError:
    return SnowflakeError(8, "0A000", f"Actual statement count {count} did not match the desired statement count 1.")


def unknown_function(message: str) -> SnowflakeError:
    return SnowflakeError(2140, "42601", message)


def statement_timeout(seconds: float) -> SnowflakeError:
    return SnowflakeError(630, "57014", f"Statement reached its statement or warehouse timeout of {seconds:g} second(s) "
                                        "and was canceled.")


def cancelled() -> SnowflakeError:
    return SnowflakeError(604, "57014", "SQL execution canceled")


def bad_request(message: str) -> SnowflakeError:
    return SnowflakeError(390101, "08004", f"Invalid request: {message}")


def no_such_path(method: str, path: str, status: int) -> dict[str, Any]:
    what = "Method Not Allowed" if status == 405 else "Not Found"
    return {"data": None, "code": None, "message": f"{what}: {method} {path}", "success": False}


def status_body(text: str, database: str | None, schema: str | None) -> dict[str, Any]:
    """The one-row `status` result Snowflake returns for DDL (`X successfully dropped.`)."""
    return {
        "data": {
            "parameters": [{"name": "TIMEZONE", "value": "Etc/UTC"}],
            "rowtype": [_STATUS_COLUMN],
            "rowset": [[text]],
            "total": 1,
            "returned": 1,
            "queryId": str(uuid.uuid4()),
            "statementTypeId": DDL_STATEMENT,
            "finalDatabaseName": database,
            "finalSchemaName": schema,
            "queryResultFormat": "json",
        },
        "success": True,
    }
