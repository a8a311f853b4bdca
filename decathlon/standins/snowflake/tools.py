"""The reference's 14 tools: names, descriptions, input schemas, and what each one does and answers.

Every call answers with content, never a protocol error. A failure reads `Error: <exception text>`
without the isError flag, as the reference's catch-all turns every exception into plain text; only the
SDK's own schema check (server.py) sets the flag.
"""
from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .cli import Settings
from .database import SnowflakeDB
from .serialization import to_json, to_yaml
from .sqlcheck import check_access, contains_write, guess_database

logger = logging.getLogger("mcp_snowflake_server")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]
    tags: tuple[str, ...] = ()


def _names(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "description": description}


TOOL_SPECS: tuple[ToolSpec, ...] = (
    ToolSpec("list_databases", "List all available databases in Snowflake", {"type": "object", "properties": {}}),
    ToolSpec("list_schemas", "List all schemas in a database", {
        "type": "object",
        "properties": {"database": {"type": "string", "description": "Database name to list schemas from"}},
        "required": ["database"]}),
    ToolSpec("list_tables", "List all tables in a specific database and schema", {
        "type": "object",
        "properties": {"database": {"type": "string", "description": "Database name"},
                       "schema": {"type": "string", "description": "Schema name"}},
        "required": ["database", "schema"]}),
    ToolSpec("describe_table", "Get the schema information for a specific table", {
        "type": "object",
        "properties": {"table_name": {"type": "string",
                                      "description": "Fully qualified table name in the format 'database.schema.table'"}},
        "required": ["table_name"]}),
    ToolSpec("read_query", "Execute a SELECT query.", {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "SELECT SQL query to execute"}},
        "required": ["query"]}),
    ToolSpec("append_insight", "Add a data insight to the memo", {
        "type": "object",
        "properties": {"insight": {"type": "string", "description": "Data insight discovered from analysis"}},
        "required": ["insight"]}, ("resource_based",)),
    ToolSpec("write_query", "Execute an INSERT, UPDATE, or DELETE query on the Snowflake database", {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "SQL query to execute"}},
        "required": ["query"]}, ("write",)),
    ToolSpec("create_table", "Create a new table in the Snowflake database", {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "CREATE TABLE SQL statement"}},
        "required": ["query"]}, ("write",)),
    ToolSpec("create_databases", "Create multiple databases in Snowflake", {
        "type": "object",
        "properties": {"databases": _names("List of database names to create")},
        "required": ["databases"]}, ("write",)),
    ToolSpec("drop_databases", "Drop multiple databases in Snowflake", {
        "type": "object",
        "properties": {"databases": _names("List of database names to drop")},
        "required": ["databases"]}, ("write",)),
    ToolSpec("create_schemas", "Create multiple schemas in a database", {
        "type": "object",
        "properties": {"database": {"type": "string", "description": "Database name where schemas will be created"},
                       "schemas": _names("List of schema names to create")},
        "required": ["database", "schemas"]}, ("write",)),
    ToolSpec("drop_schemas", "Drop multiple schemas from a database", {
        "type": "object",
        "properties": {"database": {"type": "string", "description": "Database name where schemas will be dropped"},
                       "schemas": _names("List of schema names to drop")},
        "required": ["database", "schemas"]}, ("write",)),
    ToolSpec("create_tables", "Create multiple tables in a database schema", {
        "type": "object",
        "properties": {
            "database": {"type": "string", "description": "Database name"},
            "schema": {"type": "string", "description": "Schema name"},
            "tables": {
                "type": "array",
                "items": {"oneOf": [
                    {"type": "string", "description": "CREATE TABLE SQL statement"},
                    {"type": "object",
                     "properties": {"name": {"type": "string", "description": "Table name"},
                                    "definition": {"type": "string", "description": "CREATE TABLE SQL statement"}},
                     "required": ["name", "definition"]},
                ]},
                "description": "List of table definitions to create"}},
        "required": ["database", "schema", "tables"]}, ("write",)),
    ToolSpec("drop_tables", "Drop multiple tables from a database schema", {
        "type": "object",
        "properties": {"database": {"type": "string", "description": "Database name"},
                       "schema": {"type": "string", "description": "Schema name"},
                       "tables": _names("List of table names to drop")},
        "required": ["database", "schema", "tables"]}, ("write",)),
)

WRITES_REFUSED = "Write operations are not allowed for this data connection"
# The reference passes `allowed_databases=` to every handler but this one, whose signature has no room for
# it: append_insight fails with Python's TypeError on every call and the memo never fills.
APPEND_INSIGHT_FAILS = "handle_append_insight() got an unexpected keyword argument 'allowed_databases'"
NO_INSIGHTS = "No data insights have been discovered yet."


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class JsonResource:
    uri: str
    text: str


Content = Text | JsonResource
Handler = Callable[[dict[str, Any]], Awaitable[list[Content]]]


def listed_tools(settings: Settings) -> list[ToolSpec]:
    dropped_tags = () if settings.allow_write else ("write",)
    return [spec for spec in TOOL_SPECS
            if spec.name not in settings.exclude_tools and not any(tag in dropped_tags for tag in spec.tags)]


def _joined(results: list[str], warnings: list[str]) -> str:
    text = "\n".join(results)
    return "\n".join(warnings) + "\n" + text if warnings else text


class Tools:
    def __init__(self, db: SnowflakeDB, settings: Settings) -> None:
        self.db = db
        self.settings = settings
        self.listed = listed_tools(settings)
        self._handlers: dict[str, Handler] = {
            "list_databases": self.list_databases, "list_schemas": self.list_schemas, "list_tables": self.list_tables,
            "describe_table": self.describe_table, "read_query": self.read_query, "append_insight": self.append_insight,
            "write_query": self.write_query, "create_table": self.create_table,
            "create_databases": self.create_databases, "drop_databases": self.drop_databases,
            "create_schemas": self.create_schemas, "drop_schemas": self.drop_schemas,
            "create_tables": self.create_tables, "drop_tables": self.drop_tables,
        }

    async def call(self, name: str, arguments: dict[str, Any]) -> list[Content]:
        if name in self.settings.exclude_tools:
            return [Text(f"Tool {name} is excluded from this data connection")]
        try:
            if not any(spec.name == name for spec in self.listed):
                raise ValueError(f"Unknown tool: {name}")
            return await self._handlers[name](arguments)
        except Exception as error:  # noqa: BLE001 - every failure becomes the call's text, as upstream
            logger.error(f"Error in handle_call_tool: {error}")
            return [Text(f"Error: {error}")]

    # -- helpers -------------------------------------------------------------------------------------

    def _data(self, output: dict[str, Any]) -> list[Content]:
        text = to_yaml(output)
        json_text = to_json(output)
        content: list[Content] = [Text(text)]
        if not self.settings.exclude_json_results:
            content.append(JsonResource(f"data://{output['data_id']}", json_text))
        return content

    def _excluded(self, rows: list[dict[str, Any]], kind: str, column: str) -> list[dict[str, Any]]:
        patterns = self.settings.exclusion.get(kind) or []
        if not patterns:
            return rows
        return [row for row in rows
                if not any(pattern.lower() in row.get(column, "").lower() for pattern in patterns)]

    def _check(self, database: str) -> None:
        check_access(database, self.settings.allowed_databases)

    def _check_query(self, query: str) -> None:
        if self.settings.allowed_databases is not None:
            guessed = guess_database(query)
            if guessed:
                self._check(guessed)

    def _require_write(self) -> None:
        if not self.settings.allow_write:
            raise ValueError(WRITES_REFUSED)

    async def _existing(self, query: str, column: str) -> set[str]:
        rows, _ = await self.db.execute_query(query)
        return {row[column].upper() for row in rows}

    # -- reading -------------------------------------------------------------------------------------

    async def list_databases(self, arguments: dict[str, Any]) -> list[Content]:
        rows, data_id = await self.db.execute_query("SELECT DATABASE_NAME FROM INFORMATION_SCHEMA.DATABASES")
        if self.settings.allowed_databases is not None:
            allowed = {name.upper() for name in self.settings.allowed_databases}
            rows = [row for row in rows if row.get("DATABASE_NAME", "").upper() in allowed]
        rows = self._excluded(rows, "databases", "DATABASE_NAME")
        return self._data({"type": "data", "data_id": data_id, "data": rows})

    async def list_schemas(self, arguments: dict[str, Any]) -> list[Content]:
        if not arguments or "database" not in arguments:
            raise ValueError("Missing required 'database' parameter")
        database = arguments["database"]
        self._check(database)
        rows, data_id = await self.db.execute_query(f"SELECT SCHEMA_NAME FROM {database.upper()}.INFORMATION_SCHEMA.SCHEMATA")
        rows = self._excluded(rows, "schemas", "SCHEMA_NAME")
        return self._data({"type": "data", "data_id": data_id, "database": database, "data": rows})

    async def list_tables(self, arguments: dict[str, Any]) -> list[Content]:
        if not arguments or "database" not in arguments or "schema" not in arguments:
            raise ValueError("Missing required 'database' and 'schema' parameters")
        database, schema = arguments["database"], arguments["schema"]
        self._check(database)
        # The reference's text to the blank: a syntax error's "line N at position M" counts from it.
        query = ("\n        SELECT table_catalog, table_schema, table_name, comment \n"
                 f"        FROM {database}.information_schema.tables \n"
                 f"        WHERE table_schema = '{schema.upper()}'\n    ")
        rows, data_id = await self.db.execute_query(query)
        rows = self._excluded(rows, "tables", "TABLE_NAME")
        return self._data({"type": "data", "data_id": data_id, "database": database, "schema": schema, "data": rows})

    async def describe_table(self, arguments: dict[str, Any]) -> list[Content]:
        if not arguments or "table_name" not in arguments:
            raise ValueError("Missing table_name argument")
        parts = arguments["table_name"].split(".")
        if len(parts) < 3:
            raise ValueError("Table name must be fully qualified as 'database.schema.table'")
        database = parts[0].upper()
        self._check(database)
        schema, table = parts[1].upper(), parts[2].upper()
        query = ("\n        SELECT column_name, column_default, is_nullable, data_type, comment \n"
                 f"        FROM {database}.information_schema.columns \n"
                 f"        WHERE table_schema = '{schema}' AND table_name = '{table}'\n    ")
        rows, data_id = await self.db.execute_query(query)
        return self._data({"type": "data", "data_id": data_id, "database": database, "schema": schema, "table": table,
                           "data": rows})

    async def read_query(self, arguments: dict[str, Any]) -> list[Content]:
        if not arguments or "query" not in arguments:
            raise ValueError("Missing query argument")
        query = arguments["query"]
        if contains_write(query):
            raise ValueError("Calls to read_query should not contain write operations")
        self._check_query(query)
        rows, data_id = await self.db.execute_query(query)
        return self._data({"type": "data", "data_id": data_id, "data": rows})

    async def append_insight(self, arguments: dict[str, Any]) -> list[Content]:
        raise TypeError(APPEND_INSIGHT_FAILS)

    # -- writing -------------------------------------------------------------------------------------

    async def write_query(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        query = arguments["query"]
        if query.strip().upper().startswith("SELECT"):
            raise ValueError("SELECT queries are not allowed for write_query")
        self._check_query(query)
        rows, _ = await self.db.execute_query(query)
        return [Text(str(rows))]

    async def create_table(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        if not arguments["query"].strip().upper().startswith("CREATE TABLE"):
            raise ValueError("Only CREATE TABLE statements are allowed")
        _, data_id = await self.db.execute_query(arguments["query"])
        return [Text(f"Table created successfully. data_id = {data_id}")]

    def _names_argument(self, arguments: dict[str, Any], key: str, what: str) -> list[Any]:
        names = arguments[key]
        if not isinstance(names, list):
            raise ValueError(f"'{key}' parameter must be a list of {what}")
        return names

    async def create_databases(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        if not arguments or "databases" not in arguments:
            raise ValueError("Missing required 'databases' parameter")
        names = self._names_argument(arguments, "databases", "database names")
        results: list[str] = []
        warnings: list[str] = []
        permitted = []
        for name in names:
            try:
                self._check(name)
                permitted.append(name)
            except Exception:  # noqa: BLE001 - a refused name becomes a warning, as upstream
                warnings.append(f"Warning: Creating database '{name}' is not allowed, you can only create databases in "
                                f"the following list: {self.settings.allowed_databases}")
        existing = await self._existing("SELECT DATABASE_NAME FROM INFORMATION_SCHEMA.DATABASES", "DATABASE_NAME")
        for name in permitted:
            if name.upper() in existing:
                warnings.append(f"Warning: Database '{name}' already exists, skipping creation")
                continue
            try:
                await self.db.execute_query(f"CREATE DATABASE {name}")
                results.append(f"Successfully created database '{name}'")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to create database '{name}': {error}")
        return [Text(_joined(results, warnings))]

    async def drop_databases(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        if not arguments or "databases" not in arguments:
            raise ValueError("Missing required 'databases' parameter")
        names = self._names_argument(arguments, "databases", "database names")
        results: list[str] = []
        warnings: list[str] = []
        for name in names:
            self._check(name)
        existing = await self._existing("SELECT DATABASE_NAME FROM INFORMATION_SCHEMA.DATABASES", "DATABASE_NAME")
        for name in names:
            if name.upper() not in existing:
                warnings.append(f"Warning: Database '{name}' does not exist, skipping deletion")
                continue
            try:
                await self.db.execute_query(f"DROP DATABASE {name}")
                results.append(f"Successfully dropped database '{name}'")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to drop database '{name}': {error}")
        return [Text(_joined(results, warnings))]

    def _schemas_setup(self, arguments: dict[str, Any]) -> tuple[str, list[Any]]:
        self._require_write()
        if not arguments or "database" not in arguments or "schemas" not in arguments:
            raise ValueError("Missing required 'database' and 'schemas' parameters")
        database = arguments["database"]
        names = self._names_argument(arguments, "schemas", "schema names")
        self._check(database)
        return database, names

    async def create_schemas(self, arguments: dict[str, Any]) -> list[Content]:
        database, names = self._schemas_setup(arguments)
        results: list[str] = []
        warnings: list[str] = []
        try:
            existing = await self._existing(f"SELECT SCHEMA_NAME FROM {database}.INFORMATION_SCHEMA.SCHEMATA", "SCHEMA_NAME")
        except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
            return [Text(f"Failed to check existing schemas in database '{database}': {error}")]
        for name in names:
            if name.upper() in existing:
                warnings.append(f"Warning: Schema '{name}' already exists in database '{database}', skipping creation")
                continue
            try:
                await self.db.execute_query(f"CREATE SCHEMA {database}.{name}")
                results.append(f"Successfully created schema '{name}' in database '{database}'")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to create schema '{name}' in database '{database}': {error}")
        return [Text(_joined(results, warnings))]

    async def drop_schemas(self, arguments: dict[str, Any]) -> list[Content]:
        database, names = self._schemas_setup(arguments)
        results: list[str] = []
        warnings: list[str] = []
        try:
            existing = await self._existing(f"SELECT SCHEMA_NAME FROM {database}.INFORMATION_SCHEMA.SCHEMATA", "SCHEMA_NAME")
        except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
            return [Text(f"Failed to check existing schemas in database '{database}': {error}")]
        for name in names:
            if name.upper() not in existing:
                warnings.append(f"Warning: Schema '{name}' does not exist in database '{database}', skipping deletion")
                continue
            try:
                await self.db.execute_query(f"DROP SCHEMA {database}.{name}")
                results.append(f"Successfully dropped schema '{name}' from database '{database}'")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to drop schema '{name}' from database '{database}': {error}")
        return [Text(_joined(results, warnings))]

    async def _existing_tables(self, database: str, schema: str) -> set[str]:
        return await self._existing(
            f"SELECT TABLE_NAME FROM {database}.INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = '{schema.upper()}'",
            "TABLE_NAME")

    async def create_tables(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        if not arguments or "database" not in arguments or "schema" not in arguments or "tables" not in arguments:
            raise ValueError("Missing required 'database', 'schema', and 'tables' parameters")
        database, schema = arguments["database"], arguments["schema"]
        definitions = arguments["tables"]
        if not isinstance(definitions, list):
            raise ValueError("'tables' parameter must be a list of table definitions")
        self._check(database)
        results: list[str] = []
        warnings: list[str] = []
        try:
            existing = await self._existing_tables(database, schema)
        except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
            return [Text(f"Failed to check existing tables in {database}.{schema}: {error}")]
        for definition in definitions:
            if isinstance(definition, dict) and "name" in definition and "definition" in definition:
                name, sql = definition["name"], definition["definition"]
            elif isinstance(definition, str):
                sql = definition
                found = re.search(r"CREATE\s+TABLE\s+(\w+)", sql.upper())
                name = found.group(1) if found else "UNKNOWN"
            else:
                results.append(f"Invalid table definition format: {definition}")
                continue
            if name.upper() in existing:
                warnings.append(f"Warning: Table '{name}' already exists in {database}.{schema}, skipping creation")
                continue
            try:
                await self.db.execute_query(sql.replace(f"CREATE TABLE {name}", f"CREATE TABLE {database}.{schema}.{name}"))
                results.append(f"Successfully created table '{name}' in {database}.{schema}")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to create table '{name}' in {database}.{schema}: {error}")
        return [Text(_joined(results, warnings))]

    async def drop_tables(self, arguments: dict[str, Any]) -> list[Content]:
        self._require_write()
        if not arguments or "database" not in arguments or "schema" not in arguments or "tables" not in arguments:
            raise ValueError("Missing required 'database', 'schema', and 'tables' parameters")
        database, schema = arguments["database"], arguments["schema"]
        names = arguments["tables"]
        if not isinstance(names, list):
            raise ValueError("'tables' parameter must be a list of table names")
        self._check(database)
        results: list[str] = []
        warnings: list[str] = []
        try:
            existing = await self._existing_tables(database, schema)
        except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
            return [Text(f"Failed to check existing tables in {database}.{schema}: {error}")]
        for name in names:
            if name.upper() not in existing:
                warnings.append(f"Warning: Table '{name}' does not exist in {database}.{schema}, skipping deletion")
                continue
            try:
                await self.db.execute_query(f"DROP TABLE {database}.{schema}.{name}")
                results.append(f"Successfully dropped table '{name}' from {database}.{schema}")
            except Exception as error:  # noqa: BLE001 - reported in the answer, as upstream
                results.append(f"Failed to drop table '{name}' from {database}.{schema}: {error}")
        return [Text(_joined(results, warnings))]


async def prefetch_tables(db: SnowflakeDB, connection: dict[str, Any]) -> dict[str, Any] | str:
    """`--prefetch`: the default schema's tables and columns, offered as `context://table/<name>` resources."""
    try:
        logger.info("Prefetching table descriptions")
        database, schema = connection["database"], str(connection["schema"]).upper()
        tables, _ = await db.execute_query("SELECT table_name, comment \n"
                                           f"                FROM {database}.information_schema.tables \n"
                                           f"                WHERE table_schema = '{schema}'")
        columns, _ = await db.execute_query("SELECT table_name, column_name, data_type, comment \n"
                                            f"                FROM {database}.information_schema.columns \n"
                                            f"                WHERE table_schema = '{schema}'")
        brief: dict[str, Any] = {}
        for row in tables:
            brief[row["TABLE_NAME"]] = {**row, "COLUMNS": {}}
        for row in columns:
            rest = {key: value for key, value in row.items() if key != "TABLE_NAME"}
            brief[row["TABLE_NAME"]]["COLUMNS"][row["COLUMN_NAME"]] = rest
        return brief
    except Exception as error:  # noqa: BLE001 - upstream serves the error text as the table brief
        logger.error(f"Error prefetching table descriptions: {error}")
        return f"Error prefetching table descriptions: {error}"
