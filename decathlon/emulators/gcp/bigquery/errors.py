"""Query failures as BigQuery reports them: the HTTP status, the reason (invalidQuery, notFound, invalid) and
a GoogleSQL-style message (`Syntax error: ... at [1:8]`, `Unrecognized name: x at [1:58]`)."""
from __future__ import annotations

import re
from dataclasses import dataclass

from decathlon.emulators.gcp import errors
from decathlon.emulators.kit.errors import ApiError
from decathlon.emulators.kit.failure import ServiceError


@dataclass
class QueryError(ServiceError):
    code: int
    reason: str
    message: str
    location: str | None = None

    def __str__(self) -> str:
        return self.message

    def item(self) -> dict[str, str]:
        """A job's `status.errorResult` and `status.errors` item as BigQuery writes it: reason, location, message, in
        that order and no more (the Python client prints them so, `…; reason: invalidQuery, location: query, message:
        …`, which is what an agent reads; the recorded runs show it)."""
        item = {"reason": self.reason}
        if self.location:
            item["location"] = self.location
        item["message"] = self.message
        return item

    def api_error(self) -> ApiError:
        return errors.google_error(self.code, self.reason, self.message, self.location)


def invalid_query(message: str) -> QueryError:
    return QueryError(400, "invalidQuery", message, "query")


def position(sql: str, needle: str) -> str:
    """`[line:col]` of the first whole-word `needle` in the user's SQL (DuckDB's positions are of its own text)."""
    m = re.search(r"(?<![\w`])`?" + re.escape(needle) + r"`?(?![\w`])", sql, re.I)
    offset = m.start() if m else 0
    line = sql.count("\n", 0, offset) + 1
    col = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    return f"[{line}:{col}]"


def from_duckdb(exc: Exception, sql: str) -> QueryError:
    """A DuckDB error in BigQuery's words."""
    text = str(exc).split("\n", 1)[0]
    kind = type(exc).__name__
    text = re.sub(r"^[A-Za-z ]+ Error: ", "", text)
    if kind == "InterruptException":  # the runner says why (decathlon.emulators.gcp.bigquery.runner)
        return QueryError(400, "stopped", "Job execution was cancelled: User requested cancellation")
    if kind == "OutOfMemoryException":
        return QueryError(400, "resourcesExceeded", "Resources exceeded during query execution: The query could not "
                          "be executed in the allotted memory.")
    if kind == "PermissionException":  # DuckDB's locked-down configuration: nothing outside the warehouse
        return QueryError(403, "accessDenied", "Access Denied: the query reads outside BigQuery")
    m = re.search(r'Referenced column "([^"]+)" not found', text)
    if m:
        return invalid_query(f"Unrecognized name: {m.group(1)} at {position(sql, m.group(1))}")
    m = re.search(r'Ambiguous reference to column name "([^"]+)"', text)
    if m:
        return invalid_query(f"Column name {m.group(1)} is ambiguous at {position(sql, m.group(1))}")
    m = re.search(r'Table "([^"]+)" does not have a column named "([^"]+)"', text)
    if m:
        return invalid_query(f"Name {m.group(2)} not found inside {m.group(1)} at {position(sql, m.group(2))}")
    m = re.search(r'Referenced table "([^"]+)" not found', text)
    if m:
        return invalid_query(f"Unrecognized name: {m.group(1)} at {position(sql, m.group(1))}")
    m = re.search(r"No function matches the given name and argument types '([^(]+)\(", text)
    if m:
        return invalid_query(f"No matching signature for function {m.group(1).upper()} at {position(sql, m.group(1))}")
    m = re.search(r"Scalar Function with name (\w+) does not exist", text) or \
        re.search(r"Aggregate Function with name (\w+) does not exist", text) or \
        re.search(r"Function with name (\w+) does not exist", text)
    if m:
        return invalid_query(f"Function not found: {m.group(1)} at {position(sql, m.group(1))}")
    m = re.search(r'column "([^"]+)" must appear in the GROUP BY clause', text)
    if m:
        return invalid_query(f"SELECT list expression references column {m.group(1)} which is neither grouped nor "
                             f"aggregated at {position(sql, m.group(1))}")
    if kind == "ParserException":
        m = re.search(r'syntax error at or near "([^"]*)"', text)
        if m:
            return invalid_query(f'Syntax error: Unexpected "{m.group(1)}" at {position(sql, m.group(1))}')
        return invalid_query(f"Syntax error: {text}")
    if kind == "ConversionException":
        return QueryError(400, "invalidQuery", text.replace("Could not convert string", "Bad value:")
                          .replace("Conversion Error: ", ""), "query")
    if kind == "ConstraintException":
        return QueryError(400, "invalid", text)
    if "Division by zero" in text or "division by zero" in text:
        return QueryError(400, "invalidQuery", "division by zero: " + text)
    return invalid_query(text)
