"""End-to-end tests of the `mcp_snowflake_server` stand-in (decathlon/standins/snowflake) over MCP stdio.

The Snowflake emulator (decathlon.emulators.snowflake, in the SaaS virtualenv) runs on a local port; the
stand-in runs in its own virtualenv (ci/servers/snowflake.txt) with the reference's command line, reaching
the emulator through DECATHLON_SNOWFLAKE_URL (tests only; episodes go through the SaaS front). The tests pin
the reference's tool list and schemas, its YAML data results and write results, its access rules
(`--allowed_databases`, `--allow_write`, `--exclude_tools`), its textual write detector and its error texts.
The data here is made up; recorded runs are only the model for the shapes.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from decathlon.standins.snowflake.cli import StartupError, load_settings
from tests.saas_venv import SERVERS, require
from decathlon.standins.snowflake.serialization import to_json, to_yaml
from decathlon.standins.snowflake.sqlcheck import check_access, guess_database

REPO = Path(__file__).resolve().parents[1]
EMULATOR = "decathlon.emulators.snowflake"
ACCOUNT, USER, WAREHOUSE, ROLE = "DECATHLON", "DECATHLON_AGENT", "COMPUTE_WH", "ACCOUNTADMIN"
DB = "SHOP_DATA"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
WRITE_TOOLS = ["write_query", "create_table", "create_databases", "drop_databases", "create_schemas", "drop_schemas",
               "create_tables", "drop_tables"]
READ_TOOLS = ["list_databases", "list_schemas", "list_tables", "describe_table", "read_query", "append_insight"]


def _pythons() -> tuple[Path, Path]:
    standin = SERVERS / "snowflake" / "bin" / "python"
    saas = SERVERS / "saas" / "bin" / "python"
    require(standin, "`python ci/install_servers.py` builds the stand-in's virtualenv (ci/servers/snowflake.txt)")
    require(saas, "`python ci/install_servers.py` builds the SaaS virtualenv (ci/servers/saas.txt)")
    require(REPO / "decathlon" / "emulators" / "snowflake" / "__main__.py", "the Snowflake emulator is not there")
    return standin, saas


def _write_key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


class Emulator:
    def __init__(self, python: Path, root: Path) -> None:
        self.key = root / "configs" / "snowflake_rsa_key.p8"
        _write_key(self.key)
        self.log = (root / "emulator.log").open("w")
        self.proc = subprocess.Popen([str(python), "-m", EMULATOR, "--root", str(root)], stdout=subprocess.PIPE,
                                     stderr=self.log, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
        self.url = f"http://127.0.0.1:{self._ready(30)}"

    def _ready(self, timeout: float) -> int:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if readable:
                line = self.proc.stdout.readline()
                if line.startswith("ready snowflake "):
                    return int(json.loads(line.split(" ", 2)[2])["http"])
                if not line and self.proc.poll() is not None:
                    break
        self.close()
        pytest.fail(f"the Snowflake emulator did not start: see {self.log.name}")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


class StandIn:
    def __init__(self, portal: BlockingPortal, session: ClientSession, info: Any, tools: list[Any]) -> None:
        self.portal, self.session, self.info, self.tools = portal, session, info, tools

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> tuple[str, bool]:
        result = self.portal.call(self.session.call_tool, name, arguments)
        assert len(result.content) == 1 and result.content[0].type == "text", result.content
        return result.content[0].text, bool(result.is_error)

    def text(self, name: str, arguments: dict[str, Any] | None = None) -> str:
        """An answer without the isError flag: the reference flags none but the SDK's own schema check."""
        text, flagged = self.call(name, arguments or {})
        assert not flagged, text
        return text

    def data(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        text = self.text(name, arguments)
        assert text.startswith("type: data\ndata_id: "), text
        loaded = yaml.safe_load(text)
        assert re.fullmatch(UUID, loaded["data_id"])
        return loaded


def command(key: Path, *extra: str, allowed: str = DB, write: bool = True) -> list[str]:
    args = ["--account", ACCOUNT, "--warehouse", WAREHOUSE, "--user", USER, "--private_key_path", str(key),
            "--role", ROLE, "--database", "SNOWFLAKE", "--schema", "PUBLIC", "--allowed_databases", allowed]
    return args + (["--allow_write"] if write else []) + ["--exclude-json-results", *extra]


@asynccontextmanager
async def _connect(python: Path, args: list[str], env: dict[str, str], cwd: Path) -> AsyncIterator[tuple[Any, ...]]:
    params = StdioServerParameters(command=str(python), args=["-m", "decathlon.standins.snowflake", *args], cwd=str(cwd),
                                   env={**get_default_environment(), "PYTHONPATH": str(REPO), **env})
    with (cwd / "standin.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            info = await session.initialize()
            tools = await session.list_tools()
            yield session, info.server_info, tools.tools


@contextmanager
def stand_in(python: Path, args: list[str], url: str, cwd: Path) -> Iterator[StandIn]:
    env = {"DECATHLON_SNOWFLAKE_URL": url}
    with start_blocking_portal() as portal, portal.wrap_async_context_manager(_connect(python, args, env, cwd)) as conn:
        yield StandIn(portal, *conn)


@pytest.fixture(scope="module")
def pythons() -> tuple[Path, Path]:
    return _pythons()


@pytest.fixture(scope="module")
def emu(pythons: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    e = Emulator(pythons[1], tmp_path_factory.mktemp("emulator"))
    yield e
    e.close()


@pytest.fixture(scope="module")
def sf(pythons: tuple[Path, Path], emu: Emulator, tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandIn]:
    """The launch Toolathlon uses, against a database made and filled through the tools themselves."""
    with stand_in(pythons[0], command(emu.key), emu.url, tmp_path_factory.mktemp("workspace")) as running:
        assert running.text("create_databases", {"databases": [DB]}) == f"Successfully created database '{DB}'"
        created = running.text("create_table", {"query": (
            f"CREATE TABLE {DB}.PUBLIC.ORDERS (ORDER_ID NUMBER(38,0) NOT NULL, CUSTOMER VARCHAR(100) NOT NULL, "
            "AMOUNT NUMBER(12,2) DEFAULT 0, PLACED DATE, SHIPPED_AT TIMESTAMP_NTZ, PAID BOOLEAN, NOTE VARCHAR)")})
        assert re.fullmatch(f"Table created successfully. data_id = {UUID}", created)
        assert running.text("write_query", {"query": (
            f"INSERT INTO {DB}.PUBLIC.ORDERS VALUES (1, 'Ana Lima', 120.50, '2025-03-01', '2025-03-02 09:15:00', TRUE, NULL),"
            " (2, 'Bo Chen', 99.00, '2025-03-04', NULL, FALSE, 'gift wrap, please'),"
            " (3, 'Cy Diaz', 5.25, '2025-03-09', '2025-03-10 17:00:05', TRUE, '2025-03-09')")}) == \
            "[{'number of rows inserted': 3}]"
        yield running


# --- pure parts (no emulator needed) ------------------------------------------------------------


def test_command_line_environment_and_test_endpoint():
    argv = ["--account", "ACME", "--warehouse", "WH", "--user", "U", "--private_key_path", "k.p8", "--role", "R",
            "--database", "D", "--schema", "S", "--allowed_databases", "A, B ,C", "--allow_write", "--exclude-json-results",
            "--exclude_tools", "append_insight", "read_query", "--stray"]
    settings = load_settings(argv, {"SNOWFLAKE_HOST": "h.example", "SNOWFLAKE_USER": "ignored",
                                    "DECATHLON_SNOWFLAKE_URL": "http://127.0.0.1:9"}, "/nonexistent", ["host", "user"])
    assert settings.connection == {"host": "127.0.0.1", "user": "U", "account": "ACME", "warehouse": "WH", "role": "R",
                                   "database": "D", "schema": "S", "private_key_path": "k.p8", "port": 9,
                                   "protocol": "http"}
    assert settings.allowed_databases == ["A", "B", "C"] and settings.allow_write and settings.exclude_json_results
    assert settings.exclude_tools == ["append_insight", "read_query"]
    assert settings.exclusion == {"databases": [], "schemas": [], "tables": []}
    with pytest.raises(StartupError, match='You must provide the schema as "--schema" argument'):
        load_settings(["--database", "D"], {}, "/nonexistent", [])
    assert load_settings(["--schema", "S"], {"SNOWFLAKE_DATABASE": "D"}, "/nonexistent", ["database"]).connection == \
        {"database": "D", "schema": "S"}


def test_yaml_and_json_as_the_reference_renders_values():
    import datetime
    import decimal
    rows = [{"D": datetime.date(2025, 10, 23), "TS": datetime.datetime(2025, 10, 15, 15, 36, 13),
             "N": decimal.Decimal("7829.59"), "Z": decimal.Decimal("0.00"), "F": float("nan"), "B": False, "X": None,
             "S": "2024-1771", "U": "Café", "LONG": "word " * 20}]
    assert to_yaml({"type": "data", "data": rows}) == (
        "type: data\ndata:\n- D: '2025-10-23'\n  TS: 2025-10-15 15:36:13\n  N: 7829.59\n  Z: 0.0\n  F:\n  B: false\n"
        "  X: null\n  S: 2024-1771\n  U: \"Caf\\xE9\"\n"
        "  LONG: 'word word word word word word word word word word word word word word word\n    word word word word word '\n")
    assert '"TS": "2025-10-15T15:36:13"' in to_json(rows) and '"Z": 0.0' in to_json(rows)
    with pytest.raises(ValueError, match="Circular reference"):
        to_json([{"B": b"\x00"}])
    with pytest.raises(Exception, match="cannot represent an object"):
        to_yaml([{"T": datetime.time(10, 0)}])


def test_database_guess_and_access_check():
    assert guess_database("select * from sales.public.t join x.y on 1=1") == "SALES"
    assert guess_database("CREATE DATABASE IF NOT EXISTS NEW_DB") == "IF"
    assert guess_database("use warehouse wh;") == "WAREHOUSE"
    assert guess_database("SELECT 1 FROM PUBLIC.T") is None
    assert guess_database('SELECT * FROM DB.PUBLIC."2024Q4"') is None
    check_access("anything", None)
    with pytest.raises(ValueError, match=r"^Access denied: Database 'sales' is not in the allowed databases list: \['SALES'\]$"):
        check_access("sales", ["SALES"])


# --- the tool list -------------------------------------------------------------------------------


def test_tools_schemas_and_server_info_are_the_references(sf):
    assert (sf.info.name, sf.info.version) == ("snowflake", "0.4.0")
    assert [t.name for t in sf.tools] == READ_TOOLS + WRITE_TOOLS
    by_name = {t.name: t for t in sf.tools}
    assert by_name["list_databases"].input_schema == {"type": "object", "properties": {}}
    assert by_name["read_query"].description == "Execute a SELECT query."
    assert by_name["read_query"].input_schema == {
        "type": "object", "properties": {"query": {"type": "string", "description": "SELECT SQL query to execute"}},
        "required": ["query"]}
    assert by_name["describe_table"].input_schema["properties"]["table_name"]["description"] == \
        "Fully qualified table name in the format 'database.schema.table'"
    assert by_name["write_query"].description == "Execute an INSERT, UPDATE, or DELETE query on the Snowflake database"
    assert by_name["create_tables"].input_schema["properties"]["tables"]["items"]["oneOf"][1]["required"] == \
        ["name", "definition"]
    assert by_name["drop_schemas"].input_schema["required"] == ["database", "schemas"]


# --- data results --------------------------------------------------------------------------------


def test_listings_are_yaml_filtered_to_the_allowed_databases(sf):
    assert sf.text("create_databases", {"databases": ["ELSEWHERE"]}) == (
        "Warning: Creating database 'ELSEWHERE' is not allowed, you can only create databases in the following list: "
        f"['{DB}']\n")
    assert re.fullmatch(f"type: data\ndata_id: {UUID}\ndata:\n- DATABASE_NAME: {DB}\n", sf.text("list_databases"))
    schemas = sf.data("list_schemas", {"database": DB})
    assert schemas["database"] == DB and {"SCHEMA_NAME": "PUBLIC"} in schemas["data"]
    assert {"SCHEMA_NAME": "INFORMATION_SCHEMA"} in schemas["data"]
    tables = sf.text("list_tables", {"database": DB, "schema": "public"})
    assert re.fullmatch(f"type: data\ndata_id: {UUID}\ndatabase: {DB}\nschema: public\ndata:\n- TABLE_CATALOG: {DB}\n"
                        "  TABLE_SCHEMA: PUBLIC\n  TABLE_NAME: ORDERS\n  COMMENT: null\n", tables)


def test_describe_table_upper_cases_the_name_and_lists_columns(sf):
    described = sf.data("describe_table", {"table_name": f"{DB.lower()}.public.orders"})
    assert (described["database"], described["schema"], described["table"]) == (DB, "PUBLIC", "ORDERS")
    assert list(described) == ["type", "data_id", "database", "schema", "table", "data"]
    columns = {row["COLUMN_NAME"]: row for row in described["data"]}
    assert columns["ORDER_ID"] == {"COLUMN_NAME": "ORDER_ID", "COLUMN_DEFAULT": None, "IS_NULLABLE": "NO",
                                   "DATA_TYPE": "NUMBER", "COMMENT": None}
    assert (columns["CUSTOMER"]["DATA_TYPE"], columns["PLACED"]["DATA_TYPE"], columns["PAID"]["DATA_TYPE"]) == \
        ("TEXT", "DATE", "BOOLEAN")
    assert columns["AMOUNT"]["COLUMN_DEFAULT"] == "0" and columns["SHIPPED_AT"]["DATA_TYPE"] == "TIMESTAMP_NTZ"
    assert "\n  IS_NULLABLE: 'NO'\n" in sf.text("describe_table", {"table_name": f"{DB}.PUBLIC.ORDERS"})


def test_rows_render_as_the_reference_renders_them(sf):
    text = sf.text("read_query", {"query": f"SELECT * FROM {DB}.PUBLIC.ORDERS ORDER BY ORDER_ID"})
    assert re.fullmatch(
        f"type: data\ndata_id: {UUID}\ndata:\n"
        "- ORDER_ID: 1\n  CUSTOMER: Ana Lima\n  AMOUNT: 120.5\n  PLACED: '2025-03-01'\n  SHIPPED_AT: 2025-03-02 09:15:00\n"
        "  PAID: true\n  NOTE: null\n"
        "- ORDER_ID: 2\n  CUSTOMER: Bo Chen\n  AMOUNT: 99.0\n  PLACED: '2025-03-04'\n  SHIPPED_AT: null\n  PAID: false\n"
        "  NOTE: gift wrap, please\n"
        "- ORDER_ID: 3\n  CUSTOMER: Cy Diaz\n  AMOUNT: 5.25\n  PLACED: '2025-03-09'\n  SHIPPED_AT: 2025-03-10 17:00:05\n"
        "  PAID: true\n  NOTE: '2025-03-09'\n", text)
    total = sf.text("read_query", {"query": f"SELECT COUNT(*) AS N, SUM(AMOUNT) AS TOTAL FROM {DB}.PUBLIC.ORDERS"})
    assert total.endswith("\ndata:\n- N: 3\n  TOTAL: 224.75\n")
    assert sf.text("read_query", {"query": f"SELECT * FROM {DB}.PUBLIC.ORDERS WHERE ORDER_ID = 42"}).endswith(
        "\ndata:\n- status: success\n  message: Query executed successfully\n")


def test_duplicate_column_names_fail_as_snowpark_rows_do(sf):
    assert sf.text("read_query", {"query": f"SELECT ORDER_ID, ORDER_ID FROM {DB}.PUBLIC.ORDERS"}) == \
        "Error: Cannot convert a Row without key values or duplicated keys to a dict."


# --- writes --------------------------------------------------------------------------------------


def test_writes_answer_the_repr_of_their_rows(sf):
    assert sf.text("write_query", {"query": f"INSERT INTO {DB}.PUBLIC.ORDERS (ORDER_ID, CUSTOMER) VALUES (9, 'Tmp')"}) == \
        "[{'number of rows inserted': 1}]"
    assert sf.text("write_query", {"query": f"UPDATE {DB}.PUBLIC.ORDERS SET NOTE = 'late' WHERE ORDER_ID = 9"}) == \
        "[{'number of rows updated': 1, 'number of multi-joined rows updated': 0}]"
    assert sf.text("write_query", {"query": f"DELETE FROM {DB}.PUBLIC.ORDERS WHERE ORDER_ID = 9"}) == \
        "[{'number of rows deleted': 1}]"
    assert sf.text("write_query", {"query": "  select 1"}) == "Error: SELECT queries are not allowed for write_query"
    assert sf.text("create_table", {"query": "CREATE OR REPLACE TABLE T (A INT)"}) == \
        "Error: Only CREATE TABLE statements are allowed"


def test_schema_and_table_batches(sf):
    assert sf.text("create_schemas", {"database": DB, "schemas": ["STAGING", "PUBLIC"]}) == (
        f"Warning: Schema 'PUBLIC' already exists in database '{DB}', skipping creation\n"
        f"Successfully created schema 'STAGING' in database '{DB}'")
    # An empty schema: the reference's own listing reads the "status: success" row, and fails on it.
    assert sf.text("create_tables", {"database": DB, "schema": "STAGING", "tables": ["CREATE TABLE LOADS (ID INT)"]}) == \
        f"Failed to check existing tables in {DB}.STAGING: 'TABLE_NAME'"
    assert sf.text("create_tables", {"database": DB, "schema": "PUBLIC", "tables": [
        "CREATE TABLE LOADS (ID INT)", {"name": "RUNS", "definition": "CREATE TABLE RUNS (ID INT)"}]}) == (
        f"Successfully created table 'LOADS' in {DB}.PUBLIC\nSuccessfully created table 'RUNS' in {DB}.PUBLIC")
    assert sf.text("create_tables", {"database": DB, "schema": "PUBLIC", "tables": ["CREATE TABLE LOADS (ID INT)"]}) == \
        f"Warning: Table 'LOADS' already exists in {DB}.PUBLIC, skipping creation\n"
    assert sf.text("drop_tables", {"database": DB, "schema": "PUBLIC", "tables": ["LOADS", "GHOST", "RUNS"]}) == (
        f"Warning: Table 'GHOST' does not exist in {DB}.PUBLIC, skipping deletion\n"
        f"Successfully dropped table 'LOADS' from {DB}.PUBLIC\nSuccessfully dropped table 'RUNS' from {DB}.PUBLIC")
    assert sf.text("drop_schemas", {"database": DB, "schemas": ["STAGING"]}) == \
        f"Successfully dropped schema 'STAGING' from database '{DB}'"
    assert sf.text("drop_databases", {"databases": ["ELSEWHERE"]}) == (
        f"Error: Access denied: Database 'ELSEWHERE' is not in the allowed databases list: ['{DB}']")


# --- access rules and errors ---------------------------------------------------------------------


def test_databases_outside_the_allowed_list_are_refused(sf):
    denied = f"Error: Access denied: Database '{{}}' is not in the allowed databases list: ['{DB}']"
    assert sf.text("list_schemas", {"database": "OTHER_DB"}) == denied.format("OTHER_DB")
    assert sf.text("list_schemas", {"database": DB.lower()}) == denied.format(DB.lower())  # compared as typed
    assert sf.text("list_tables", {"database": "OTHER_DB", "schema": "PUBLIC"}) == denied.format("OTHER_DB")
    assert sf.text("describe_table", {"table_name": "other_db.public.t"}) == denied.format("OTHER_DB")
    assert sf.text("read_query", {"query": "select * from other_db.public.t"}) == denied.format("OTHER_DB")
    assert sf.text("write_query", {"query": "DROP DATABASE IF EXISTS X"}) == denied.format("IF")
    assert sf.text("describe_table", {"table_name": "ORDERS"}) == \
        "Error: Table name must be fully qualified as 'database.schema.table'"


def test_read_query_refuses_writes_by_its_textual_detector(sf):
    refused = "Error: Calls to read_query should not contain write operations"
    assert sf.text("read_query", {"query": f"DELETE FROM {DB}.PUBLIC.ORDERS"}) == refused
    assert sf.text("read_query", {"query": f"SELECT 1; DROP TABLE {DB}.PUBLIC.ORDERS"}) == refused
    # After a top-level WITH, a capitalised write word inside any later top-level token counts (CREATED_AT's CREATE).
    cte = f"WITH T AS (SELECT ORDER_ID FROM {DB}.PUBLIC.ORDERS) SELECT COUNT(*) AS {{}} FROM T"
    assert sf.text("read_query", {"query": cte.format("CREATED_AT")}) == refused
    assert sf.text("read_query", {"query": cte.format("created_at")}).endswith("\ndata:\n- CREATED_AT: 3\n")
    assert sf.text("read_query", {"query": f"SELECT COUNT(*) AS CREATED_AT FROM {DB}.PUBLIC.ORDERS"}).endswith(
        "\ndata:\n- CREATED_AT: 3\n")
    assert sf.text("read_query", {"query": "SELECT 'DROP' AS WORD"}).endswith("\ndata:\n- WORD: DROP\n")


def test_sql_errors_read_as_snowpark_words_them(sf):
    """Snowpark's `(1304): <query id>: ` before the connector's message, which at the reference's INFO logging level is
    `<errno> (<sqlstate>): <query id>: <Snowflake's text>`: on Snowflake, `002003 (42S02): <id>: SQL compilation
    error:\nObject 'SHOP_DATA.PUBLIC.NOPE' does not exist or not authorized.`"""
    text = sf.text("read_query", {"query": f"SELECT * FROM {DB}.PUBLIC.NOPE"})
    found = re.fullmatch(r"Error: \(1304\): (?:(?P<id>[0-9a-f-]{36}): )?(?P<message>\d{6} \(\w+\): .*)", text, re.S)
    assert found, text
    assert "NOPE" in found["message"]
    if found["id"]:  # the emulator sent a query id: the connector's message carries it too
        assert re.match(rf"\d{{6}} \(\w+\): {found['id']}: ", found["message"]), text
    assert sf.text("write_query", {"query": "INSERT INTO NOWHERE VALUES (1)"}).startswith("Error: (1304): ")


def test_schema_check_unknown_tools_and_append_insight(sf):
    assert sf.call("read_query", {}) == ("Input validation error: 'query' is a required property", True)
    assert sf.call("list_schemas", {"database": 7}) == ("Input validation error: 7 is not of type 'string'", True)
    assert sf.call("create_databases", {"databases": "X"}) == ("Input validation error: 'X' is not of type 'array'", True)
    assert sf.call("no_such_tool", {"a": 1}) == ("Error: Unknown tool: no_such_tool", False)
    assert sf.text("append_insight", {"insight": "Orders rose."}) == \
        "Error: handle_append_insight() got an unexpected keyword argument 'allowed_databases'"
    resources = sf.portal.call(sf.session.list_resources).resources
    assert [(str(r.uri), r.name) for r in resources] == [("memo://insights", "Data Insights Memo")]
    memo = sf.portal.call(sf.session.read_resource, "memo://insights").contents[0]
    assert memo.text == "No data insights have been discovered yet."


def test_without_allow_write_the_write_tools_are_unknown(pythons, emu, tmp_path):
    args = command(emu.key, "--exclude_tools", "describe_table", write=False, allowed=f"{DB}, OTHER")
    with stand_in(pythons[0], args, emu.url, tmp_path) as ro:
        assert [t.name for t in ro.tools] == ["list_databases", "list_schemas", "list_tables", "read_query",
                                              "append_insight"]
        assert ro.text("write_query", {"query": "DELETE FROM X"}) == "Error: Unknown tool: write_query"
        assert ro.text("describe_table", {"table_name": "a.b.c"}) == \
            "Tool describe_table is excluded from this data connection"
        assert ro.text("list_schemas", {"database": "OTHER"}).startswith("Error: (1304): ")  # allowed (trimmed), absent
        assert ro.text("read_query", {"query": f"SELECT COUNT(*) AS N FROM {DB}.PUBLIC.ORDERS"}).endswith("- N: 3\n")


def test_a_connection_that_cannot_open_is_reported_per_call(pythons, emu, tmp_path):
    missing = tmp_path / "absent.p8"
    with stand_in(pythons[0], command(missing), emu.url, tmp_path) as broken:
        expected = f"Error: Failed to connect to Snowflake database: [Errno 2] No such file or directory: '{missing}'"
        assert broken.text("list_databases") == expected
        assert broken.text("read_query", {"query": "SELECT 1"}) == expected  # tried again, failed again
