"""The Snowflake emulator against Snowflake's own recorded answers: each recorded run's `snowflake-*` calls replayed in
order through the stand-in's tool functions (decathlon.standins.snowflake, in its own virtualenv, in-process: see
snowflake_driver.py) on a fresh emulator seeded with what the run showed of the account it met, and each answer
compared with the one the model was shown.

What a run shows, and so what is rebuilt:
- databases and schemas: those its listings show and its queries name;
- a table: its columns from the run's first `describe_table` of it (type, nullability, default, comment), their
  order from a `SELECT *` row where one was printed, a NUMBER's scale from the largest scale its printed values
  have (Snowflake's DATA_TYPE says NUMBER only), the table's comment from `list_tables`. A table the run creates
  itself is left for the replay to make;
- a table's rows: only where a read of that table alone, with no filter and no limit, printed every column of every
  row before the run wrote to it (an answer cut short by the recorder shows only part of them).

How an answer is judged (modulo the data ids the server draws at random and Snowflake's query ids):
- an error against an error: the texts must be equal; an error against a result disagrees;
- listings and `describe_table`: the same rows, as a set (the server's queries have no ORDER BY, and Snowflake
  answered in neither name nor column order);
- a read: the same rows (in order where the query orders them) where every table it reads holds the rows the run
  had, which the replay keeps track of (a table becomes known when an unconditional DELETE or a CREATE empties it,
  and stays known through writes that read only known tables); else both succeeded with the same column names
  where both printed rows; a read of the clock is judged that way too;
- a write: the same text where its count cannot hang on unknown rows (an INSERT … VALUES, DDL), else both
  succeeded;
- a call whose answer hangs on what the run does not show is "cannot rebuild", with why.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from decathlon.emulators.fidelity.emulator import drive, fleet, servers_dir
from decathlon.emulators.fidelity.recorded import Case as BaseCase, Exchange, exchanges

PREFIX = "snowflake-"
DEFAULT_DATABASE, DEFAULT_SCHEMA = "SNOWFLAKE", "PUBLIC"  # Toolathlon's --database/--schema
REPLAYED = {"list_databases", "list_schemas", "list_tables", "describe_table", "read_query", "write_query",
            "create_table", "create_databases", "drop_databases", "create_schemas", "drop_schemas", "create_tables",
            "drop_tables"}
TRUNCATED = re.compile(r"is too long! Only the first \d+ characters are shown here")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
CLOCK = re.compile(r"\b(CURRENT_DATE|CURRENT_TIMESTAMP|CURRENT_TIME|SYSDATE|GETDATE|LOCALTIMESTAMP|NOW)\b", re.I)
PART = r'(?:"[^"]+"|[A-Za-z_][\w$]*)'
REF = re.compile(rf"\b(FROM|JOIN|INTO|UPDATE|TABLE)\s+({PART}(?:\s*\.\s*{PART}){{0,2}})", re.I)
TYPES = {"TEXT": "VARCHAR"}  # DATA_TYPE as INFORMATION_SCHEMA.COLUMNS shows it → a type CREATE TABLE takes


@dataclass
class Column:
    name: str
    type: str
    nullable: bool = True
    default: str | None = None
    comment: str | None = None
    scale: int = 0

    def sql(self) -> str:
        typ = f"NUMBER(38,{self.scale})" if self.type == "NUMBER" else TYPES.get(self.type, self.type)
        out = f"{ident(self.name)} {typ}" + ("" if self.nullable else " NOT NULL")
        if self.default is not None:
            out += f" DEFAULT {self.default}"
        return out + (f" COMMENT {literal(self.comment)}" if self.comment is not None else "")


@dataclass
class Table:
    key: str  # DB.SCHEMA.TABLE
    columns: list[Column] = field(default_factory=list)
    comment: str | None = None
    rows: list[dict[str, Any]] | None = None  # every row, where the run printed them all


@dataclass
class Rebuilt:
    databases: set[str] = field(default_factory=set)
    schemas: set[str] = field(default_factory=set)  # DB.SCHEMA
    tables: dict[str, Table] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)  # table → why it cannot be rebuilt

    def seed(self) -> list[str]:
        out = [f"CREATE DATABASE IF NOT EXISTS {ident(d)}" for d in sorted(self.databases)]
        out += [f"CREATE SCHEMA IF NOT EXISTS {'.'.join(ident(p) for p in s.split('.'))}" for s in sorted(self.schemas)]
        for t in self.tables.values():
            name = ".".join(ident(p) for p in t.key.split("."))
            comment = f" COMMENT = {literal(t.comment)}" if t.comment is not None else ""
            out.append(f"CREATE TABLE {name} ({', '.join(c.sql() for c in t.columns)}){comment}")
            for i in range(0, len(t.rows or []), 500):
                rows = (t.rows or [])[i:i + 500]
                names = ", ".join(ident(c.name) for c in t.columns)
                values = ", ".join("(" + ", ".join(literal(r.get(c.name)) for c in t.columns) + ")" for r in rows)
                out.append(f"INSERT INTO {name} ({names}) VALUES {values}")
        return out


class Case(BaseCase):
    def lines(self, text: str) -> list[str]:
        rows = rows_of(data(normalize(text)))
        if self.how == "rows as a set" and rows is not None:  # sorted, or the diff would be all order
            return _as_set(rows)
        return normalize(text).splitlines()


def ident(name: str) -> str:
    return name if re.fullmatch(r"[A-Z_][A-Z0-9_$]*", name) else '"' + name.replace('"', '""') + '"'


def literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return f"'{value.isoformat(sep=' ') if isinstance(value, dt.datetime) else value.isoformat()}'"
    return "'" + str(value).replace("\\", "\\\\").replace("'", "''") + "'"


def normalize(text: str) -> str:
    return UUID.sub("<id>", text).strip()


# ---- reading what the run showed ----------------------------------------------------------------------------

def data(text: str) -> dict[str, Any] | None:
    """The server's YAML result (`type: data`), or None for anything else (an error, a write's answer)."""
    if not text.startswith("type: data") or TRUNCATED.search(text):
        return None
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return loaded if isinstance(loaded, dict) else None


def rows_of(loaded: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The rows of a result; [] for the server's no-rows line (`status: success`)."""
    if loaded is None or not isinstance(loaded.get("data"), list):
        return None
    rows = [r for r in loaded["data"] if isinstance(r, dict)]
    if rows == [{"status": "success", "message": "Query executed successfully"}]:
        return []
    return rows


def _part(text: str) -> str:
    text = text.strip()
    return text[1:-1].replace('""', '"') if text.startswith('"') else text.upper()


def table_key(ref: str) -> str:
    parts = [_part(p) for p in re.findall(PART, ref)]
    return ".".join([DEFAULT_DATABASE, DEFAULT_SCHEMA][:3 - len(parts)] + parts)


def _plain(sql: str) -> str:
    """The query without comments and string literals (so neither counts as a name or a keyword)."""
    return re.sub(r"--[^\n]*|/\*.*?\*/|'(?:[^']|'')*'", " ", sql, flags=re.S)


@dataclass(frozen=True)
class Statement:
    verb: str  # SELECT, INSERT, UPDATE, DELETE, ALTER, CREATE, …
    target: str | None  # the table written
    reads: frozenset[str]
    text: str

    @property
    def unconditional_delete(self) -> bool:
        return (self.verb == "DELETE" and not re.search(r"\b(WHERE|USING)\b", self.text, re.I)) or self.verb == "TRUNCATE"


def statement(sql: str) -> Statement:
    text = _plain(sql).strip()
    words = re.findall(r"[A-Za-z_]+", text)
    verb = words[0].upper() if words else ""
    if verb == "WITH":
        verb = "SELECT"
    refs = [(m.group(1).upper(), table_key(m.group(2))) for m in REF.finditer(text)]
    target = None
    if verb in ("INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE", "ALTER", "CREATE", "DROP") and refs:
        target = refs[0][1]
        refs = refs[1:]
    reads = frozenset(k for kw, k in refs if kw in ("FROM", "JOIN"))
    return Statement(verb, target, reads, text)


def _scale(value: Any) -> int:
    if isinstance(value, float):
        text = repr(value)
        return len(text.split(".")[1]) if "." in text and "e" not in text else 1
    return 0


def rebuild(calls: list[Exchange]) -> Rebuilt:
    """The account the run met, as far as its outputs show it (see the module's doc)."""
    out = Rebuilt()
    described: dict[str, list[Column]] = {}
    order: dict[str, list[str]] = {}
    values: dict[str, dict[str, list[Any]]] = {}
    full: dict[str, list[dict[str, Any]]] = {}
    comments: dict[str, str | None] = {}
    listed: set[str] = set()
    written: set[str] = set()  # tables the run wrote (or made) so far: later evidence is not the starting state
    made: set[str] = set()
    for ex in calls:
        tool, args = ex.tool[len(PREFIX):], ex.arguments
        loaded = data(ex.answer)
        rows = rows_of(loaded)
        if tool == "list_databases" and rows:
            out.databases |= {str(r["DATABASE_NAME"]) for r in rows if "DATABASE_NAME" in r}
        elif tool == "list_schemas" and rows:
            out.databases.add(str(args.get("database")).upper())
            out.schemas |= {f"{str(args.get('database')).upper()}.{r['SCHEMA_NAME']}" for r in rows
                            if r.get("SCHEMA_NAME") not in (None, "INFORMATION_SCHEMA")}
        elif tool == "list_tables" and rows:
            for r in rows:
                key = f"{r.get('TABLE_CATALOG')}.{r.get('TABLE_SCHEMA')}.{r.get('TABLE_NAME')}"
                if key not in written:
                    listed.add(key)
                    comments.setdefault(key, r.get("COMMENT"))
        elif tool == "describe_table" and rows and loaded is not None:
            key = f"{loaded.get('database')}.{loaded.get('schema')}.{loaded.get('table')}"
            if key not in written and key not in described:
                described[key] = [Column(str(r["COLUMN_NAME"]), str(r["DATA_TYPE"]), r.get("IS_NULLABLE") != "NO",
                                         r.get("COLUMN_DEFAULT"), r.get("COMMENT")) for r in rows]
        elif tool in ("read_query", "write_query", "create_table"):
            st = statement(str(args.get("query") or ""))
            for key in st.reads | ({st.target} if st.target else set()):
                out.databases.add(key.split(".")[0])
                out.schemas.add(".".join(key.split(".")[:2]))
            if st.target is not None and not ex.answer.startswith("Error"):
                if st.verb == "CREATE" and st.target not in described and st.target not in listed:
                    made.add(st.target)
                written.add(st.target)
            if tool != "read_query" or rows is None or len(st.reads) != 1:
                continue
            (key,) = st.reads
            for r in rows:  # a NUMBER's scale is the table's, whenever its values were printed
                for name, value in r.items():
                    values.setdefault(key, {}).setdefault(name, []).append(value)
            if key in written:
                continue
            if rows and re.match(r"SELECT\s+\*\s+FROM", st.text, re.I):
                order.setdefault(key, list(rows[0]))
            if not re.search(r"\b(WHERE|LIMIT|TOP|SAMPLE|HAVING|GROUP|DISTINCT|QUALIFY|JOIN|FETCH|UNION|MINUS|"
                             r"EXCEPT|INTERSECT)\b", st.text, re.I) \
                    and re.fullmatch(rf"SELECT\s+(\*|{PART}(\s*,\s*{PART})*)\s+FROM\s+\S+(\s+ORDER\s+BY\s+[\s\S]*)?;?",
                                     st.text.strip(), re.I):
                full.setdefault(key, rows)
    for key in sorted((listed | set(described) | order.keys()) - made):
        if key not in described:
            out.unknown[key] = "the run never described it (its columns' types are not shown)"
            continue
        columns = {c.name: c for c in described[key]}
        names = order.get(key) or [c.name for c in described[key]]
        if set(names) != set(columns):
            out.unknown[key] = f"a `SELECT *` row shows other columns ({names}) than describe_table ({sorted(columns)})"
            continue
        table = Table(key, [columns[n] for n in names], comments.get(key))
        for c in table.columns:
            if c.type == "NUMBER":
                c.scale = max([_scale(v) for v in values.get(key, {}).get(c.name, [])] or [0])
        rows = full.get(key)
        if rows is not None and all(set(r) == set(columns) for r in rows):
            table.rows = rows
        out.tables[key] = table
        out.databases.add(key.split(".")[0])
        out.schemas.add(".".join(key.split(".")[:2]))
    out.databases.discard(DEFAULT_DATABASE)
    out.schemas = {s for s in out.schemas if s.split(".")[0] != DEFAULT_DATABASE}
    return out


# ---- judging ------------------------------------------------------------------------------------------------

def _columns(rows: list[dict[str, Any]] | None) -> list[str] | None:
    return list(rows[0]) if rows else None


def _as_set(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _ordered(sql: str) -> bool:
    """Whether the outermost query orders its rows (a trailing ORDER BY outside every parenthesis)."""
    depth, tail = 0, ""
    for ch in _plain(sql):
        depth += ch == "("
        depth -= ch == ")"
        tail = tail + ch if depth == 0 else tail
    return re.search(r"\bORDER\s+BY\b", tail, re.I) is not None


class Judge:
    """Judges each call in the run's order, tracking which tables hold the rows the run's own tables held."""

    def __init__(self, rebuilt: Rebuilt) -> None:
        self.rebuilt = rebuilt
        self.exists = set(rebuilt.tables)
        self.known = {k for k, t in rebuilt.tables.items() if t.rows is not None}

    def __call__(self, ex: Exchange, answer: str | None) -> Case:
        tool, recorded = ex.tool[len(PREFIX):], ex.answer
        if tool not in REPLAYED or answer is None:
            return Case(ex, "cannot-rebuild", f"{tool} is not replayed", recorded)
        real, ours = normalize(recorded), normalize(answer)
        real_error, ours_error = real.startswith("Error"), ours.startswith("Error")
        st = statement(str(ex.arguments.get("query") or "")) if tool in ("read_query", "write_query",
                                                                          "create_table") else None
        case = self._judge(ex, tool, st, real, ours, real_error, ours_error)
        if st is not None and not ours_error:
            self._after(st)
        case.recorded, case.emulated = recorded, answer
        return case

    def _judge(self, ex: Exchange, tool: str, st: Statement | None, real: str, ours: str, real_error: bool,
               ours_error: bool) -> Case:
        if st is not None:
            missing = sorted((st.reads | ({st.target} if st.target and st.verb != "CREATE" else set())) - self.exists)
            if missing and not (real_error and ours == real):
                why = "; ".join(f"{k}: {self.rebuilt.unknown.get(k, 'not made earlier in the replay')}" for k in missing)
                return Case(ex, "cannot-rebuild", f"reads what the run does not show ({why})")
        if real_error or ours_error:
            if real_error and ours_error:
                return Case(ex, "agreed" if real == ours else "disagreed", "error text")
            return Case(ex, "disagreed", "outcome")
        if TRUNCATED.search(real):
            return Case(ex, "cannot-rebuild", "the recording keeps only the first part of the answer")
        if tool in ("list_databases", "list_schemas", "list_tables", "describe_table"):
            r, o = data(real), data(ours)
            if r is None or o is None:
                return Case(ex, "agreed" if real == ours else "disagreed", "text")
            unmade = sorted(k for k in (f"{x.get('TABLE_CATALOG')}.{x.get('TABLE_SCHEMA')}.{x.get('TABLE_NAME')}"
                                        for x in (rows_of(r) or []) if tool == "list_tables")
                            if k in self.rebuilt.unknown)
            if unmade:
                return Case(ex, "cannot-rebuild", "lists tables the replay could not make ("
                            + "; ".join(f"{k}: {self.rebuilt.unknown[k]}" for k in unmade) + ")")
            same = {k: v for k, v in r.items() if k not in ("data", "data_id")} == \
                {k: v for k, v in o.items() if k not in ("data", "data_id")} and \
                _as_set(rows_of(r) or []) == _as_set(rows_of(o) or [])
            return Case(ex, "agreed" if same else "disagreed", "rows as a set")
        assert st is not None
        if tool == "read_query":
            r_rows, o_rows = rows_of(data(real)), rows_of(data(ours))
            if r_rows is None or o_rows is None:
                return Case(ex, "disagreed", "outcome")
            if st.reads <= self.known and not CLOCK.search(st.text):
                ordered = _ordered(st.text)
                same = (r_rows == o_rows if ordered else _as_set(r_rows) == _as_set(o_rows)) and \
                    _columns(r_rows) == _columns(o_rows)
                return Case(ex, "agreed" if same else "disagreed", "result content")
            if r_rows and o_rows and _columns(r_rows) != _columns(o_rows):
                return Case(ex, "disagreed", "column names")
            why = "the clock" if CLOCK.search(st.text) else "rows not rebuilt"
            return Case(ex, "agreed", f"outcome ({why})")
        counted = st.verb in ("UPDATE", "DELETE", "MERGE") or (st.verb == "INSERT" and bool(st.reads))
        if not counted or (st.target in self.known and st.reads <= self.known):
            return Case(ex, "agreed" if real == ours else "disagreed", "text")
        return Case(ex, "agreed", "outcome (rows not rebuilt)")

    def _after(self, st: Statement) -> None:
        if st.target is None:
            return
        if st.verb == "DROP":
            self.exists.discard(st.target)
            self.known.discard(st.target)
            return
        if st.verb == "CREATE":
            self.exists.add(st.target)
        if st.unconditional_delete or (st.verb == "CREATE" and st.reads <= self.known):
            self.known.add(st.target)
        elif st.verb in ("INSERT", "UPDATE", "DELETE", "MERGE") and not st.reads <= self.known:
            self.known.discard(st.target)


# ---- replaying -----------------------------------------------------------------------------------------------

def _key(path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


def _drive(key: Path, runs: list[tuple[str, Rebuilt, list[Exchange]]], python: Path,
           timeout: float) -> list[list[dict[str, Any]]]:
    """Every run's calls through one driver process, each run on the emulator given with it; per run, the replies in
    order."""
    job = {"key": str(key), "runs": [
        {"emulator": url, "allowed": sorted(rebuilt.databases), "seed": rebuilt.seed(),
         "calls": [{"tool": c.tool[len(PREFIX):] if c.tool[len(PREFIX):] in REPLAYED else None,
                    "arguments": c.arguments} for c in calls]}
        for url, rebuilt, calls in runs]}
    return drive("the Snowflake stand-in's driver", Path(__file__).with_name("snowflake_driver.py"), python, job,
                 len(runs), timeout, {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(__file__).resolve().parents[3])})


def replay_runs(paths: list[Path], *, servers: Path | None = None, timeout: float = 600) -> list[Case]:
    """The runs' Snowflake calls, each run on a fresh emulator of its own (all started first, then one driver
    process through them in order), each call judged against its recorded answer."""
    servers = servers or servers_dir()
    saas, standin = servers / "saas" / "bin" / "python", servers / "snowflake" / "bin" / "python"
    todo = [(calls, rebuild(calls)) for calls in (exchanges(p, PREFIX) for p in paths) if calls]
    if not todo:
        return []
    with tempfile.TemporaryDirectory(prefix="fidelity-sf-") as root:
        key = Path(root) / "key.p8"
        _key(key)
        with fleet("snowflake", Path(root), len(todo), saas) as emulators:
            replies = _drive(key, [(emu.url, rebuilt, calls) for emu, (calls, rebuilt) in zip(emulators, todo)],
                             standin, timeout)
    cases: list[Case] = []
    for (calls, rebuilt), answers in zip(todo, replies):
        judge = Judge(rebuilt)
        cases.extend(judge(ex, reply.get("answer")) for ex, reply in zip(calls, answers))
    return cases


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)
