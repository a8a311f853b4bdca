"""The BigQuery emulator against BigQuery's own recorded answers: each recorded run's BigQuery calls replayed in
order, through the real google-cloud-mcp tools, on a fresh emulator seeded with what the run showed of the
warehouse it met, and each answer compared with the one the model was shown.

What a run shows, and so what is rebuilt:
- datasets: those its listings, dataset infos and queries name (with the description the info showed), unless
  the run itself creates one first;
- a table's schema: the columns of a `SELECT *` row the run printed (names in order, types read from the Python
  values: a zoned datetime is a TIMESTAMP, a naive one a DATETIME, a dict a RECORD, …), with the types an
  INFORMATION_SCHEMA.COLUMNS result gave for columns whose values were all NULL. The tables a run meets were made
  before it and it never alters them (a table it creates, loads or replaces is left for the replay to make), so
  evidence from anywhere in the run holds from its start;
- a table's rows: only where a plain `SELECT * FROM t` printed every row (no filter, `Total rows` = rows shown).

How an answer is judged (modulo the project id, which the recordings mask, job ids, host, timings, bytes):
- an error against an error: the texts must be equal (BigQuery's message, reason and position);
- a result against a result: equal texts where every table the query reads was rebuilt with its rows; else the
  outcome only (both succeeded), since the emulator's tables are empty;
- otherwise they disagree; a case whose answer hangs on what the run does not show is "cannot rebuild", with why.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from decathlon.emulators.gcp.hosts import BIGQUERY as BIGQUERY_HOST
from decathlon.emulators.fidelity.emulator import drive, fleet, servers_dir
from decathlon.emulators.fidelity.recorded import Case as BaseCase, Exchange, NotALiteral, exchanges, python_value

PREFIX = "google-cloud-bigquery_"
PROJECT = "fidelity-project"
REPLAYED = {"run_query", "list_datasets", "get_dataset_info", "create_dataset"}
MASKED_PROJECT = re.compile(r"\b[a-z]\*{3,}[a-z0-9]\b")
REPO = Path(__file__).resolve().parents[3]
# Errors that hang on the rows (a bad cast, a division by zero): the seeded tables are empty unless rebuilt.
DATA_ERRORS = re.compile(r"Bad (int64|double|numeric|bool|date|timestamp) value|division by zero|Could not cast|"
                         r"Invalid (timestamp|date|datetime)|Scalar subquery produced more than one element", re.I)
TABLE_REF = re.compile(r"`?(?:([\w*-]+)\.)?([A-Za-z_]\w*)\.([A-Za-z_][\w*-]*)`?")
WRITES = re.compile(r"\b(CREATE(?:\s+OR\s+REPLACE)?(?:\s+TEMP(?:ORARY)?)?\s+(?:TABLE|VIEW)(?:\s+IF\s+NOT\s+EXISTS)?|"
                    r"INSERT\s+(?:INTO\s+)?|DROP\s+(?:TABLE|VIEW)(?:\s+IF\s+EXISTS)?|ALTER\s+TABLE|MERGE\s+(?:INTO\s+)?|"
                    r"TRUNCATE\s+TABLE|UPDATE|DELETE\s+(?:FROM\s+)?)\s*$", re.I)


@dataclass
class Column:
    name: str
    type: str | None = None  # None: every value shown was NULL and no INFORMATION_SCHEMA result said
    mode: str = "NULLABLE"
    fields: list[Column] = field(default_factory=list)  # a RECORD's, read from the dicts shown

    def schema(self) -> list[Any]:
        return [self.name, self.type or "STRING", self.mode, [f.schema() for f in self.fields]]


@dataclass
class Table:
    dataset: str
    table: str
    columns: list[Column] = field(default_factory=list)
    rows: list[dict[str, Any]] | None = None  # every row, where the run printed them all

    @property
    def key(self) -> str:
        return f"{self.dataset}.{self.table}"


@dataclass
class Rebuilt:
    datasets: dict[str, str | None] = field(default_factory=dict)  # id → description
    tables: dict[str, Table] = field(default_factory=dict)
    unknown: dict[str, str] = field(default_factory=dict)  # table → why its schema cannot be rebuilt

    def seed(self) -> dict[str, Any]:
        return {"datasets": [{"id": d, "description": desc} for d, desc in sorted(self.datasets.items())],
                "tables": [{"dataset": t.dataset, "table": t.table, "rows": t.rows,
                            "schema": [c.schema() for c in t.columns]}
                           for t in self.tables.values()]}


class Case(BaseCase):
    def lines(self, text: str) -> list[str]:
        return normalize(text).splitlines()


# ---- reading what the run showed ----------------------------------------------------------------------------

def _type_of(value: Any) -> tuple[str | None, str]:
    """(BigQuery type, mode) of a value as google-cloud-bigquery returns it."""
    if isinstance(value, list):
        inner = next((_type_of(v)[0] for v in value if v is not None), None)
        return inner, "REPEATED"
    if value is None:
        return None, "NULLABLE"
    if isinstance(value, bool):
        return "BOOLEAN", "NULLABLE"
    if isinstance(value, int):
        return "INTEGER", "NULLABLE"
    if isinstance(value, float):
        return "FLOAT", "NULLABLE"
    if isinstance(value, Decimal):
        return "NUMERIC", "NULLABLE"
    if isinstance(value, dt.datetime):
        return ("TIMESTAMP" if value.tzinfo else "DATETIME"), "NULLABLE"
    if isinstance(value, dt.date):
        return "DATE", "NULLABLE"
    if isinstance(value, dt.time):
        return "TIME", "NULLABLE"
    if isinstance(value, dict):
        return "RECORD", "NULLABLE"
    if isinstance(value, bytes):
        return "BYTES", "NULLABLE"
    return "STRING", "NULLABLE"


SQL_TYPES = {"INT64": "INTEGER", "FLOAT64": "FLOAT", "BOOL": "BOOLEAN", "STRING": "STRING", "DATE": "DATE",
             "DATETIME": "DATETIME", "TIMESTAMP": "TIMESTAMP", "TIME": "TIME", "NUMERIC": "NUMERIC", "BYTES": "BYTES",
             "BIGNUMERIC": "BIGNUMERIC", "JSON": "JSON"}


@dataclass
class Result:
    total: int
    rows: list[dict[str, Any]]

    @property
    def complete(self) -> bool:
        return self.total == len(self.rows)


def parse_result(text: str) -> Result | None:
    """The rows google-cloud-mcp printed (`Total rows: N, Returned: M` and at most five `Row i: {…}` lines)."""
    m = re.search(r"^Total rows: (\d+), Returned: (\d+)$", text, re.M)
    if not text.startswith("Query executed successfully.") or not m:
        return None
    rows = []
    for line in re.findall(r"^Row \d+: (\{.*\})$", text, re.M):
        try:
            rows.append(python_value(line))
        except (NotALiteral, ValueError, TypeError):
            return None
    return Result(int(m.group(1)), rows)


# A statement that makes its target (a CREATE TABLE, a CTAS), after any comments that lead it.
CREATES = re.compile(r"(?:\s+|--[^\n]*|/\*.*?\*/)*CREATE\b", re.I | re.S)


def references(sql: str) -> tuple[set[str], set[str]]:
    """(tables read, tables written) as `dataset.table`, by the names a query writes (INFORMATION_SCHEMA aside)."""
    text = re.sub(r"--[^\n]*|/\*.*?\*/|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", " ", sql, flags=re.S)
    read: set[str] = set()
    written: set[str] = set()
    for m in TABLE_REF.finditer(text):
        before = text[:m.start()]
        if not re.search(r"\b(FROM|JOIN|INTO|TABLE|UPDATE|VIEW|EXISTS)\s*$", before, re.I) or \
                re.search(r"\bEXTRACT\s*\(\s*\w+\s+FROM\s*$", before, re.I):
            continue  # not a table's place (EXTRACT(YEAR FROM t.col) names a column)
        dataset, table = m.group(2), m.group(3)
        if table.upper().startswith("INFORMATION_SCHEMA") or dataset.upper() == "INFORMATION_SCHEMA":
            continue
        (written if WRITES.search(before[-80:]) else read).add(f"{dataset}.{table}")
    return read, written


def rebuild(calls: list[Exchange]) -> Rebuilt:
    """The warehouse the run met, as far as its outputs show it (see the module's doc)."""
    out = Rebuilt()
    made: set[str] = set()  # tables the run writes before it reads them: the replay makes those
    read_first: set[str] = set()
    created_datasets: set[str] = set()
    samples: dict[str, list[dict[str, Any]]] = {}
    info_types: dict[str, dict[str, str]] = {}
    full: dict[str, list[dict[str, Any]]] = {}
    columns: dict[str, list[str]] = {}  # a table's columns in order, from a complete INFORMATION_SCHEMA result
    for ex in calls:
        tool, args, text = ex.tool[len(PREFIX):], ex.arguments, ex.answer
        if tool == "list_datasets":
            for d in re.findall(r"^- (\S+) \(Project: ", text, re.M):
                out.datasets.setdefault(d, None)
        elif tool == "get_dataset_info" and text.startswith("Dataset Information"):
            m = re.search(r"^Description: (.*)$", text, re.M)
            desc = m.group(1) if m and m.group(1) != "No description" else None
            out.datasets[str(args.get("dataset_id"))] = desc
        elif tool == "create_dataset":
            if text.startswith("Successfully created") and args.get("dataset_id") not in out.datasets:
                created_datasets.add(str(args.get("dataset_id")))
            elif "Already Exists" in text:
                out.datasets.setdefault(str(args.get("dataset_id")), None)
        elif tool == "load_csv_data":
            key = f"{args.get('dataset_id')}.{args.get('table_id')}"
            if text.startswith("Successfully") and key not in read_first:
                made.add(key)
            elif "does not match Table" in text and key not in made:
                read_first.add(key)  # refused against the table's own schema: it was there
        elif tool == "run_query":
            sql = MASKED_PROJECT.sub(PROJECT, str(args.get("query") or ""))
            read, written = references(sql)
            created = written if CREATES.match(sql) else set()
            # A table the run found missing was not there at the start; one it INSERTs into, UPDATEs or DELETEs from
            # was (only a CREATE makes one, and only when it succeeds).
            absent = {k for k in read if re.search(rf"Not found: Table [^:\s]+:{re.escape(k)}\b", text)}
            if not text.startswith("Error"):
                made |= created - read_first
            read_first |= ((read | (written - created)) - made) - absent
            for key in read | written:
                dataset = key.split(".")[0]
                if dataset not in created_datasets and f"Dataset {dataset} was not found" not in text \
                        and not re.search(rf"Not found: Dataset [^:\s]+:{re.escape(dataset)}\b", text):
                    out.datasets.setdefault(dataset, None)
            result = parse_result(text)
            if result is None:
                continue
            star = re.fullmatch(r"\s*SELECT\s+\*\s+FROM\s+`?(?:[\w*-]+\.)?(\w+)\.(\w+)`?\s*(WHERE|ORDER|LIMIT|$)[\s\S]*",
                                sql, re.I)
            if star and result.rows:
                key = f"{star.group(1)}.{star.group(2)}"
                samples.setdefault(key, []).extend(result.rows)
                if star.group(3) in ("", "ORDER") and result.complete and key not in made:
                    full[key] = result.rows
            info = re.search(r"FROM\s+`?(?:[\w*-]+\.)?(\w+)\.?`?\.?INFORMATION_SCHEMA\.COLUMNS`?[\s\S]*?"
                             r"table_name\s*=\s*'([^']+)'", sql, re.I)
            if info:
                key = f"{info.group(1)}.{info.group(2)}"
                types = info_types.setdefault(key, {})
                for row in result.rows:
                    if "column_name" in row and "data_type" in row:
                        types[str(row["column_name"])] = str(row["data_type"])
                if result.complete and result.rows and "column_name" in result.rows[0] and \
                        "data_type" in result.rows[0] and "ORDER BY ORDINAL" in re.sub(r"\s+", " ", sql.upper()):
                    columns[key] = [str(r["column_name"]) for r in result.rows]
    for key in sorted(read_first - made):
        dataset, table = key.split(".", 1)
        rows = samples.get(key) or ([dict.fromkeys(columns[key])] if key in columns else [])
        if not rows:
            out.unknown[key] = "neither a `SELECT *` row nor a whole INFORMATION_SCHEMA.COLUMNS result shows its columns"
            continue
        t = Table(dataset, table)
        for name in rows[0]:
            typ, mode = None, "NULLABLE"
            for r in rows:
                typ, mode = _type_of(r.get(name))
                if typ is not None:
                    break
            shown = info_types.get(key, {}).get(name)
            if typ is None and shown is not None:
                typ = SQL_TYPES.get(shown.upper().removeprefix("ARRAY<").rstrip(">"))
                mode = "REPEATED" if shown.upper().startswith("ARRAY<") else "NULLABLE"
            column = Column(name, typ, mode)
            if typ == "RECORD":
                value = next(r[name] for r in rows if isinstance(r.get(name), dict))
                column.fields = [Column(k, *_type_of(v)) for k, v in value.items()]
                if any(f.type in (None, "RECORD") for f in column.fields):
                    out.unknown[key] = f"column {name} is a STRUCT whose fields were not all shown"
                    break
            if typ is None and shown is None:
                out.unknown[key] = f"column {name} was NULL wherever it was shown, and no result gave its type"
                break
            t.columns.append(column)
        else:
            t.rows = full.get(key)
            out.tables[key] = t
    return out


# ---- replaying -----------------------------------------------------------------------------------------------

def normalize(text: str) -> str:
    """What may differ between the real service and an emulator and means nothing to the agent."""
    text = MASKED_PROJECT.sub("<project>", text).replace(PROJECT, "<project>")
    text = re.sub(r"^Job ID: \S+$", "Job ID: <job>", text, flags=re.M)
    text = re.sub(r"^Bytes processed: \d+, Execution time: \d+ms$", "Bytes processed: <n>, Execution time: <t>",
                  text, flags=re.M)
    text = re.sub(r"https?://[^/\s]+/bigquery/", f"https://{BIGQUERY_HOST}/bigquery/", text)
    text = re.sub(r"^(Created|Modified): .*$", r"\1: <time>", text, flags=re.M)
    return text.strip()


def _drive(runs: list[tuple[str, Rebuilt, list[Exchange]]], python: Path, timeout: float) -> list[list[dict[str, Any]]]:
    """Every run's calls through one driver process (google-cloud-mcp's import is most of a run's time), each run
    on the emulator given with it; per run, the replies in order."""
    job = {"project": PROJECT, "runs": [
        {"emulator": url, "seed": rebuilt.seed(),
         "calls": [{"tool": "(not replayed)" if by_allow_list(c) else c.tool,
                    "arguments": json.loads(MASKED_PROJECT.sub(PROJECT, json.dumps(c.arguments)))} for c in calls]}
        for url, rebuilt, calls in runs]}
    return drive("google-cloud-mcp's driver", Path(__file__).with_name("gcmcp_driver.py"), python, job, len(runs),
                 timeout, {**os.environ})


def by_allow_list(ex: Exchange) -> bool:
    """Whether the server refused the call by its allowed-resource list (the run's configuration, not BigQuery's
    answer): such a call changed nothing, and is not replayed."""
    return ex.answer.startswith("Access denied:") and "allowed" in ex.answer


def judge(ex: Exchange, answer: str | None, before: set[str], rebuilt: Rebuilt) -> Case:
    tool = ex.tool[len(PREFIX):]
    recorded = ex.answer
    if by_allow_list(ex):
        return Case(ex, "cannot-rebuild", "answered by the server's allowed-resource list (the run's configuration), "
                    "not by BigQuery", recorded)
    if tool not in REPLAYED or answer is None:
        why = {"load_csv_data": "loads a file of the run's own workspace, which the recording does not hold",
               "export_table": "writes to the run's Cloud Storage bucket, whose state the recording does not show"}
        return Case(ex, "cannot-rebuild", why.get(tool, f"{tool} is not replayed"), recorded)
    real, ours = normalize(recorded), normalize(answer)
    if tool == "run_query":
        sql = MASKED_PROJECT.sub(PROJECT, str(ex.arguments.get("query") or ""))
        read, written = references(sql)
        missing = sorted((read | (set() if CREATES.match(sql) else written)) - before)
        real_error = real.startswith("Error executing")
        if missing and not (real_error and ours == real):
            reasons = "; ".join(f"{k}: {rebuilt.unknown.get(k, 'not made earlier in the replay')}" for k in missing)
            return Case(ex, "cannot-rebuild", f"reads what the run does not show ({reasons})", recorded, answer)
        ours_error = ours.startswith("Error executing")
        if real_error and ours_error:
            return Case(ex, "agreed" if real == ours else "disagreed", "error text", recorded, answer)
        if real_error and DATA_ERRORS.search(real):
            return Case(ex, "cannot-rebuild", "BigQuery's error hangs on rows the run does not show", recorded, answer)
        if real_error or ours_error:
            return Case(ex, "disagreed", "outcome", recorded, answer)
        complete = all(rebuilt.tables.get(k) is not None and rebuilt.tables[k].rows is not None for k in read)
        if complete and read and "INFORMATION_SCHEMA" not in sql.upper():
            return Case(ex, "agreed" if real == ours else "disagreed", "result content", recorded, answer)
        return Case(ex, "agreed", "outcome (rows not rebuilt)", recorded, answer)
    return Case(ex, "agreed" if real == ours else "disagreed", "text", recorded, answer)


def replay_runs(paths: list[Path], *, servers: Path | None = None, timeout: float = 600) -> list[Case]:
    """The runs' BigQuery calls, each run on a fresh emulator of its own (all started at once, then one driver
    process through them in order), each call judged against its recorded answer."""
    servers = servers or servers_dir()
    saas, gcmcp = servers / "saas" / "bin" / "python", servers / "google-cloud" / "bin" / "python"
    todo = [(calls, rebuild(calls)) for calls in (exchanges(p, PREFIX) for p in paths) if calls]
    if not todo:
        return []
    with tempfile.TemporaryDirectory(prefix="fidelity-bq-") as root:
        with fleet("gcp", Path(root), len(todo), saas) as emulators:
            replies = _drive([(emu.url, rebuilt, calls) for emu, (calls, rebuilt) in zip(emulators, todo)], gcmcp,
                             timeout)
    cases = []
    for (calls, rebuilt), answers in zip(todo, replies):
        before = set(rebuilt.tables)
        for ex, reply in zip(calls, answers):
            cases.append(judge(ex, reply.get("answer"), before, rebuilt))
            before = set(reply.get("tables") or [])
    return cases


def replay(runs: Path, **kwargs: Any) -> list[Case]:
    return replay_runs(sorted(runs.glob("*.json")), **kwargs)
