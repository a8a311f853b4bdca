"""The Snowflake emulator (decathlon/emulators/snowflake) driven by the real snowflake-connector-python 3.16 with
key-pair auth, as the Toolathlon tasks drive Snowflake: each of fakesnow 0.12.1's gaps the emulator closes has a
test that fails without the fix, and every error reaches the connector as Snowflake's error at once (no retry).

Client code runs under the SaaS virtualenv (tests/saas_venv.py); the project's venv has no connector."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.saas_venv import REPO, saas_python

CLIENT = '''
import json, os, sys, time
import snowflake.connector
from snowflake.connector import DictCursor
from snowflake.connector.errors import DatabaseError, ProgrammingError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

KEY = os.environ["SF_KEY"]
if not os.path.exists(KEY):
    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    with open(KEY + ".tmp", "wb") as f:
        f.write(pem)
    os.replace(KEY + ".tmp", KEY)

def connect(port=None, **extra):
    # as utils/app_specific/snowflake/client.py builds it, plus where the emulator listens
    with open(KEY, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    kwargs = dict(account="decathlon", user="AGENT", private_key=der, role="ACCOUNTADMIN", warehouse="COMPUTE_WH",
                  database="SNOWFLAKE", schema="PUBLIC")
    kwargs.update(extra)
    return snowflake.connector.connect(host="127.0.0.1", port=int(port or os.environ["SF_PORT"]), protocol="http",
                                       **kwargs)

def rows(conn, sql, dict_cursor=False):
    cur = conn.cursor(DictCursor) if dict_cursor else conn.cursor()
    cur.execute(sql)
    return cur.fetchall()

def failure(conn, sql):
    """(exception class, errno, sqlstate, message, seconds) of a statement that must fail."""
    started = time.monotonic()
    try:
        conn.cursor().execute(sql)
    except DatabaseError as exc:
        return type(exc).__name__, exc.errno, exc.sqlstate, exc.raw_msg, time.monotonic() - started
    raise AssertionError(f"{sql[:80]!r} succeeded")
'''


def _start(tmp_path: Path, name: str, **env: str) -> tuple[subprocess.Popen, int, float]:
    log = open(tmp_path / f"{name}.log", "wb")
    started = time.monotonic()
    proc = subprocess.Popen([str(saas_python()), "-m", "decathlon.emulators.snowflake", "--root", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=log, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), **env})
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    line = proc.stdout.readline().decode() if ready else ""
    elapsed = time.monotonic() - started
    assert line.startswith("ready snowflake "), (line, (tmp_path / f"{name}.log").read_text())
    return proc, json.loads(line.split(" ", 2)[2])["http"], elapsed


def _stop(proc: subprocess.Popen) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    return proc.wait(15)


@pytest.fixture(scope="module")
def emulator(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("snowflake")
    proc, port, _ = _start(tmp, "emulator")
    yield {"port": port, "key": str(tmp / "rsa_key.p8"), "dir": tmp}
    _stop(proc)


def client(emulator, body: str, **env: str) -> dict:
    """Run `body` (after CLIENT's helpers) under the SaaS venv; it prints one JSON line, returned decoded."""
    script = Path(emulator["dir"]) / f"client_{time.monotonic_ns()}.py"
    script.write_text(CLIENT + textwrap.dedent(body))
    done = subprocess.run([str(saas_python()), str(script)], capture_output=True, text=True, timeout=90,
                          env={**os.environ, "SF_PORT": str(emulator["port"]), "SF_KEY": emulator["key"], **env})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_drop_database_round_trip(emulator):
    out = client(emulator, '''
        c = connect()
        r = {"absent": rows(c, "DROP DATABASE IF EXISTS GAP1")[0][0]}
        r["create"] = rows(c, "CREATE DATABASE GAP1")[0][0]
        rows(c, "CREATE TABLE GAP1.PUBLIC.T (A INT)")
        rows(c, "INSERT INTO GAP1.PUBLIC.T VALUES (1)")
        r["drop"] = rows(c, "DROP DATABASE IF EXISTS GAP1")[0][0]
        r["again"] = failure(c, "DROP DATABASE GAP1")
        r["gone"] = failure(c, "SELECT * FROM GAP1.PUBLIC.T")
        rows(c, "CREATE DATABASE GAP1")
        r["recreated_empty"] = rows(c, "SELECT COUNT(*) FROM GAP1.INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = 'PUBLIC'")
        r["listed"] = [x[0] for x in rows(c, "SELECT DATABASE_NAME FROM INFORMATION_SCHEMA.DATABASES")]
        print(json.dumps(r))
    ''')
    assert out["absent"] == "Drop statement executed successfully (GAP1 already dropped)."
    assert out["create"] == "Database GAP1 successfully created."
    assert out["drop"] == "GAP1 successfully dropped."
    kind, errno, sqlstate, message, seconds = out["again"]
    assert (kind, errno, sqlstate) == ("ProgrammingError", 2003, "02000") and seconds < 5
    assert message == "SQL compilation error:\nDatabase 'GAP1' does not exist or not authorized."
    assert out["gone"][0] == "ProgrammingError" and out["gone"][4] < 5
    assert out["recreated_empty"] == [[0]]
    assert "GAP1" in out["listed"]


def test_create_database_makes_public_the_current_schema(emulator):
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE GAP2")
        r = {"current": rows(c, "SELECT CURRENT_DATABASE(), CURRENT_SCHEMA()")[0]}
        rows(c, "CREATE TABLE GAP2.PUBLIC.T (A INT)")
        rows(c, "CREATE TABLE U (B INT)")  # lands in the current schema, GAP2.PUBLIC
        other = connect()
        r["other_session"] = rows(other, "SELECT TABLE_NAME FROM GAP2.INFORMATION_SCHEMA.TABLES "
                                         "WHERE TABLE_SCHEMA = 'PUBLIC' ORDER BY 1")
        rows(other, "USE DATABASE GAP2")
        r["use_database"] = rows(other, "SELECT CURRENT_SCHEMA(), COUNT(*) FROM U")[0]
        r["if_not_exists"] = rows(c, "CREATE DATABASE IF NOT EXISTS GAP2")[0][0]
        r["exists"] = failure(c, "CREATE DATABASE GAP2")
        print(json.dumps(r))
    ''')
    assert out["current"] == ["GAP2", "PUBLIC"]
    assert out["other_session"] == [["T"], ["U"]]
    assert out["use_database"] == ["PUBLIC", 0]
    assert out["if_not_exists"] == "GAP2 already exists, statement succeeded."
    assert out["exists"][:3] == ["ProgrammingError", 2002, "42710"] and out["exists"][4] < 5


def test_key_constraints_are_recorded_but_not_enforced(emulator):
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE GAP3")
        rows(c, """CREATE TABLE GAP3.PUBLIC.PARENT (ID VARCHAR(10) PRIMARY KEY, EMAIL VARCHAR NOT NULL UNIQUE)""")
        rows(c, """CREATE TABLE GAP3.PUBLIC.CHILD (ID INTEGER AUTOINCREMENT PRIMARY KEY, PARENT_ID VARCHAR(10),
                   CONSTRAINT FK FOREIGN KEY (PARENT_ID) REFERENCES GAP3.PUBLIC.PARENT(ID))""")
        rows(c, "INSERT INTO GAP3.PUBLIC.PARENT VALUES ('a', 'x@y'), ('a', 'x@y')")
        rows(c, "INSERT INTO GAP3.PUBLIC.CHILD (PARENT_ID) VALUES ('nobody'), ('a')")
        r = {"parents": rows(c, "SELECT COUNT(*) FROM GAP3.PUBLIC.PARENT")[0][0],
             "children": rows(c, "SELECT ID, PARENT_ID FROM GAP3.PUBLIC.CHILD ORDER BY ID")}
        rows(c, "DELETE FROM GAP3.PUBLIC.PARENT WHERE ID = 'a'")
        r["alter"] = rows(c, "ALTER TABLE GAP3.PUBLIC.PARENT ADD CONSTRAINT U2 UNIQUE (EMAIL)")[0][0]
        r["not_null"] = failure(c, "INSERT INTO GAP3.PUBLIC.PARENT VALUES ('b', NULL)")
        print(json.dumps(r))
    ''')
    assert out["parents"] == 2
    assert out["children"] == [[1, "nobody"], [2, "a"]]
    assert out["alter"] == "Statement executed successfully."
    kind, errno, sqlstate, message, seconds = out["not_null"]
    assert (errno, sqlstate) == (100072, "22000") and seconds < 5
    assert message.endswith("NULL result in a non-nullable column")


def test_column_comments_are_kept_where_information_schema_reads_them(emulator):
    """payable-invoice-checker's evaluator reads INFORMATION_SCHEMA.COLUMNS.COMMENT after the agent's `ALTER TABLE …
    ALTER COLUMN … COMMENT '…'`, which fakesnow accepts and drops (and its `COMMENT ON COLUMN` fails to describe)."""
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE GAP7")
        rows(c, "CREATE TABLE GAP7.PUBLIC.PAY (ID INT, OUTSTANDING_FLAG INT)")
        r = {"alter": rows(c, "ALTER TABLE GAP7.PUBLIC.PAY ALTER COLUMN OUTSTANDING_FLAG COMMENT '0=Paid, 1=Outstanding'")[0][0],
             "on": rows(c, "COMMENT ON COLUMN GAP7.PUBLIC.PAY.ID IS 'the invoice''s id'")[0][0]}
        rows(c, "USE DATABASE GAP7")
        rows(c, "ALTER TABLE PAY MODIFY COLUMN ID COMMENT 'id again'")
        r["comments"] = rows(c, "SELECT COLUMN_NAME, COMMENT FROM GAP7.INFORMATION_SCHEMA.COLUMNS "
                                "WHERE TABLE_SCHEMA = 'PUBLIC' AND TABLE_NAME = 'PAY' ORDER BY 1")
        r["no_table"] = failure(c, "ALTER TABLE GAP7.PUBLIC.NOPE ALTER COLUMN ID COMMENT 'x'")
        r["no_column"] = failure(c, "ALTER TABLE PAY ALTER COLUMN NOPE COMMENT 'x'")
        print(json.dumps(r))
    ''')
    assert out["alter"] == out["on"] == "Statement executed successfully."
    assert out["comments"] == [["ID", "id again"], ["OUTSTANDING_FLAG", "0=Paid, 1=Outstanding"]]
    assert out["no_table"][1:3] == [2003, "02000"] and "'GAP7.PUBLIC.NOPE' does not exist" in out["no_table"][3]
    assert out["no_column"][1:3] == [904, "42000"] and "invalid identifier 'NOPE'" in out["no_column"][3]


def test_column_defaults_read_as_snowflake_shows_them(emulator):
    """Snowflake's INFORMATION_SCHEMA.COLUMNS shows a default of the date functions with their parentheses
    (`CURRENT_TIMESTAMP()`, as recorded runs' describe_table read it) however the CREATE wrote it; DuckDB keeps it
    bare. Other defaults are shown as written."""
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE DEFAULTS7")
        rows(c, "CREATE TABLE DEFAULTS7.PUBLIC.T (A TIMESTAMP_NTZ DEFAULT CURRENT_TIMESTAMP(), "
                "B TIMESTAMP_NTZ DEFAULT CURRENT_TIMESTAMP, C DATE DEFAULT current_date, D NUMBER DEFAULT 0, "
                "E VARCHAR DEFAULT 'current_date', F NUMBER)")
        print(json.dumps(rows(c, "SELECT COLUMN_NAME, COLUMN_DEFAULT FROM DEFAULTS7.INFORMATION_SCHEMA.COLUMNS "
                                 "WHERE TABLE_NAME = 'T' ORDER BY 1")))
    ''')
    assert out == [["A", "CURRENT_TIMESTAMP()"], ["B", "CURRENT_TIMESTAMP()"], ["C", "CURRENT_DATE()"], ["D", "0"],
                   ["E", "'current_date'"], ["F", None]]


def test_sums_keep_snowflakes_number_types_and_text_still_sums(emulator):
    """SUM of a NUMBER(38,2) is a NUMBER(38,2) and SUM of integers an integer, as Snowflake answers them (fakesnow
    cast every argument to DOUBLE); a SUM of text still sums, by the implicit cast Snowflake makes."""
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE SUMS7")
        rows(c, "CREATE TABLE SUMS7.PUBLIC.T (A NUMBER(38,2), F NUMBER(38,0), S VARCHAR)")
        rows(c, "INSERT INTO SUMS7.PUBLIC.T VALUES (7829.59, 1, '1.5'), (8026.45, 0, '2'), (0.2, 0, '3')")
        cur = c.cursor()
        cur.execute("SELECT SUM(A) AS A, SUM(CASE WHEN F = 0 THEN 1 ELSE 0 END) AS W FROM SUMS7.PUBLIC.T")
        (a, w), = cur.fetchall()
        r = {"values": [str(a), repr(w)], "names": [d.name for d in cur.description],
             "scales": [d.scale for d in cur.description]}
        cur.execute("SELECT SUM(S) FROM SUMS7.PUBLIC.T")
        r["text"] = [repr(cur.fetchall()[0][0]), cur.description[0].name]
        print(json.dumps(r))
    ''')
    assert out == {"values": ["15856.24", "2"], "names": ["A", "W"], "scales": [2, 0], "text": ["6.5", "SUM(S)"]}


def test_null_timestamps_stay_null(emulator):
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE GAP4")
        rows(c, "CREATE TABLE GAP4.PUBLIC.T (N INT, NTZ TIMESTAMP, TZ TIMESTAMP_TZ, D DATE)")
        rows(c, "INSERT INTO GAP4.PUBLIC.T VALUES (1, NULL, NULL, NULL), "
                "(2, '2025-10-17 09:30:00', '2025-10-17 09:30:00', '2025-10-17')")
        got = rows(c, "SELECT NTZ, TZ, D FROM GAP4.PUBLIC.T ORDER BY N")
        d = rows(c, "SELECT NTZ FROM GAP4.PUBLIC.T WHERE NTZ IS NULL", dict_cursor=True)
        print(json.dumps({"rows": [[None if v is None else str(v) for v in r] for r in got], "dict": d}))
    ''')
    assert out["rows"][0] == [None, None, None]
    assert out["rows"][1][0] == "2025-10-17 09:30:00" and out["rows"][1][2] == "2025-10-17"
    assert out["dict"] == [{"NTZ": None}]


def test_unaliased_columns_are_named_as_snowflake_names_them(emulator):
    out = client(emulator, '''
        c = connect()
        rows(c, "CREATE DATABASE GAP5")
        rows(c, "CREATE TABLE GAP5.PUBLIC.T (a INT, \\"mixed\\" INT)")
        rows(c, "INSERT INTO GAP5.PUBLIC.T VALUES (1, 2), (3, 4)")
        q = lambda sql: list(rows(c, sql, dict_cursor=True)[0])
        print(json.dumps({
            "now": q("SELECT CURRENT_TIMESTAMP()"),
            "count": q("select count(*) from GAP5.PUBLIC.T"),
            "mixed": q("SELECT count(*), sum(a) AS total, a + 1, \\"mixed\\", t.a, 'x' as \\"quoted\\" "
                       "FROM GAP5.PUBLIC.T t GROUP BY a, \\"mixed\\""),
            "with": q("WITH w AS (SELECT a FROM GAP5.PUBLIC.T) SELECT max(a) FROM w"),
            "current_date": q("SELECT current_date, TRUE"),
            "description": [d.name for d in c.cursor().execute("SELECT COUNT(*) FROM GAP5.PUBLIC.T").description],
        }))
    ''')
    assert out["now"] == ["CURRENT_TIMESTAMP()"]
    assert out["count"] == ["COUNT(*)"]
    assert out["mixed"] == ["COUNT(*)", "TOTAL", "A + 1", "mixed", "A", "quoted"]
    assert out["with"] == ["MAX(A)"]
    assert out["current_date"] == ["CURRENT_DATE", "TRUE"]
    assert out["description"] == ["COUNT(*)"]


def test_current_timestamp_is_the_process_clock_uncached(emulator):
    out = client(emulator, '''
        c = connect()
        a = rows(c, "SELECT CURRENT_TIMESTAMP()")[0][0]
        time.sleep(0.05)
        b = rows(c, "SELECT CURRENT_TIMESTAMP()")[0][0]
        import datetime
        print(json.dumps({"a": a.isoformat(), "b": b.isoformat(),
                          "skew": abs((a - datetime.datetime.now(datetime.timezone.utc)).total_seconds())}))
    ''')
    assert out["b"] > out["a"]
    assert out["skew"] < 30


def test_errors_reach_the_connector_at_once_in_snowflakes_shape(emulator):
    out = client(emulator, '''
        c = connect()
        print(json.dumps({
            "syntax": failure(c, "SELEC 1"),
            "table": failure(c, "SELECT * FROM SNOWFLAKE.PUBLIC.NO_SUCH_TABLE"),
            "database": failure(c, "SELECT * FROM NO_SUCH_DB.PUBLIC.T"),
            "two": failure(c, "SELECT 1; SELECT 2"),
            "cast": failure(c, "SELECT 'abc'::INT"),
            "large": failure(c, "SELECT '" + "x" * (17 * 1024 * 1024) + "'"),
        }))
    ''')
    for name, (kind, errno, sqlstate, message, seconds) in out.items():
        assert kind in ("ProgrammingError", "DataError", "IntegrityError"), (name, kind, message)
        assert seconds < 5, (name, seconds)
        assert sqlstate and len(sqlstate) == 5, (name, sqlstate)
        assert "Traceback" not in message and "sql_text" not in message, (name, message)
    assert out["syntax"][1:3] == [1003, "42000"]
    assert out["table"][1] == 2003 and out["database"][1] == 2003
    assert out["two"][1:4] == [8, "0A000", "Actual statement count 2 did not match the desired statement count 1."]
    assert out["large"][1:3] == [1003, "42000"] and "maximum query text size" in out["large"][3]


def test_a_path_or_method_the_api_lacks_is_answered_in_its_envelope(emulator):
    import urllib.error
    import urllib.request

    got = {}
    for method, path in [("GET", "/no/such/path"), ("GET", "/queries/v1/query-request")]:
        request = urllib.request.Request(f"http://127.0.0.1:{emulator['port']}{path}", method=method)
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        got[path] = (caught.value.code, json.loads(caught.value.read()))
    assert got["/no/such/path"] == (404, {"data": None, "code": None, "message": "Not Found: GET /no/such/path",
                                          "success": False})
    assert got["/queries/v1/query-request"][0] == 405 and got["/queries/v1/query-request"][1]["success"] is False


def test_request_log_has_one_line_per_request(emulator):
    client(emulator, '''
        c = connect()
        rows(c, "SELECT 'request-log-marker'")
        print(json.dumps({}))
    ''')
    log = (Path(emulator["dir"]) / "emulator.log").read_text()
    lines = [line for line in log.splitlines() if "request-log-marker" in line]
    assert len(lines) == 1 and lines[0].startswith("POST /queries/v1/query-request 200 "), lines
    assert "Traceback" not in log


def test_two_processes_share_nothing_and_stop_on_sigterm(emulator, tmp_path):
    proc, port, _ = _start(tmp_path, "second")
    try:
        out = client(emulator, f'''
            a, b = connect(), connect({port})
            rows(a, "CREATE DATABASE ONLY_IN_FIRST")
            names = lambda c: [x[0] for x in rows(c, "SELECT DATABASE_NAME FROM INFORMATION_SCHEMA.DATABASES")]
            print(json.dumps({{"first": names(a), "second": names(b)}}))
        ''')
    finally:
        code = _stop(proc)
    assert "ONLY_IN_FIRST" in out["first"] and "ONLY_IN_FIRST" not in out["second"]
    assert code == 0
    # How soon the ready line comes (before fakesnow has loaded; budget 5 s) is bench/bench_budgets.py's to say.


def test_pinned_fakesnow_internals_are_what_the_patches_expect():
    done = subprocess.run([str(saas_python()), "-c", textwrap.dedent('''
        import importlib.metadata
        from decathlon.emulators.snowflake import patches
        patches.verify()
        # fakesnow 0.12.1 does not import with connector >= 5 (snowflake.connector.converter is gone)
        assert int(importlib.metadata.version("snowflake-connector-python").split(".")[0]) < 5
    ''')], capture_output=True, text=True, timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]


def test_statement_planning_rewrites_only_what_it_must():
    done = subprocess.run([str(saas_python()), "-c", textwrap.dedent('''
        from decathlon.emulators.snowflake.statements import Action, plan
        insert = "-- note\\nINSERT INTO A.B.C VALUES (1, 'select count(*)')"
        assert plan(insert).sql is insert and plan(insert).action is Action.PASS
        assert plan("select count(*) , x from t").sql == 'select count(*) AS "COUNT(*)" , x from t'
        assert plan("DROP DATABASE IF EXISTS \\"q\\"").database == "q"
        assert plan("use landing").sql == 'USE DATABASE "LANDING"'
        created = plan("CREATE TABLE T (ID INT PRIMARY KEY, E VARCHAR NOT NULL UNIQUE, FOREIGN KEY (ID) REFERENCES U(ID))")
        assert "PRIMARY" not in created.sql and "UNIQUE" not in created.sql and "FOREIGN" not in created.sql
        assert "NOT NULL" in created.sql
        assert plan("select 1; select 2;").action is Action.REJECT
        assert plan("select ';' ; ").action is Action.PASS
    ''')], capture_output=True, text=True, timeout=60, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr[-2000:]


def test_duckdb_functions_snowflake_lacks_are_refused_in_snowflakes_words(emulator, tmp_path):
    """The agent's SQL reaches fakesnow's DuckDB: its file and system functions answer as Snowflake answers a function
    it does not have, and no file of the host comes back however it is spelled (DuckDB's file access is off but for
    the episode's stage folder)."""
    secret = tmp_path / "grader_secret.csv"
    secret.write_text("answer\nTHE-GROUND-TRUTH\n")
    out = client(emulator, f'''
        c = connect()
        cases = {{
            "read_text": "SELECT content FROM read_text('{secret}')",
            "read_csv": "SELECT * FROM read_csv('{secret}')",
            "scalar": "SELECT read_text('{secret}')",
            "getenv": "SELECT getenv('HOME')",
            "settings": "SELECT * FROM duckdb_settings()",
            "glob": "SELECT * FROM glob('{tmp_path}/*')",
            "quoted_path": \'SELECT * FROM "{secret}"\',
            "string_path": "SELECT * FROM '{secret}'",
        }}
        r = {{name: failure(c, sql)[:4] for name, sql in cases.items()}}
        r["still_works"] = rows(c, "SELECT UPPER('ok'), ARRAY_SIZE(SPLIT('a,b', ','))")
        r["string_agg"] = failure(c, "SELECT STRING_AGG(x, ',') FROM (SELECT 'a' AS x)")[:4]
        r["listagg"] = rows(c, "SELECT LISTAGG(x, ',') AS s, 'string_agg(' AS t FROM (SELECT 'a' AS x)")
        print(json.dumps(r))
    ''')
    assert out["read_text"] == ["ProgrammingError", 2140, "42601", "SQL compilation error:\nUnknown user-defined table "
                                                                     "function READ_TEXT"]
    assert out["read_csv"][1:3] == [2140, "42601"] and out["read_csv"][3].endswith("READ_CSV")
    assert out["scalar"][1:] == [2140, "42601", "SQL compilation error:\nUnknown function READ_TEXT"]
    assert out["getenv"][3] == "SQL compilation error:\nUnknown function GETENV"
    assert out["settings"][3].endswith("DUCKDB_SETTINGS")
    for name in ("glob", "quoted_path", "string_path"):
        assert out[name][0] == "ProgrammingError", (name, out[name])
    assert "THE-GROUND-TRUTH" not in json.dumps(out)
    assert out["still_works"] == [["OK", 2]]
    # sqlglot reads STRING_AGG as LISTAGG; Snowflake refuses it, as a recorded run of another model shows
    assert out["string_agg"][1:] == [2140, "42601", "SQL compilation error:\nUnknown function STRING_AGG"]
    assert out["listagg"] == [["a", "string_agg("]]


_HEAVY = ("SELECT SUM(LENGTH(REPEAT('x', MOD(a.seq4 * b.seq4, 1000)))) FROM "
          "(SELECT SEQ4() AS seq4 FROM TABLE(GENERATOR(ROWCOUNT => 20000))) a, "
          "(SELECT SEQ4() AS seq4 FROM TABLE(GENERATOR(ROWCOUNT => 20000))) b")


def test_a_slow_statement_keeps_no_other_session_waiting_and_the_connectors_cancel_stops_it(tmp_path):
    """Another session's query is answered while a slow one runs (the slow one has not ended when the answer comes,
    however loaded the machine), and the connector's cancel (its client-side timeout sends an abort) stops it."""
    proc, port, _ = _start(tmp_path, "bounded", DECATHLON_SNOWFLAKE_STATEMENT_SECONDS="120")
    try:
        out = client({"port": port, "key": str(tmp_path / "rsa_key.p8"), "dir": tmp_path}, f'''
            import threading
            slow = {{}}
            def run_slow():
                cur = connect().cursor()
                started = time.monotonic()
                try:
                    cur.execute({_HEAVY!r}, timeout=10)
                    slow["outcome"] = "finished"
                except DatabaseError as exc:
                    slow["outcome"] = [type(exc).__name__, exc.errno]
                slow["seconds"] = time.monotonic() - started
            t = threading.Thread(target=run_slow)
            t.start()
            time.sleep(1)
            quick = rows(connect(), "SELECT 1")
            slow_still_running = t.is_alive()
            t.join(60)
            print(json.dumps({{"quick": quick, "slow_still_running": slow_still_running, "slow": slow,
                               "after": rows(connect(), "SELECT 2")}}))
        ''')
    finally:
        assert _stop(proc) == 0
    assert out["quick"] == [[1]] and out["slow_still_running"], out
    assert out["slow"]["outcome"] != "finished" and out["slow"]["seconds"] < 40, out  # its bound is 120 s
    assert out["after"] == [[2]]


def test_a_statement_past_its_bound_ends_as_snowflake_ends_one(tmp_path):
    proc, port, _ = _start(tmp_path, "bounded", DECATHLON_SNOWFLAKE_STATEMENT_SECONDS="3")
    try:
        out = client({"port": port, "key": str(tmp_path / "rsa_key.p8"), "dir": tmp_path}, f'''
            c = connect()
            print(json.dumps({{"slow": failure(c, {_HEAVY!r}), "after": rows(c, "SELECT 2")}}))
        ''')
    finally:
        assert _stop(proc) == 0
    kind, errno, sqlstate, message, seconds = out["slow"]
    assert (kind, errno, sqlstate) == ("ProgrammingError", 630, "57014"), out["slow"]
    assert message == "Statement reached its statement or warehouse timeout of 3 second(s) and was canceled."
    assert seconds < 30  # unbounded, it would run for minutes
    assert out["after"] == [[2]]


def test_stage_uploads_need_the_emulators_signature_fit_the_caps_and_stay_in_the_episode(tmp_path):
    """fakesnow's bucket took any PUT from anyone, whole into memory, into a folder of the host's /tmp that nothing
    removed. Now: only the URL the emulator handed out (signed), within the caps, into ROOT/snowflake-stage."""
    before = set(Path(tempfile.gettempdir()).glob("fakesnow_bucket_*"))
    proc, port, _ = _start(tmp_path, "staged", DECATHLON_SNOWFLAKE_STAGE_FILE_BYTES=str(1024 * 1024))
    data = tmp_path / "orders.csv"
    data.write_text("ID,AMOUNT\n1,10\n2,32\n")
    try:
        out = client({"port": port, "key": str(tmp_path / "rsa_key.p8"), "dir": tmp_path}, f'''
            import urllib.request, urllib.error
            def put(path, body):
                req = urllib.request.Request(f"http://127.0.0.1:{port}/fs_bucket/" + path, data=body, method="PUT")
                try:
                    return urllib.request.urlopen(req, timeout=30).status
                except urllib.error.HTTPError as exc:
                    return exc.code
            r = {{"unsigned": put("left-behind-by-the-agent.bin", b"A" * 1000)}}
            c = connect()
            rows(c, "CREATE DATABASE STAGED")
            rows(c, "CREATE TABLE STAGED.PUBLIC.ORDERS (ID INT, AMOUNT INT)")
            rows(c, "CREATE STAGE STAGED.PUBLIC.S")
            r["put"] = rows(c, "PUT file://{data} @STAGED.PUBLIC.S AUTO_COMPRESS=FALSE")[0][6]
            rows(c, "COPY INTO STAGED.PUBLIC.ORDERS FROM @STAGED.PUBLIC.S FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1)")
            r["loaded"] = rows(c, "SELECT SUM(AMOUNT) FROM STAGED.PUBLIC.ORDERS")
            big = "{tmp_path}/big.csv"
            open(big, "wb").write(b"1,1\\n" * 400000)
            r["too_big"] = failure(c, f"PUT file://{{big}} @STAGED.PUBLIC.S AUTO_COMPRESS=FALSE")[0]
            print(json.dumps(r))
        ''')
    finally:
        assert _stop(proc) == 0
    assert out["unsigned"] == 403
    assert out["put"] == "UPLOADED" and out["loaded"] == [[42]]
    assert out["too_big"] in ("OperationalError", "ProgrammingError", "DatabaseError")
    assert (tmp_path / "snowflake-stage").is_dir()
    assert sorted(p.name for p in (tmp_path / "snowflake-stage").rglob("*") if p.is_file()) == ["orders.csv"]
    assert set(Path(tempfile.gettempdir()).glob("fakesnow_bucket_*")) == before
