"""What BigQuery refuses before running a query, though DuckDB would run it: checked on sqlglot's tree of the user's
GoogleSQL, with the warehouse's schemas, and refused in BigQuery's words at BigQuery's position in the user's text.

DuckDB is more lenient than GoogleSQL: `TIMESTAMP_MILLIS(ts)` on a TIMESTAMP column runs there (sqlglot writes a
cast that accepts it) and `SELECT … ORDER BY x UNION ALL SELECT …` parses in sqlglot. The recorded real runs show
BigQuery refusing both; an agent that learns on the emulator must meet the same refusals.

The rule of this module: refuse only what BigQuery certainly refuses. Where the check cannot decide (a table it
does not know, a script, a construct sqlglot's optimizer fails on, a type it cannot be sure of) the query goes on
unchanged, and DuckDB's own answer stands (decathlon.emulators.gcp.bigquery.errors maps it).
"""
from __future__ import annotations

import re
from typing import Any

from decathlon.emulators.gcp.bigquery.errors import QueryError, invalid_query
from decathlon.emulators.gcp.bigquery.store import Warehouse
from decathlon.emulators.gcp.bigquery.types import sql_type

# Functions of one signature whose argument type BigQuery never coerces from the types listed: the message
# BigQuery gives is then exact (`No matching signature for function F / Argument types / Signature / Argument 1`).
SIGNATURES: dict[str, str] = {
    "TIMESTAMP_SECONDS": "INT64", "TIMESTAMP_MILLIS": "INT64", "TIMESTAMP_MICROS": "INT64",
    "DATE_FROM_UNIX_DATE": "INT64",
    "UNIX_SECONDS": "TIMESTAMP", "UNIX_MILLIS": "TIMESTAMP", "UNIX_MICROS": "TIMESTAMP",
    "UNIX_DATE": "DATE",
}
# The argument types each expected type is certainly not coerced from (GoogleSQL's conversion rules: INT64 widens to
# NUMERIC and FLOAT64, DATE to DATETIME, a string *literal* to a date/time type; nothing narrows). Literals are never
# judged here (their coercions are the subtle ones); DATE/DATETIME → TIMESTAMP is left to DuckDB, being unsure.
NOT_COERCED: dict[str, frozenset[str]] = {
    "INT64": frozenset({"TIMESTAMP", "DATE", "DATETIME", "TIME", "STRING", "BOOL", "FLOAT64", "NUMERIC", "BIGNUMERIC",
                        "BYTES", "JSON", "GEOGRAPHY", "INTERVAL"}),
    "TIMESTAMP": frozenset({"INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "STRING", "BYTES", "TIME", "JSON"}),
    "DATE": frozenset({"INT64", "FLOAT64", "NUMERIC", "BIGNUMERIC", "BOOL", "STRING", "BYTES", "TIME", "JSON"}),
}
# INFORMATION_SCHEMA views the emulator answers, with their columns' types (BigQuery has more columns than these:
# a query naming another is not judged, see _check_names).
INFORMATION_SCHEMA: dict[str, dict[str, str]] = {
    "TABLES": {"table_catalog": "STRING", "table_schema": "STRING", "table_name": "STRING", "table_type": "STRING",
               "is_insertable_into": "STRING", "is_typed": "STRING", "creation_time": "TIMESTAMP", "ddl": "STRING"},
    "COLUMNS": {"table_catalog": "STRING", "table_schema": "STRING", "table_name": "STRING", "column_name": "STRING",
                "ordinal_position": "INT64", "is_nullable": "STRING", "data_type": "STRING", "is_generated": "STRING",
                "is_hidden": "STRING", "is_system_defined": "STRING", "is_partitioning_column": "STRING",
                "clustering_ordinal_position": "INT64", "collation_name": "STRING", "column_default": "STRING"},
    "COLUMN_FIELD_PATHS": {"table_catalog": "STRING", "table_schema": "STRING", "table_name": "STRING",
                           "column_name": "STRING", "field_path": "STRING", "data_type": "STRING",
                           "description": "STRING"},
    "SCHEMATA": {"catalog_name": "STRING", "schema_name": "STRING", "schema_owner": "STRING",
                 "creation_time": "TIMESTAMP", "last_modified_time": "TIMESTAMP", "location": "STRING"},
}
# Names BigQuery gives a table's rows beside its columns: never "unrecognized" here.
PSEUDO_COLUMNS = re.compile(r"^_(PARTITION|TABLE_SUFFIX|FILE_NAME|CHANGE_)", re.I)
SET_OPERATIONS = {"UNION", "EXCEPT", "INTERSECT"}


class Undecided(Exception):
    """The check cannot tell what BigQuery would say: the query goes on unchanged."""


def at(sql: str, offset: int) -> str:
    """BigQuery's `[line:column]` of a character offset in the user's text."""
    line = sql.count("\n", 0, offset) + 1
    return f"[{line}:{offset - (sql.rfind(chr(10), 0, offset) + 1) + 1}]"


def check_syntax(trees: list[Any], sql: str) -> None:
    """What sqlglot parses but GoogleSQL's grammar does not: a set operation after an operand's own ORDER BY or
    LIMIT (a query's ORDER BY and LIMIT end it; an operand that needs them is written in parentheses)."""
    from sqlglot import exp  # type: ignore[import-not-found]

    for tree in trees:
        for node in tree.find_all(exp.SetOperation):
            left = node.this
            if not isinstance(left, (exp.Select, exp.SetOperation)):
                continue  # a parenthesized operand may have its own ORDER BY and LIMIT
            if not any(left.args.get(k) is not None for k in ("order", "limit", "offset")):
                continue
            offset = _keyword_after(sql, left, SET_OPERATIONS)
            if offset is None:
                continue
            word = re.match(r"\w+", sql[offset:])
            raise invalid_query(f"Syntax error: Expected end of input but got keyword "
                                f"{(word.group(0) if word else 'UNION').upper()} at {at(sql, offset)}")


def _keyword_after(sql: str, node: Any, words: set[str]) -> int | None:
    """Where the first of `words` (a keyword token, outside strings and comments) follows everything of `node` that
    carries a position."""
    from sqlglot.tokens import TokenType  # type: ignore[import-not-found]
    from sqlglot.dialects.bigquery import BigQuery  # type: ignore[import-not-found]

    ends = [n.meta["end"] for n in node.walk() if isinstance(n.meta.get("end"), int)]
    if not ends:
        return None
    last = max(ends)
    kinds = {getattr(TokenType, w) for w in words}
    for token in BigQuery().tokenize(sql):
        if token.start > last and token.token_type in kinds:
            return int(token.start)
    return None


def check(trees: list[Any], sql: str, project: str, default_dataset: tuple[str, str] | None, wh: Warehouse) -> None:
    """Names and argument types of a one-statement query against the warehouse's schemas (a script's later statements
    may read what its earlier ones make, or its variables: not judged)."""
    if len(trees) != 1:
        return
    try:
        _check_statement(trees[0], sql, project, default_dataset, wh)
    except Undecided:
        return
    except QueryError:
        raise
    except Exception:  # noqa: BLE001 - sqlglot's optimizer failing on a construct is "cannot decide", never a refusal
        return


def _query_of(tree: Any, exp: Any) -> Any:
    if isinstance(tree, exp.Query):
        return tree
    if isinstance(tree, (exp.Create, exp.Insert)) and isinstance(tree.expression, exp.Query):
        return tree.expression
    raise Undecided()


def _check_statement(tree: Any, sql: str, project: str, default_dataset: tuple[str, str] | None,
                     wh: Warehouse) -> None:
    from sqlglot import exp
    from sqlglot.errors import OptimizeError  # type: ignore[import-not-found]
    from sqlglot.optimizer.qualify import qualify  # type: ignore[import-not-found]

    query = _query_of(tree, exp)
    if default_dataset is not None and default_dataset[0] != project:
        raise Undecided()
    schema, open_columns = _schema(query, project, default_dataset, wh, exp)
    copy = query.copy()
    try:
        qualified = qualify(copy, schema=schema, dialect="bigquery", catalog=project,
                            db=default_dataset[1] if default_dataset else None, validate_qualify_columns=True,
                            quote_identifiers=False)
    except OptimizeError as exc:
        if not open_columns:
            _check_names(query, sql, schema, str(exc), exp)
        raise Undecided() from None
    _check_calls(qualified, sql, schema, exp)


def _schema(query: Any, project: str, default_dataset: tuple[str, str] | None, wh: Warehouse,
            exp: Any) -> tuple[dict[str, Any], bool]:
    """The schemas of every table the query reads, as sqlglot's optimizer takes them ({project: {dataset: {table:
    {column: type}}}}), and whether one of them has columns beyond those known (INFORMATION_SCHEMA). A table this
    warehouse does not have (or one a CTE names) is for sql.py to refuse or resolve: undecided here."""
    ctes = {c.alias_or_name.lower() for c in query.find_all(exp.CTE)}
    schema: dict[str, Any] = {}
    open_columns = False
    for table in query.find_all(exp.Table):
        name, db, catalog = table.name, table.db, table.catalog
        if not name or isinstance(table.this, exp.Func):
            raise Undecided()  # a table-valued function
        if not db:
            if name.lower() in ctes:
                continue
            if default_dataset is None:
                raise Undecided()
            db = default_dataset[1]
        proj = catalog or project
        if name.upper().startswith("INFORMATION_SCHEMA."):
            view = INFORMATION_SCHEMA.get(name.split(".", 1)[1].upper())
            if view is None or (proj, db) not in wh.datasets:
                raise Undecided()
            schema.setdefault(proj, {}).setdefault(db, {})[name] = dict(view)
            open_columns = True
            continue
        t = wh.tables.get((proj, db, name))
        if t is None or not t.materialized:
            raise Undecided()
        schema.setdefault(proj, {}).setdefault(db, {})[name] = {f["name"]: sql_type(f) for f in wh.schema(t)}
    return schema, open_columns


def _field_names(types: dict[str, Any]) -> set[str]:
    """Every column and nested field name of the schemas (a struct's field may be named like a column)."""
    out: set[str] = set()
    for projects in types.values():
        for tables in projects.values():
            for columns in tables.values():
                for column, typ in columns.items():
                    out.add(column.lower())
                    out.update(w.lower() for w in re.findall(r"(\w+)\s+[A-Z]", typ))
    return out


def _check_names(query: Any, sql: str, schema: dict[str, Any], error: str, exp: Any) -> None:
    """`Unrecognized name: x at [l:c]`, where sqlglot could not resolve an unqualified column and the name is
    nothing the query could mean: no column or field of a table it reads, no alias, CTE or UNNEST name of its own,
    no pseudo-column. (An ambiguous name, a select alias BigQuery does or does not see: left to DuckDB.)"""
    m = re.match(r"Column '([^']+)' could not be resolved", error)
    if not m:
        return
    wanted = m.group(1).lower()
    if PSEUDO_COLUMNS.match(wanted) or wanted in _field_names(schema):
        return
    defined = {str(n.alias_or_name).lower() for n in query.find_all(exp.Alias, exp.TableAlias, exp.CTE)}
    defined |= {str(i.name).lower() for a in query.find_all(exp.TableAlias) for i in a.args.get("columns") or []}
    defined |= {str(t.name).lower() for t in query.find_all(exp.Table)}
    if wanted in defined:
        return
    columns = [c for c in query.find_all(exp.Column)
               if not c.table and c.name.lower() == wanted and isinstance(c.this.meta.get("start"), int)]
    if not columns:
        return
    first = min(columns, key=lambda c: c.this.meta["start"])
    start = first.this.meta["start"] - (1 if first.this.args.get("quoted") else 0)
    raise invalid_query(f"Unrecognized name: {first.name} at {at(sql, start)}")


def _column_types(qualified: Any, schema: dict[str, Any], exp: Any) -> dict[int, str]:
    """The type of each column that reads a table of the schema directly (by the node's id): the schema's own word,
    never an inference over expressions."""
    from sqlglot.optimizer.scope import traverse_scope  # type: ignore[import-not-found]

    out: dict[int, str] = {}
    for scope in traverse_scope(qualified):
        for column in scope.columns:
            source = scope.sources.get(column.table)
            if not isinstance(source, exp.Table):
                continue
            tables = schema.get(source.catalog, {}).get(source.db, {})
            columns = next((v for k, v in tables.items() if k.lower() == source.name.lower()), None) or {}
            typ = next((v for k, v in columns.items() if k.lower() == column.name.lower()), None)
            if typ is not None:
                out[id(column)] = typ
    return out


def _type_of(node: Any, columns: dict[int, str], exp: Any) -> str | None:
    """The GoogleSQL type of an argument where it is certain: a table's column, a CAST, a function whose result type
    is fixed. None where it is not (literals included: their coercions are not judged)."""
    if isinstance(node, exp.Column):
        return columns.get(id(node))
    if isinstance(node, (exp.Cast, exp.TryCast)) and node.to is not None:
        return str(node.to.sql(dialect="bigquery")).upper()
    if isinstance(node, exp.Paren):
        return _type_of(node.this, columns, exp)
    fixed = {exp.CurrentTimestamp: "TIMESTAMP", exp.CurrentDate: "DATE", exp.CurrentDatetime: "DATETIME",
             exp.UnixToTime: "TIMESTAMP", exp.UnixSeconds: "INT64", exp.UnixMillis: "INT64", exp.UnixMicros: "INT64",
             exp.UnixDate: "INT64"}
    for kind, typ in fixed.items():
        if type(node) is kind:
            return typ
    return None


def _check_calls(qualified: Any, sql: str, schema: dict[str, Any], exp: Any) -> None:
    columns = _column_types(qualified, schema, exp)
    calls = []
    for node in qualified.find_all(exp.Func):
        name = str(node.meta.get("bigquery_name") or "").upper()
        if name not in SIGNATURES or not isinstance(node.meta.get("start"), int):
            continue
        if isinstance(node.parent, exp.SafeFunc):
            continue  # SAFE.F(x): where BigQuery places that refusal is not known here
        calls.append(node)
    for node in sorted(calls, key=lambda n: n.meta["start"]):
        name = str(node.meta["bigquery_name"]).upper()
        expected = SIGNATURES[name]
        given = _type_of(node.this, columns, exp)
        if given is None or given not in NOT_COERCED[expected]:
            continue
        raise invalid_query(f"No matching signature for function {name}\n  Argument types: {given}\n"
                            f"  Signature: {name}({expected})\n    Argument 1: Unable to coerce type {given} to "
                            f"expected type {expected} at {at(sql, node.meta['start'])}")
