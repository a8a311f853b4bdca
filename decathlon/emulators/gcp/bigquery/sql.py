"""GoogleSQL → DuckDB: parse with sqlglot (read="bigquery"), resolve `project.dataset.table` names to this
warehouse's schemas (checking they exist, as BigQuery does before running anything), answer INFORMATION_SCHEMA
from the metadata, patch the semantics sqlglot leaves different, and write DuckDB SQL (write="duckdb")."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from decathlon.emulators.gcp.bigquery import functions, typecheck
from decathlon.emulators.gcp.bigquery.errors import QueryError, invalid_query
from decathlon.emulators.gcp.bigquery.store import Warehouse, schema_name
from decathlon.emulators.gcp.bigquery.types import sql_type

_CREATE_KINDS = {"TABLE": "CREATE_TABLE", "VIEW": "CREATE_VIEW", "SCHEMA": "CREATE_SCHEMA", "FUNCTION": "CREATE_FUNCTION"}
_DROP_KINDS = {"TABLE": "DROP_TABLE", "VIEW": "DROP_VIEW", "SCHEMA": "DROP_SCHEMA"}
_DDL = {"CREATE_TABLE": "CREATE", "CREATE_TABLE_AS_SELECT": "CREATE", "CREATE_VIEW": "CREATE", "CREATE_SCHEMA": "CREATE",
        "DROP_TABLE": "DROP", "DROP_VIEW": "DROP", "DROP_SCHEMA": "DROP", "ALTER_TABLE": "ALTER", "TRUNCATE_TABLE": "TRUNCATE"}


@dataclass
class Statement:
    statement_type: str
    sql: str
    params: list[str] = field(default_factory=list)
    positional: int = 0
    target: tuple[str, str, str] | None = None
    replace: bool = False

    @property
    def returns_rows(self) -> bool:
        return self.statement_type == "SELECT"

    @property
    def dml(self) -> bool:
        return self.statement_type in ("INSERT", "UPDATE", "DELETE", "MERGE")

    @property
    def ddl_operation(self) -> str | None:
        return _DDL.get(self.statement_type)


def _syntax_error(exc: Exception) -> QueryError:
    errs = getattr(exc, "errors", None) or []
    if errs:
        e = errs[0]
        line, col = e.get("line") or 1, e.get("col") or 1
        highlight = (e.get("highlight") or "").strip()
        if highlight:
            col = max(1, col - len(highlight) + 1)
            word = "keyword" if highlight.isalpha() and highlight.isupper() else "identifier" if highlight.isidentifier() else ""
            what = f'{word} {highlight}' if word else f'"{highlight}"'
            return invalid_query(f"Syntax error: Unexpected {what} at [{line}:{col}]")
        return invalid_query(f"Syntax error: {e.get('description') or 'Unexpected end of script'} at [{line}:{col}]")
    return invalid_query(f"Syntax error: {str(exc).splitlines()[0]}")


def translate(sql: str, project: str, default_dataset: tuple[str, str] | None, wh: Warehouse) -> list[Statement]:
    import sqlglot  # type: ignore[import-not-found]
    from sqlglot import exp
    from sqlglot.errors import SqlglotError  # type: ignore[import-not-found]

    if not sql.strip() or not re.sub(r"--[^\n]*|#[^\n]*|/\*.*?\*/", "", sql, flags=re.S).strip().strip(";").strip():
        raise invalid_query("Syntax error: Unexpected end of script at [1:1]")
    try:
        trees = [t for t in sqlglot.parse(sql, read="bigquery") if t is not None]
    except SqlglotError as exc:
        raise _syntax_error(exc) from None
    typecheck.check_syntax(trees, sql)
    script = len(trees) > 1
    udfs = functions.udf_names(trees, exp)
    datasets = {d.lower() for _, d in wh.datasets}
    for tree in trees:
        functions.check(tree, sql, exp, udfs, datasets)
    # what DuckDB would run but BigQuery refuses (names, argument types), on the user's own tree and positions
    typecheck.check(trees, sql, project, default_dataset, wh)
    # a script's temporary tables are named bare (`CREATE TEMP TABLE x …; SELECT … FROM x`): DuckDB's own temp tables
    temps = {_name(t.this, exp) for t in trees if script and isinstance(t, exp.Create) and _temporary(t, exp)}
    out = []
    for tree in trees:
        out.append(_statement(tree, sql, project, default_dataset, wh, script, exp, temps))
    return out


def _temporary(tree: Any, exp: Any) -> bool:
    props = tree.args.get("properties")
    return props is not None and any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)


def _name(node: Any, exp: Any) -> str:
    node = node.this if isinstance(node, exp.Schema) else node
    return "" if node.args.get("db") else str(node.name).lower()


def _statement(tree: Any, sql: str, project: str, default_dataset: tuple[str, str] | None, wh: Warehouse,
               script: bool, exp: Any, temps: set[str] = frozenset()) -> Statement:  # type: ignore[assignment]
    kind = _statement_type(tree, exp)
    if kind is None:
        raise invalid_query(f"Syntax error: Unsupported statement {tree.key.upper()} at [1:1]")
    if isinstance(tree, exp.Create) and tree.args.get("properties") is not None:
        props = tree.args["properties"]
        temporary = any(isinstance(p, exp.TemporaryProperty) for p in props.expressions)
        if temporary and not script:
            raise QueryError(400, "invalid", "Use of CREATE TEMPORARY TABLE requires a script or session")
        keep = [p for p in props.expressions if isinstance(p, exp.TemporaryProperty)]
        props.set("expressions", keep)
        if not keep:
            tree.set("properties", None)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)} | (temps - {""})
    target_node = None
    if isinstance(tree, (exp.Create, exp.Drop)):
        target_node = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    target: tuple[str, str, str] | None = None
    if kind in ("CREATE_SCHEMA", "DROP_SCHEMA"):
        node = tree.this
        parts = [p for p in (node.catalog, node.db, node.name) if p]
        proj, dataset = (parts[0], parts[1]) if len(parts) >= 2 else (project, parts[0] if parts else "")
        exists = (proj, dataset) in wh.datasets
        if kind == "CREATE_SCHEMA" and exists and not tree.args.get("exists"):
            raise QueryError(409, "duplicate", f"Already Exists: Dataset {proj}:{dataset}")
        if kind == "DROP_SCHEMA" and not exists and not tree.args.get("exists"):
            raise QueryError(404, "notFound", f"Not found: Dataset {proj}:{dataset}")
        tree.set("this", exp.Table(db=exp.to_identifier(schema_name(proj, dataset), quoted=True)))
        return Statement(kind, tree.sql(dialect="duckdb"), target=(proj, dataset, ""))
    for table in list(tree.find_all(exp.Table)):
        is_target = table is target_node
        resolved = _resolve(table, project, default_dataset, ctes, exp)
        if resolved is None:
            continue
        if resolved[0] == "__information_schema__":
            table.replace(_information_schema(resolved[1], resolved[2], resolved[3], table.alias, wh, exp))
            continue
        proj, dataset, name = resolved
        if (proj, dataset) not in wh.datasets:
            raise QueryError(404, "notFound", f"Not found: Dataset {proj}:{dataset} was not found in location US")
        if not is_target and (proj, dataset, name) not in wh.tables:
            raise QueryError(404, "notFound", f"Not found: Table {proj}:{dataset}.{name} was not found in location US")
        if is_target:
            target = (proj, dataset, name)
            if kind.startswith("DROP") and target not in wh.tables and not tree.args.get("exists"):
                raise QueryError(404, "notFound", f"Not found: Table {proj}:{dataset}.{name}")
            if kind.startswith("CREATE") and target in wh.tables and not tree.args.get("exists") \
                    and not tree.args.get("replace"):
                raise QueryError(409, "duplicate", f"Already Exists: Table {proj}:{dataset}.{name}")
        elif target is None and kind in ("INSERT", "UPDATE", "DELETE", "MERGE", "ALTER_TABLE", "TRUNCATE_TABLE"):
            target = (proj, dataset, name)
        table.set("catalog", None)
        table.set("db", exp.to_identifier(schema_name(proj, dataset), quoted=True))
        table.set("this", exp.to_identifier(name, quoted=True))
    _patch(tree, exp)
    if kind == "SELECT":
        _name_anonymous(tree, exp)
    params = sorted({p.name for p in tree.find_all(exp.Parameter)})
    positional = len(list(tree.find_all(exp.Placeholder)))
    return Statement(kind, tree.sql(dialect="duckdb"), params, positional, target,
                     replace=bool(tree.args.get("replace")) if isinstance(tree, exp.Create) else False)


def _statement_type(tree: Any, exp: Any) -> str | None:
    if isinstance(tree, exp.Query):
        return "SELECT"
    if isinstance(tree, exp.Insert):
        return "INSERT"
    if isinstance(tree, exp.Update):
        return "UPDATE"
    if isinstance(tree, exp.Delete):
        return "DELETE"
    if isinstance(tree, exp.Merge):
        return "MERGE"
    if isinstance(tree, exp.Create):
        kind = _CREATE_KINDS.get(str(tree.args.get("kind") or "").upper())
        if kind == "CREATE_TABLE" and tree.expression is not None:
            return "CREATE_TABLE_AS_SELECT"
        return kind
    if isinstance(tree, exp.Drop):
        return _DROP_KINDS.get(str(tree.args.get("kind") or "").upper())
    if isinstance(tree, exp.Alter):
        return "ALTER_TABLE"
    if isinstance(tree, exp.TruncateTable):
        return "TRUNCATE_TABLE"
    return None


def _resolve(table: Any, project: str, default_dataset: tuple[str, str] | None, ctes: set[str],
             exp: Any) -> tuple[str, ...] | None:
    catalog, db, name = table.catalog, table.db, table.name
    if not name:
        return None
    if db.upper() == "INFORMATION_SCHEMA":
        return ("__information_schema__", project, catalog, name.upper())
    if name.upper().startswith("INFORMATION_SCHEMA."):
        return ("__information_schema__", catalog or project, db, name.split(".", 1)[1].upper())
    if not db:
        if name.lower() in ctes or isinstance(table.parent, exp.Unnest):
            return None
        if default_dataset is None:
            raise QueryError(400, "invalid", f'Table "{name}" must be qualified with a dataset (e.g. dataset.table).')
        return (default_dataset[0], default_dataset[1], name)
    return (catalog or project, db, name)


def _sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, datetime):
        return f"TIMESTAMPTZ '{value.isoformat()}'"
    return "'" + str(value).replace("'", "''") + "'"


def _information_schema(project: str, scope: str, view: str, alias: str, wh: Warehouse, exp: Any) -> Any:
    import sqlglot

    if scope and not scope.lower().startswith("region-") and (project, scope) not in wh.datasets:
        raise QueryError(404, "notFound", f"Not found: Dataset {project}:{scope} was not found in location US")
    datasets = [d for d in sorted(wh.datasets.values(), key=lambda d: d.dataset_id)
                if d.project == project and not d.hidden and (not scope or scope.lower().startswith("region-")
                                                                or d.dataset_id == scope)]
    columns: list[tuple[str, str]]
    rows: list[tuple[Any, ...]] = []
    if view == "TABLES":
        columns = [("table_catalog", "VARCHAR"), ("table_schema", "VARCHAR"), ("table_name", "VARCHAR"),
                   ("table_type", "VARCHAR"), ("is_insertable_into", "VARCHAR"), ("is_typed", "VARCHAR"),
                   ("creation_time", "TIMESTAMPTZ"), ("ddl", "VARCHAR")]
        for d in datasets:
            for t in wh.tables_of(d.project, d.dataset_id):
                rows.append((d.project, d.dataset_id, t.table_id, "VIEW" if t.kind == "VIEW" else "BASE TABLE",
                             "NO" if t.kind == "VIEW" else "YES", "NO", t.created, _ddl(t, wh)))
    elif view in ("COLUMNS", "COLUMN_FIELD_PATHS"):
        columns = [("table_catalog", "VARCHAR"), ("table_schema", "VARCHAR"), ("table_name", "VARCHAR"),
                   ("column_name", "VARCHAR"), ("ordinal_position", "BIGINT"), ("is_nullable", "VARCHAR"),
                   ("data_type", "VARCHAR"), ("is_generated", "VARCHAR"), ("is_hidden", "VARCHAR"),
                   ("is_system_defined", "VARCHAR"), ("is_partitioning_column", "VARCHAR"),
                   ("clustering_ordinal_position", "BIGINT"), ("collation_name", "VARCHAR"), ("column_default", "VARCHAR")]
        if view == "COLUMN_FIELD_PATHS":
            columns = columns[:4] + [("field_path", "VARCHAR"), ("data_type", "VARCHAR"), ("description", "VARCHAR")]
        for d in datasets:
            for t in wh.tables_of(d.project, d.dataset_id):
                part = (t.time_partitioning or {}).get("field")
                for i, f in enumerate(wh.schema(t), 1):
                    if view == "COLUMN_FIELD_PATHS":
                        rows.append((d.project, d.dataset_id, t.table_id, f["name"], f["name"], sql_type(f),
                                     f.get("description")))
                        continue
                    rows.append((d.project, d.dataset_id, t.table_id, f["name"], i,
                                 "NO" if f.get("mode") in ("REQUIRED", "REPEATED") else "YES", sql_type(f), "NEVER",
                                 "NO", "NO", "YES" if part == f["name"] else "NO", None, "NULL", "NULL"))
    elif view == "SCHEMATA":
        columns = [("catalog_name", "VARCHAR"), ("schema_name", "VARCHAR"), ("schema_owner", "VARCHAR"),
                   ("creation_time", "TIMESTAMPTZ"), ("last_modified_time", "TIMESTAMPTZ"), ("location", "VARCHAR")]
        rows = [(d.project, d.dataset_id, None, d.created, d.modified, d.location) for d in datasets]
    else:
        raise QueryError(400, "invalidQuery", f"Table {view} not found in INFORMATION_SCHEMA", "query")
    names = ", ".join(f'"{c}"' for c, _ in columns)
    if rows:
        values = ", ".join("(" + ", ".join(f"CAST({_sql_literal(v)} AS {typ})" for v, (_, typ) in zip(row, columns)) + ")"
                           for row in rows)
        text = f"SELECT * FROM (VALUES {values}) AS _v({names})"
    else:
        text = "SELECT " + ", ".join(f'CAST(NULL AS {typ}) AS "{c}"' for c, typ in columns) + " WHERE FALSE"
    return exp.Subquery(this=sqlglot.parse_one(text, read="duckdb"),
                        alias=exp.TableAlias(this=exp.to_identifier(alias or view)))


def _ddl(t: Any, wh: Warehouse) -> str:
    if t.kind == "VIEW":
        return f"CREATE VIEW `{t.project}.{t.dataset_id}.{t.table_id}`\nAS {t.view_query or ''};"
    cols = ",\n".join(f"  `{f['name']}` {sql_type(f)}" + (" NOT NULL" if f.get("mode") == "REQUIRED" else "")
                      for f in wh.schema(t))
    return f"CREATE TABLE `{t.project}.{t.dataset_id}.{t.table_id}`\n(\n{cols}\n);"


def _patch(tree: Any, exp: Any) -> None:
    """Where sqlglot's DuckDB output means something else than the GoogleSQL did."""
    for node in list(tree.find_all(exp.SafeFunc)):
        # SAFE.F(x): NULL where F would raise; sqlglot writes DuckDB a `SAFE.` prefix it does not have
        node.replace(exp.Anonymous(this="TRY", expressions=[node.this.copy()]))
    for node in list(tree.find_all(exp.UnixToTime)):
        # TIMESTAMP_SECONDS/MILLIS/MICROS are TIMESTAMPs; DuckDB's EPOCH_MS and MAKE_TIMESTAMP are zone-less
        node.replace(exp.cast(node.copy(), exp.DataType.Type.TIMESTAMPTZ))
    for node in list(tree.find_all(exp.Extract)):
        unit = node.this.name.upper() if node.this is not None else ""
        if unit == "DAYOFWEEK":  # GoogleSQL: Sunday = 1; DuckDB: Sunday = 0
            node.replace(exp.Paren(this=exp.Add(this=node.copy(), expression=exp.Literal.number(1))))
        elif unit == "ISOWEEK":  # DuckDB's WEEK is the ISO week; it has no ISOWEEK
            node.set("this", exp.var("WEEK"))
    for node in list(tree.find_all(exp.TimeToStr)):
        # FORMAT_TIMESTAMP(fmt, ts, zone): sqlglot's DuckDB output drops the zone (the UTC wall clock is formatted)
        zone = node.args.get("zone")
        if zone is not None:
            inner = node.this.this if isinstance(node.this, exp.TsOrDsToTimestamp) else node.this
            node.set("zone", None)
            node.set("this", exp.AtTimeZone(this=exp.cast(inner.copy(), exp.DataType.Type.TIMESTAMPTZ), zone=zone.copy()))
    for node in list(tree.find_all(exp.DataType)):
        if node.this == exp.DataType.Type.DECIMAL and not node.expressions:
            node.set("expressions", [exp.DataTypeParam(this=exp.Literal.number(38)),
                                     exp.DataTypeParam(this=exp.Literal.number(9))])
        elif node.this == exp.DataType.Type.BIGDECIMAL:
            node.set("this", exp.DataType.Type.DECIMAL)
            node.set("expressions", [exp.DataTypeParam(this=exp.Literal.number(38)),
                                     exp.DataTypeParam(this=exp.Literal.number(9))])


def _name_anonymous(tree: Any, exp: Any) -> None:
    """BigQuery calls unnamed result columns f0_, f1_, ...; DuckDB would name them by their expression."""
    select = tree
    while isinstance(select, exp.SetOperation):
        select = select.this
    if not isinstance(select, exp.Select):
        return
    n = 0
    for proj in list(select.expressions):
        if isinstance(proj, (exp.Alias, exp.Column, exp.Star, exp.Dot)):
            continue
        proj.replace(exp.alias_(proj.copy(), f"f{n}_", quoted=True))
        n += 1
